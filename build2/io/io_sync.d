build2/io/io_sync.o: io/io_sync.c io/io_internal.h io/pems_io.h
io/io_internal.h:
io/pems_io.h:
