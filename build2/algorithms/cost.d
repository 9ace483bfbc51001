build2/algorithms/cost.o: algorithms/cost.c algorithms/pems_algorithms.h \
 include/pems.h include/bsp.h algorithms/formats/pems_formats.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
