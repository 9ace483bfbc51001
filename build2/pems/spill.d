build2/pems/spill.o: pems/spill.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h pems/spill.h pems/crc32c.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/spill.h:
pems/crc32c.h:
