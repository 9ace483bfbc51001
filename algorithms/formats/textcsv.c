/*
 * textcsv.c - framing text records and the CSV side of the text records of pems_formats.h:
 * RFC 4180 rows (a field in double quotes may hold the delimiter,
 * newlines and "" for a quote; a quote anywhere else is an error), keys
 * by column with a type, the header row's column names.
 *
 * Framing follows quote parity: a '\n' ends a row unless an odd number
 * of '"' precede it in the row.  That is exact for well-formed rows, and
 * a reader that starts at a known parity anywhere in a file (the sort's
 * slices) frames the same rows; pems_csv_count rejects the rows where
 * parity and RFC 4180 would disagree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/pems_formats.h"


size_t pems_text_frame(const struct pems_textspec *ts, const uint8_t *p, size_t avail,
		       bool *open_quote)
{
	const uint8_t *e;
	bool q = false;
	size_t i;

	*open_quote = false;
	if (ts->kind == PEMS_TEXT_FIXED)
		return avail >= ts->rec_size ? ts->rec_size : 0;
	if (ts->kind == PEMS_TEXT_LINES) {
		e = memchr(p, ts->eol, avail);
		return e ? (size_t)(e - p) + 1 : 0;
	}
	for (i = 0; i < avail; i++) {
		if (p[i] == '"')
			q = !q;
		else if (p[i] == '\n' && !q)
			return i + 1;
	}
	*open_quote = q;
	return 0;
}

/* ---- fields ---- */

struct field {
	const uint8_t *p, *e;	/* quoted: between the quotes, "" kept */
	bool quoted;
};

/* Row without a CRLF's '\r' */
static size_t row_len(const uint8_t *p, size_t len)
{
	return len && p[len - 1] == '\r' ? len - 1 : len;
}

/* The field starting at p[*i]; *i moves past it and its delimiter.
 * Returns 1, 0 at the end of the row (after the last field), -1 when
 * malformed. */
static int next_field(uint8_t sep, const uint8_t *p, size_t len, size_t *i, bool *more,
		      struct field *f)
{
	size_t k = *i;
	const uint8_t *c;

	if (!*more)
		return 0;
	if (k < len && p[k] == '"') {
		for (k++;; k++) {
			if (k >= len)
				return -1;
			if (p[k] != '"')
				continue;
			if (k + 1 < len && p[k + 1] == '"') {
				k++;
				continue;
			}
			break;
		}
		f->p = p + *i + 1;
		f->e = p + k;
		f->quoted = true;
		k++;
		if (k < len && p[k] != sep)
			return -1;
	} else {
		c = memchr(p + k, sep, len - k);
		f->p = p + k;
		f->e = c ? c : p + len;
		f->quoted = false;
		if (memchr(f->p, '"', (size_t)(f->e - f->p)))
			return -1;
		k = (size_t)(f->e - p);
	}
	*more = k < len;	/* a delimiter follows */
	*i = k + 1;
	return 1;
}

int pems_csv_count(const struct pems_textspec *ts, const uint8_t *p, size_t len, unsigned *bad)
{
	struct field f;
	size_t i = 0;
	bool more = true;
	int n = 0, rc;

	len = row_len(p, len);
	while ((rc = next_field(ts->sep, p, len, &i, &more, &f)) > 0)
		n++;
	if (rc < 0) {
		*bad = (unsigned)n + 1;
		return -1;
	}
	return n;
}

/* Column @col of the row, or an empty field when it has fewer. */
static void column(const struct pems_textspec *ts, const uint8_t *p, size_t len, unsigned col,
		   struct field *f)
{
	size_t i = 0;
	bool more = true;
	unsigned n = 0;

	len = row_len(p, len);
	while (next_field(ts->sep, p, len, &i, &more, f) > 0)
		if (n++ == col)
			return;
	f->p = f->e = p;
	f->quoted = false;
}

/* the next byte of a field's value ("" is one quote); false at its end */
static bool value_byte(struct field *f, uint8_t *c)
{
	if (f->p >= f->e)
		return false;
	*c = *f->p++;
	if (f->quoted && *c == '"')
		f->p++;
	return true;
}

static int value_cmp(struct field a, struct field b)
{
	uint8_t x, y;
	bool ha, hb;

	if (!a.quoted && !b.quoted) {
		size_t la = (size_t)(a.e - a.p), lb = (size_t)(b.e - b.p);
		int d = memcmp(a.p, b.p, la < lb ? la : lb);

		return d ? d : (la > lb) - (la < lb);
	}
	for (;;) {
		ha = value_byte(&a, &x);
		hb = value_byte(&b, &y);
		if (!ha || !hb)
			return ha - hb;
		if (x != y)
			return x - y;
	}
}

int pems_csv_cmp(const struct pems_textspec *ts, const uint8_t *a, size_t alen,
		 const uint8_t *b, size_t blen)
{
	struct field fa, fb;
	unsigned i;
	int d;

	for (i = 0; i < ts->nkeys; i++) {
		const struct pems_tkey *k = &ts->key[i];

		column(ts, a, alen, k->col, &fa);
		column(ts, b, blen, k->col, &fb);
		if (k->type == PEMS_TK_GEN)
			d = pems_text_gen_cmp(fa.p, fa.e, fb.p, fb.e);
		else
			d = value_cmp(fa, fb);
		if (d)
			return k->reverse ? -d : d;
	}
	return 0;
}

uint64_t pems_csv_prefix(const struct pems_textspec *ts, const uint8_t *r, size_t len)
{
	const struct pems_tkey *k = &ts->key[0];
	struct field f;
	uint64_t x = 0;
	uint8_t c;
	int i;

	if (!ts->nkeys)
		return 0;
	column(ts, r, len, k->col, &f);
	if (k->type == PEMS_TK_GEN) {
		x = pems_text_gen_prefix(f.p, f.e);
	} else {
		for (i = 0; i < 8; i++)
			x = x << 8 | (value_byte(&f, &c) ? c : 0);
	}
	return k->reverse ? ~x : x;
}

/* ---- --key COL[:TYPE][:DIR] ---- */

/* Column named @name (@nlen bytes) in the header; -1 if none. */
static int header_col(const struct pems_textspec *ts, const uint8_t *hdr, size_t hlen,
		      const char *name, size_t nlen)
{
	struct field f;
	size_t i = 0, j;
	bool more = true;
	int n = 0;
	uint8_t c;

	if (hlen >= 3 && !memcmp(hdr, "\xef\xbb\xbf", 3)) {	/* UTF-8 BOM */
		hdr += 3;
		hlen -= 3;
	}
	hlen = row_len(hdr, hlen);
	while (next_field(ts->sep, hdr, hlen, &i, &more, &f) > 0) {
		for (j = 0; value_byte(&f, &c); j++)
			if (j >= nlen || (uint8_t)name[j] != c)
				break;
		if (j == nlen && f.p >= f.e)
			return n;
		n++;
	}
	return -1;
}

static bool token_is(const char *s, size_t n, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == n && !strncmp(s, *words, n))
			return true;
	return false;
}

int pems_textspec_csv_key(struct pems_textspec *ts, const char *arg, const uint8_t *hdr,
			  size_t hdrlen, char *err, size_t errlen)
{
	static const char *const asc[] = { "asc", NULL }, *const desc[] = { "desc", NULL };
	static const char *const text[] = { "text", "str", NULL };
	static const char *const num[] = { "num", "number", "numeric", NULL };
	struct pems_tkey k;
	size_t len = strlen(arg);
	const char *colon;
	char *end;
	int col;

	if (ts->nkeys >= PEMS_TKEY_MAX) {
		snprintf(err, errlen, "--key %s: too many keys (at most %d)", arg, PEMS_TKEY_MAX);
		return -EINVAL;
	}
	memset(&k, 0, sizeof(k));
	for (int pass = 0; pass < 2; pass++) {	/* DIR, then TYPE, from the right */
		colon = memrchr(arg, ':', len);
		if (!colon)
			break;
		if (pass == 0 && (token_is(colon + 1, len - (size_t)(colon + 1 - arg), asc) ||
				  token_is(colon + 1, len - (size_t)(colon + 1 - arg), desc))) {
			k.reverse = colon[1] == 'd';
			len = (size_t)(colon - arg);
		} else if (token_is(colon + 1, len - (size_t)(colon + 1 - arg), text)) {
			len = (size_t)(colon - arg);
			pass = 2;
		} else if (token_is(colon + 1, len - (size_t)(colon + 1 - arg), num)) {
			k.type = PEMS_TK_GEN;
			len = (size_t)(colon - arg);
			pass = 2;
		}
	}
	col = hdr && ts->header ? header_col(ts, hdr, hdrlen, arg, len) : -1;
	if (col < 0 && len && arg[0] >= '1' && arg[0] <= '9') {
		long v = strtol(arg, &end, 10);

		if ((size_t)(end - arg) == len && v > 0 && v <= 1 << 20)
			col = (int)v - 1;
	}
	if (col < 0) {
		snprintf(err, errlen, "--key %s: no column '%.*s' in the header (give a name or a 1-based number)",
			 arg, (int)len, arg);
		return -EINVAL;
	}
	k.col = (unsigned)col;
	ts->key[ts->nkeys++] = k;
	return 0;
}
