build2/algorithms/formats/csv.o: algorithms/formats/csv.c \
 algorithms/formats/pems_formats.h
algorithms/formats/pems_formats.h:
