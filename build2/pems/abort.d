build2/pems/abort.o: pems/abort.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
