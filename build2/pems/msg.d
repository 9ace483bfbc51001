build2/pems/msg.o: pems/msg.c pems/rt.h pems/api/pems_rt.h include/pems.h \
 include/bsp.h io/pems_io.h pems/ctx.h pems/msg.h pems/tp.h pems/spill.h \
 pems/crc32c.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/ctx.h:
pems/msg.h:
pems/tp.h:
pems/spill.h:
pems/crc32c.h:
