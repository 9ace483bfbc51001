build2/bsp/collectives.o: bsp/collectives.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
