build2/pems/sched.o: pems/sched.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h pems/spill.h pems/crc32c.h pems/fiber.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/spill.h:
pems/crc32c.h:
pems/fiber.h:
