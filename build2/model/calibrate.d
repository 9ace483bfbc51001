build2/model/calibrate.o: model/calibrate.c model/cal.h \
 model/model_internal.h model/pems_model.h include/pems.h include/bsp.h \
 algorithms/pems_algorithms.h algorithms/formats/pems_formats.h \
 gen/pems_gen.h
model/cal.h:
model/model_internal.h:
model/pems_model.h:
include/pems.h:
include/bsp.h:
algorithms/pems_algorithms.h:
algorithms/formats/pems_formats.h:
gen/pems_gen.h:
