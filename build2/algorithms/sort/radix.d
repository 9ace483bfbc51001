build2/algorithms/sort/radix.o: algorithms/sort/radix.c \
 algorithms/sort/radix.h algorithms/formats/pems_formats.h
algorithms/sort/radix.h:
algorithms/formats/pems_formats.h:
