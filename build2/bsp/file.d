build2/bsp/file.o: bsp/file.c pems/api/pems_rt.h include/pems.h \
 include/bsp.h
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
