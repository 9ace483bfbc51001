build2/pems/checkpoint.o: pems/checkpoint.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h pems/spill.h pems/crc32c.h pems/checkpoint.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/spill.h:
pems/crc32c.h:
pems/checkpoint.h:
