/*
 * fuzz_libsvm.c - fuzz target: LIBSVM lines of `pems-run sgd --format
 * libsvm` (algorithms/sgd/sgd.c, included for its static parse_line).
 *
 * Input: bytes 0-1 give --dim (1..4096); the rest is the file, cut at
 * newlines, each line handed to parse_line() with the same row arrays
 * (d entries) the training stream uses.  Data errors are recorded in G
 * as in a real run and cleared per input.
 */
#include "../../algorithms/sgd/sgd.c"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stream s;
	struct row r;
	const char *p, *end, *nl;
	uint32_t dim;

	if (size < 2)
		return 0;
	dim = 1 + ((uint32_t)data[0] | (uint32_t)data[1] << 8) % 4096;
	memset(&s, 0, sizeof(s));
	s.idx = malloc(dim * sizeof(*s.idx));
	s.val = malloc(dim * sizeof(*s.val));
	if (!s.idx || !s.val)
		goto out;
	G.d = dim;
	G.err_set = false;
	end = (const char *)data + size;
	for (p = (const char *)data + 2; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (parse_line(&s, p, nl, (uint64_t)(p - (const char *)data), &r) > 0 &&
		    r.nnz > dim)
			abort();	/* more features than the arrays hold */
	}
out:
	free(s.idx);
	free(s.val);
	return 0;
}
