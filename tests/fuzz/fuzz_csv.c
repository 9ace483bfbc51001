/*
 * fuzz_csv.c - fuzz target: the CSV input of `pems-run aggregate`, through
 * the formats module's parser (algorithms/formats/csv.c).
 *
 * Input: byte 0 picks --key/--value (defaults, column numbers, names,
 * out-of-range numbers); the rest is the file.  Its first line goes
 * through pems_csv_kv_header() as the job reads it, then every
 * following line through pems_csv_kv_row() as the load hands them over
 * (empty lines and lone "\r" skipped).
 */
#include <stdlib.h>
#include <string.h>
#include "formats/pems_formats.h"
#include "fuzz.h"

static const char *const key_sel[] = { NULL, "1", "2", "k", "300", "0" };
static const char *const val_sel[] = { NULL, "2", "1", "v", "x", "18446744073709551617" };

static void rows(const struct pems_csv_kv *c, const char *p, const char *end)
{
	const char *nl;

	for (; p < end; p = nl + 1) {
		struct pems_csv_field tok = { NULL, 0 };
		unsigned col = 0, nf = 0;
		uint64_t key;
		int64_t val;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (nl == p || (nl == p + 1 && *p == '\r'))
			continue;
		if (pems_csv_kv_row(c, p, (size_t)(nl - p), &key, &val, &col, &nf, &tok) &&
		    tok.p && (tok.p < p || tok.p + tok.len > nl))
			abort();	/* the bad field must lie in the line */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1, *end = (const char *)data + size, *nl;
	struct pems_csv_kv c;
	char err[512];

	if (size < 2)
		return 0;
	nl = memchr(text, '\n', size - 1);
	if (pems_csv_kv_header(&c, text, (size_t)((nl ? nl : end) - text),
			       key_sel[data[0] % 6], val_sel[(data[0] / 6) % 6], err,
			       sizeof(err)) == 0 && nl) {
		if (c.key_col >= c.ncols || c.val_col >= c.ncols)
			abort();
		rows(&c, nl + 1, end);
	}
	return 0;
}
