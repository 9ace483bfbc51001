build2/pems/scratch.o: pems/scratch.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/ckpt.h pems/sched_parts.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/ckpt.h:
pems/sched_parts.h:
