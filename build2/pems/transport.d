build2/pems/transport.o: pems/transport.c pems/rt.h pems/api/pems_rt.h \
 include/pems.h include/bsp.h io/pems_io.h pems/ctx.h pems/msg.h \
 pems/tp.h pems/ckpt.h mpi/mpi_plugin.h
pems/rt.h:
pems/api/pems_rt.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
pems/ctx.h:
pems/msg.h:
pems/tp.h:
pems/ckpt.h:
mpi/mpi_plugin.h:
