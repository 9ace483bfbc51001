build2/pems/reg.o: pems/reg.c pems/runtime.h include/pems.h include/bsp.h \
 io/pems_io.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
