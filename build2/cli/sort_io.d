build2/cli/sort_io.o: cli/sort_io.c cli/cli.h include/pems.h \
 include/bsp.h algorithms/pems_algorithms.h \
 algorithms/formats/pems_formats.h gen/pems_gen.h cli/sort_io.h
cli/cli.h:
include/pems.h:
include/bsp.h:
algorithms/pems_algorithms.h:
algorithms/formats/pems_formats.h:
gen/pems_gen.h:
cli/sort_io.h:
