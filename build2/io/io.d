build2/io/io.o: io/io.c io/io_internal.h io/pems_io.h
io/io_internal.h:
io/pems_io.h:
