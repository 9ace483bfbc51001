build2/cli/records.o: cli/records.c cli/cli.h include/pems.h \
 include/bsp.h algorithms/pems_algorithms.h \
 algorithms/formats/pems_formats.h
cli/cli.h:
include/pems.h:
include/bsp.h:
algorithms/pems_algorithms.h:
algorithms/formats/pems_formats.h:
