build2/algorithms/sort/sort_cost.o: algorithms/sort/sort_cost.c \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
