build2/pems/config.o: pems/config.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/config.h pems/msg.h \
 pems/spill.h pems/crc32c.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/config.h:
pems/msg.h:
pems/spill.h:
pems/crc32c.h:
