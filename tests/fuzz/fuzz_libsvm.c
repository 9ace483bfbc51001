/*
 * fuzz_libsvm.c - fuzz target: LIBSVM lines of `pems-run sgd --format
 * libsvm`, through the formats module's parser (algorithms/formats/libsvm.c).
 *
 * Input: bytes 0-1 give --dim (1..4096); the rest is the file, cut at
 * newlines, each line handed to pems_libsvm_parse() with row arrays of
 * dim entries, as the training stream does.
 */
#include <stdlib.h>
#include <string.h>
#include "formats/pems_formats.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pems_libsvm_row r;
	const char *p, *end, *nl;
	char err[256];
	uint32_t dim;

	if (size < 2)
		return 0;
	dim = 1 + ((uint32_t)data[0] | (uint32_t)data[1] << 8) % 4096;
	r.idx = malloc(dim * sizeof(*r.idx));
	r.val = malloc(dim * sizeof(*r.val));
	if (!r.idx || !r.val)
		goto out;
	end = (const char *)data + size;
	for (p = (const char *)data + 2; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (pems_libsvm_parse(p, nl, dim, &r, err, sizeof(err)) > 0 && r.nnz > dim)
			abort();	/* more features than the arrays hold */
	}
out:
	free(r.idx);
	free(r.val);
	return 0;
}
