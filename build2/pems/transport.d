build2/pems/transport.o: pems/transport.c pems/runtime.h include/pems.h \
 include/bsp.h io/pems_io.h mpi/mpi_plugin.h
pems/runtime.h:
include/pems.h:
include/bsp.h:
io/pems_io.h:
mpi/mpi_plugin.h:
