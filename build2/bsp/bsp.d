build2/bsp/bsp.o: bsp/bsp.c pems/runtime.h include/pems.h include/bsp.h \
 io/pems_io.h include/bsp.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
include/bsp.h:
