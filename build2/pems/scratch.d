build2/pems/scratch.o: pems/scratch.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
