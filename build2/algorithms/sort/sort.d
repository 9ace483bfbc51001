build2/algorithms/sort/sort.o: algorithms/sort/sort.c \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h algorithms/sort/radix.h \
 algorithms/formats/pems_formats.h algorithms/job.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
algorithms/sort/radix.h:
algorithms/formats/pems_formats.h:
algorithms/job.h:
