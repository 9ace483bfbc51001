build2/algorithms/sgd/sgd_stream.o: algorithms/sgd/sgd_stream.c \
 algorithms/sgd/sgd_internal.h algorithms/pems_algorithms.h \
 include/pems.h include/bsp.h algorithms/formats/pems_formats.h \
 algorithms/formats/pems_formats.h
algorithms/sgd/sgd_internal.h:
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
algorithms/formats/pems_formats.h:
