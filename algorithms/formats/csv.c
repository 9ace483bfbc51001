/*
 * csv.c - CSV lines: fields (RFC 4180 quoting, no newline inside a
 * field), decimal integers, and the (key, value) rows of pems_aggregate.
 * Unquoting copies nothing: a quoted field is handed out between its
 * quotes, "" left as it is (keys and values are digits: a quoted one
 * holding "" is not a number anyway).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "formats/pems_formats.h"

/* the field of a quoted one starting at s[i] == '"': its end in *j
 * (the closing quote); false when unterminated */
static bool quoted_end(const char *s, size_t len, size_t i, size_t *j)
{
	size_t k = i + 1;

	for (;;) {
		if (k >= len)
			return false;
		if (s[k] == '"') {
			if (k + 1 < len && s[k + 1] == '"') {
				k += 2;
				continue;
			}
			*j = k;
			return true;
		}
		k++;
	}
}

int pems_csv_split(const char *s, size_t len, struct pems_csv_field *f, unsigned maxf,
		   unsigned *nf_total, unsigned *bad)
{
	struct pems_csv_field cur;
	size_t i = 0, j;
	unsigned n = 0;

	if (len && s[len - 1] == '\r')
		len--;
	for (;;) {
		if (i < len && s[i] == '"') {
			if (!quoted_end(s, len, i, &j)) {
				*bad = n + 1;
				return -1;
			}
			cur.p = s + i + 1;
			cur.len = j - i - 1;
			i = j + 1;
			if (i < len && s[i] != ',') {
				*bad = n + 1;
				return -1;
			}
		} else {
			const char *c = memchr(s + i, ',', len - i);

			j = c ? (size_t)(c - s) : len;
			cur.p = s + i;
			cur.len = j - i;
			i = j;
		}
		if (n < maxf)
			f[n] = cur;
		n++;
		if (i >= len)
			break;
		i++;	/* the comma */
	}
	*nf_total = n;
	return (int)(n < maxf ? n : maxf);
}

bool pems_parse_u64(const char *p, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!len || len > 20)
		return false;
	for (i = 0; i < len; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

bool pems_parse_i64(const char *p, size_t len, int64_t *out)
{
	bool neg = len && p[0] == '-';
	uint64_t u;

	if (len && (p[0] == '-' || p[0] == '+')) {
		p++;
		len--;
	}
	if (!pems_parse_u64(p, len, &u))
		return false;
	if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

int pems_csv_kv_row(const struct pems_csv_kv *c, const char *s, size_t len, uint64_t *key,
		    int64_t *val, unsigned *col, unsigned *nf, struct pems_csv_field *tok)
{
	struct pems_csv_field f[PEMS_CSV_MAX_COLS + 1];
	unsigned need = (c->key_col > c->val_col ? c->key_col : c->val_col) + 1;
	unsigned total = 0;
	int n;

	n = pems_csv_split(s, len, f, c->ncols + 1, &total, col);
	if (n < 0)
		return PEMS_CSV_QUOTE;
	*nf = total;
	if (total < c->ncols || (unsigned)n < need) {
		*col = total + 1;
		return PEMS_CSV_FEW;
	}
	if (total > c->ncols) {
		*col = c->ncols + 1;
		return PEMS_CSV_MANY;
	}
	if (!pems_parse_u64(f[c->key_col].p, f[c->key_col].len, key)) {
		*col = c->key_col + 1;
		*tok = f[c->key_col];
		return PEMS_CSV_KEY;
	}
	if (!pems_parse_i64(f[c->val_col].p, f[c->val_col].len, val)) {
		*col = c->val_col + 1;
		*tok = f[c->val_col];
		return PEMS_CSV_VALUE;
	}
	return PEMS_CSV_OK;
}

/* column @want (a header name, else a 1-based index) of the @n fields */
static int find_col(const struct pems_csv_field *f, unsigned n, const char *want,
		    const char *what, unsigned *out, char *err, size_t errlen)
{
	uint64_t idx;
	unsigned i;

	for (i = 0; i < n; i++) {
		if (strlen(want) == f[i].len && !memcmp(want, f[i].p, f[i].len)) {
			*out = i;
			return 0;
		}
	}
	if (pems_parse_u64(want, strlen(want), &idx)) {
		if (idx >= 1 && idx <= n) {
			*out = (unsigned)idx - 1;
			return 0;
		}
		snprintf(err, errlen, "%s column %s does not exist: the header has %u columns",
			 what, want, n);
		return -EINVAL;
	}
	snprintf(err, errlen, "no %s column '%s' in the header (line 1)", what, want);
	return -EINVAL;
}

int pems_csv_kv_header(struct pems_csv_kv *c, const char *s, size_t len,
		       const char *key_col, const char *val_col, char *err, size_t errlen)
{
	struct pems_csv_field f[PEMS_CSV_MAX_COLS];
	unsigned nf = 0, bad;
	int n, rc;

	n = pems_csv_split(s, len, f, PEMS_CSV_MAX_COLS, &nf, &bad);
	if (n < 0) {
		snprintf(err, errlen, "line 1, column %u: malformed quoted field in the header",
			 bad);
		return -EINVAL;
	}
	if (nf > PEMS_CSV_MAX_COLS) {
		snprintf(err, errlen, "line 1: more than %d columns", PEMS_CSV_MAX_COLS);
		return -EINVAL;
	}
	c->ncols = nf;
	rc = find_col(f, nf, key_col ? key_col : "key", "key", &c->key_col, err, errlen);
	if (!rc)
		rc = find_col(f, nf, val_col ? val_col : "value", "value", &c->val_col, err,
			      errlen);
	return rc;
}
