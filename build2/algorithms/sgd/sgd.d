build2/algorithms/sgd/sgd.o: algorithms/sgd/sgd.c \
 algorithms/sgd/sgd_internal.h algorithms/pems_algorithms.h \
 include/pems.h include/bsp.h algorithms/formats/pems_formats.h \
 algorithms/job.h
algorithms/sgd/sgd_internal.h:
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
algorithms/job.h:
