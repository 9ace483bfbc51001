build2/cli/opts.o: cli/opts.c cli/cli.h include/pems.h include/bsp.h \
 algorithms/pems_algorithms.h algorithms/formats/pems_formats.h \
 gen/pems_gen.h
cli/cli.h:
include/pems.h:
include/bsp.h:
algorithms/pems_algorithms.h:
algorithms/formats/pems_formats.h:
gen/pems_gen.h:
