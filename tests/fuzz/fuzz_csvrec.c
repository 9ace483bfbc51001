/*
 * fuzz_csvrec.c - fuzz target: CSV records as `pems-run aggregate --by`
 * reads them (pems_csv_record, algorithms/formats/csv_record.c) and the
 * typed fields and keys made of them (algorithms/groupby/value.c).
 *
 * Input: byte 0 picks the delimiter (',', ';', tab, '|') and whether the
 * buffer is the end of the file; the rest is walked record by record.
 * Checked: a record's length lies in (0, rest]; every field lies in the
 * record or in the scratch copy; a field's key encoding decodes to the
 * same bytes (str), the same integer (i64) or the same double (f64); the
 * order encodings of numbers invert.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "formats/pems_formats.h"
#include "groupby/gb.h"
#include "fuzz.h"

#define MAXF 64

static void check_field(const struct pems_csv_field *f)
{
	static uint8_t key[2 * 65536 + 16];
	static char scratch[65536 + 16];
	struct gb_val v, back;
	enum gb_type t;

	if (f->len > 65536)
		return;
	for (t = GB_STR; t <= GB_F64; t++) {
		size_t n;

		if (!gb_parse_field(f->p, f->len, t, "NA", 2, &v))
			continue;
		n = gb_key_put(key, t, &v);
		if (gb_key_get(key, t, &back, scratch) != n || back.null != v.null)
			abort();
		if (v.null)
			continue;
		if (t == GB_STR && (back.len != v.len || memcmp(back.s, v.s, v.len)))
			abort();
		if (t == GB_I64 && (back.i != v.i || gb_unord_i64(gb_ord_i64(v.i)) != v.i))
			abort();
		if (t == GB_F64 && !isnan(v.d) && back.d != v.d)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char delims[] = { ',', ';', '\t', '|' };
	static char scratch[1 << 20];
	struct pems_csv_field f[MAXF];
	const char *s = (const char *)data + 1;
	size_t left = size ? size - 1 : 0;
	bool last;
	char delim;

	if (!size || left > sizeof(scratch))
		return 0;
	delim = delims[data[0] & 3];
	last = data[0] & 4;
	while (left) {
		unsigned nf = 0, lines = 0, bad = 0, i;
		enum pems_csv_rec_err err;
		long r = pems_csv_record(s, left, last, delim, f, MAXF, &nf, scratch, &lines, &err,
					 &bad);

		if (r == 0 || r == -1)
			break;
		if (r < 0 || (size_t)r > left || nf == 0)
			abort();
		for (i = 0; i < nf && i < MAXF; i++) {
			bool in_rec = f[i].p >= s && f[i].p + f[i].len <= s + r;
			bool in_scratch = f[i].p >= scratch && f[i].p + f[i].len <= scratch + r;

			if (!in_rec && !in_scratch)
				abort();
			check_field(&f[i]);
		}
		s += r;
		left -= (size_t)r;
	}
	return 0;
}
