build2/pems/fileio.o: pems/fileio.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
