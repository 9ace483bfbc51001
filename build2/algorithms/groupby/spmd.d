build2/algorithms/groupby/spmd.o: algorithms/groupby/spmd.c \
 algorithms/groupby/gb.h algorithms/pems_algorithms.h include/pems.h \
 include/bsp.h algorithms/formats/pems_formats.h
algorithms/groupby/gb.h:
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
