build2/io/io_aio.o: io/io_aio.c io/io_internal.h io/pems_io.h
io/io_internal.h:
io/pems_io.h:
