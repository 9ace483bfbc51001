build2/algorithms/formats/libsvm.o: algorithms/formats/libsvm.c \
 algorithms/formats/pems_formats.h
algorithms/formats/pems_formats.h:
