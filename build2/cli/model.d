build2/cli/model.o: cli/model.c cli/cli.h include/pems.h include/bsp.h \
 algorithms/pems_algorithms.h algorithms/formats/pems_formats.h \
 gen/pems_gen.h model/pems_model.h
cli/cli.h:
include/pems.h:
include/bsp.h:
algorithms/pems_algorithms.h:
algorithms/formats/pems_formats.h:
gen/pems_gen.h:
model/pems_model.h:
