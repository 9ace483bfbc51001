build2/pems/reg.o: pems/reg.c pems/rt.h pems/api/pems_rt.h include/pems.h \
 include/bsp.h io/pems_io.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
