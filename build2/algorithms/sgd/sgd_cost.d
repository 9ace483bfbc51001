build2/algorithms/sgd/sgd_cost.o: algorithms/sgd/sgd_cost.c \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
