build2/pems/heap.o: pems/heap.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
