build2/pems/sched.o: pems/sched.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/config.h pems/ctx.h \
 pems/msg.h pems/coll.h pems/tp.h pems/ckpt.h pems/sched_parts.h \
 pems/spill.h pems/crc32c.h pems/steps.h pems/fiber.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/config.h:
pems/ctx.h:
pems/msg.h:
pems/coll.h:
pems/tp.h:
pems/ckpt.h:
pems/sched_parts.h:
pems/spill.h:
pems/crc32c.h:
pems/steps.h:
pems/fiber.h:
