build2/algorithms/formats/textcsv.o: algorithms/formats/textcsv.c \
 algorithms/formats/pems_formats.h
algorithms/formats/pems_formats.h:
