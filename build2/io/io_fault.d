build2/io/io_fault.o: io/io_fault.c io/io_internal.h io/pems_io.h
io/io_internal.h:
io/pems_io.h:
