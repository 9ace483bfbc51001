build2/pems/crc32c.o: pems/crc32c.c pems/crc32c.h
pems/crc32c.h:
