build2/bsp/bsp.o: bsp/bsp.c pems/api/pems_rt.h include/pems.h \
 include/bsp.h include/bsp.h
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
include/bsp.h:
