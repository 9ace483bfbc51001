build2/pems/checkpoint.o: pems/checkpoint.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/ctx.h pems/msg.h \
 pems/tp.h pems/ckpt.h pems/sched_parts.h pems/spill.h pems/crc32c.h \
 pems/checkpoint.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/ctx.h:
pems/msg.h:
pems/tp.h:
pems/ckpt.h:
pems/sched_parts.h:
pems/spill.h:
pems/crc32c.h:
pems/checkpoint.h:
