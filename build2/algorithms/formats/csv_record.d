build2/algorithms/formats/csv_record.o: algorithms/formats/csv_record.c \
 algorithms/formats/pems_formats.h
algorithms/formats/pems_formats.h:
