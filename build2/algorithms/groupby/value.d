build2/algorithms/groupby/value.o: algorithms/groupby/value.c \
 algorithms/groupby/gb.h algorithms/pems_algorithms.h include/pems.h \
 include/bsp.h algorithms/formats/pems_formats.h
algorithms/groupby/gb.h:
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
