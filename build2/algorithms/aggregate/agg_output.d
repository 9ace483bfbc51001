build2/algorithms/aggregate/agg_output.o: \
 algorithms/aggregate/agg_output.c algorithms/pems_algorithms.h \
 include/pems.h include/bsp.h algorithms/formats/pems_formats.h \
 algorithms/aggregate/agg_internal.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
algorithms/aggregate/agg_internal.h:
