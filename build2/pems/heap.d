build2/pems/heap.o: pems/heap.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
