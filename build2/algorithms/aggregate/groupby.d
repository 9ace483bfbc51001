build2/algorithms/aggregate/groupby.o: algorithms/aggregate/groupby.c \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h algorithms/aggregate/agg_internal.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
algorithms/aggregate/agg_internal.h:
