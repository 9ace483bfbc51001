build2/algorithms/sort/textsort_run.o: algorithms/sort/textsort_run.c \
 algorithms/pems_algorithms.h include/pems.h include/bsp.h \
 algorithms/formats/pems_formats.h algorithms/sort/tsort.h
algorithms/pems_algorithms.h:
include/pems.h:
include/bsp.h:
algorithms/formats/pems_formats.h:
algorithms/sort/tsort.h:
