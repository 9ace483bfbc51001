build2/io/io_uring.o: io/io_uring.c io/io_internal.h io/pems_io.h
io/io_internal.h:
io/pems_io.h:
