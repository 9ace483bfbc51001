build2/algorithms/output.o: algorithms/output.c \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
