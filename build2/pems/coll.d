build2/pems/coll.o: pems/coll.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/ctx.h pems/coll.h \
 pems/tp.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/ctx.h:
pems/coll.h:
pems/tp.h:
