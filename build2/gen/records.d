build2/gen/records.o: gen/records.c gen/gen_internal.h gen/pems_gen.h \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h
gen/gen_internal.h:
gen/pems_gen.h:
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
