build2/bsp/file.o: bsp/file.c pems/runtime.h include/pems.h include/bsp.h \
 io/pems_io.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
