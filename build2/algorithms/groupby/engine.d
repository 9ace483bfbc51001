build2/algorithms/groupby/engine.o: algorithms/groupby/engine.c \
 algorithms/groupby/gb.h algorithms/pems_algorithms.h include/pems.h \
 include/bsp.h algorithms/formats/pems_formats.h
algorithms/groupby/gb.h:
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
