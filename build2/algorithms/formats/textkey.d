build2/algorithms/formats/textkey.o: algorithms/formats/textkey.c \
 algorithms/formats/pems_formats.h
algorithms/formats/pems_formats.h:
