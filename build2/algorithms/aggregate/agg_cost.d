build2/algorithms/aggregate/agg_cost.o: algorithms/aggregate/agg_cost.c \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
