build2/algorithms/formats/record.o: algorithms/formats/record.c \
 algorithms/formats/pems_formats.h
algorithms/formats/pems_formats.h:
