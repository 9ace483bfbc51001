build2/pems/stats.o: pems/stats.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/tp.h pems/sched_parts.h \
 pems/spill.h pems/crc32c.h pems/steps.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/tp.h:
pems/sched_parts.h:
pems/spill.h:
pems/crc32c.h:
pems/steps.h:
