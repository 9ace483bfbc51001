build2/pems/spill.o: pems/spill.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/spill.h pems/crc32c.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/spill.h:
pems/crc32c.h:
