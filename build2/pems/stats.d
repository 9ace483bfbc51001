build2/pems/stats.o: pems/stats.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h pems/spill.h pems/crc32c.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/spill.h:
pems/crc32c.h:
