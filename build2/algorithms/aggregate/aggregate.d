build2/algorithms/aggregate/aggregate.o: algorithms/aggregate/aggregate.c \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h algorithms/aggregate/agg_internal.h \
 algorithms/formats/pems_formats.h algorithms/job.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
algorithms/aggregate/agg_internal.h:
algorithms/formats/pems_formats.h:
algorithms/job.h:
