build2/bsp/bsp98.o: bsp/bsp98.c include/bsp.h
include/bsp.h:
