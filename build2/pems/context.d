build2/pems/context.o: pems/context.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/config.h pems/ctx.h \
 pems/tp.h pems/spill.h pems/crc32c.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/config.h:
pems/ctx.h:
pems/tp.h:
pems/spill.h:
pems/crc32c.h:
