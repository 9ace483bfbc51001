build2/pems/fileio.o: pems/fileio.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/ctx.h pems/ckpt.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/ctx.h:
pems/ckpt.h:
