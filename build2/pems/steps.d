build2/pems/steps.o: pems/steps.c pems/steps.h include/pems.h \
 include/bsp.h
pems/steps.h:
include/pems.h:
include/bsp.h:
