build2/cli/opts.o: cli/opts.c cli/cli.h include/pems.h include/bsp.h \
 algorithms/pems_algorithms.h algorithms/formats/pems_formats.h
cli/cli.h:
include/pems.h:
include/bsp.h:
algorithms/pems_algorithms.h:
algorithms/formats/pems_formats.h:
