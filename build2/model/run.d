build2/model/run.o: model/run.c model/model_internal.h model/pems_model.h \
 include/pems.h include/bsp.h algorithms/pems_algorithms.h \
 algorithms/formats/pems_formats.h
model/model_internal.h:
model/pems_model.h:
include/pems.h:
include/bsp.h:
algorithms/pems_algorithms.h:
algorithms/formats/pems_formats.h:
