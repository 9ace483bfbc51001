build2/bsp/collectives.o: bsp/collectives.c pems/api/pems_rt.h \
 include/pems.h include/bsp.h
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
