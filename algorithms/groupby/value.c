/*
 * value.c - typed fields: parsing (int64; float64 exactly as strtod),
 * the order-preserving key encoding, and the text of results.
 *
 * Key encoding of one column (concatenated for several; memcmp of two
 * encodings orders as SQL's ORDER BY with NULLS LAST, and equal
 * encodings are equal keys):
 *   NULL   0x02
 *   I64    0x01, then x XOR 2^63 as 8 bytes big-endian
 *   F64    0x01, then the IEEE bits, sign bit flipped for x >= 0 and all
 *          bits flipped for x < 0, big-endian (-0 is stored as +0)
 *   STR    0x01, then the bytes with 0x00 written as 0x00 0x01, then
 *          0x00 0x00 (a prefix sorts first, as in memcmp)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groupby/gb.h"

static const double P10[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
	1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

/* strtod on a copy of [p, p+len), which must be all of the number */
static bool slow_f64(const char *p, size_t len, double *out)
{
	char buf[512], *end;

	if (!len || len >= sizeof(buf) || p[0] == ' ' || p[0] == '\t')
		return false;
	memcpy(buf, p, len);
	buf[len] = '\0';
	*out = strtod(buf, &end);
	return end == buf + len;
}

/* Clinger's fast path: at most 19 digits with a mantissa below 2^53 and
 * a power of ten up to 22 are exact, so one correctly rounded multiply
 * or divide gives what strtod gives; anything else goes to strtod. */
static bool parse_f64(const char *p, size_t len, double *out)
{
	uint64_t m = 0;
	unsigned nd = 0, digits = 0;
	int e = 0, ex = 0, esign = 1;
	bool neg = false, dot = false;
	size_t i = 0;

	if (len && (p[0] == '-' || p[0] == '+'))
		neg = p[i++] == '-';
	for (; i < len; i++) {
		unsigned d = (unsigned)(p[i] - '0');

		if (d <= 9) {
			digits++;
			if (nd < 19) {
				m = m * 10 + d;
				if (m)
					nd++;
				if (dot)
					e--;
			} else if (!dot) {
				e++;
			}
		} else if (p[i] == '.' && !dot) {
			dot = true;
		} else {
			break;
		}
	}
	if (i < len && (p[i] == 'e' || p[i] == 'E')) {
		size_t j = i + 1;

		if (j < len && (p[j] == '-' || p[j] == '+'))
			esign = p[j++] == '-' ? -1 : 1;
		if (j == len)
			return false;
		for (; j < len && ex < 100000; j++) {
			unsigned d = (unsigned)(p[j] - '0');

			if (d > 9)
				return slow_f64(p, len, out);
			ex = ex * 10 + (int)d;
		}
		i = j;
	}
	if (i != len || nd >= 19 || m >> 53)
		return slow_f64(p, len, out);
	if (!digits)
		return false;
	e += esign * ex;
	if (e < -22 || e > 22)
		return slow_f64(p, len, out);
	*out = e < 0 ? (double)m / P10[-e] : (double)m * P10[e];
	if (neg)
		*out = -*out;
	return true;
}

bool gb_parse_field(const char *p, size_t len, enum gb_type t, const char *null_tok,
		    size_t null_len, struct gb_val *v)
{
	v->null = !len || (null_tok && len == null_len && !memcmp(p, null_tok, len));
	if (v->null)
		return true;
	switch (t) {
	case GB_I64:
		return pems_parse_i64(p, len, &v->i);
	case GB_F64:
		return parse_f64(p, len, &v->d);
	default:
		v->s = p;
		v->len = len;
		return true;
	}
}

enum gb_type gb_guess(const char *p, size_t len)
{
	int64_t i;
	double d;
	size_t j;

	if (pems_parse_i64(p, len, &i))
		return GB_I64;
	for (j = 0; j < len; j++)	/* no inf, nan or hex floats by guess */
		if (!strchr("0123456789+-.eE", p[j]))
			return GB_STR;
	return parse_f64(p, len, &d) ? GB_F64 : GB_STR;
}

uint64_t gb_ord_i64(int64_t x)
{
	return (uint64_t)x ^ (1ull << 63);
}

int64_t gb_unord_i64(uint64_t u)
{
	return (int64_t)(u ^ (1ull << 63));
}

uint64_t gb_ord_f64(double d)
{
	uint64_t u;

	if (d == 0)
		d = 0;	/* -0 as +0 */
	memcpy(&u, &d, 8);
	return u >> 63 ? ~u : u | (1ull << 63);
}

double gb_unord_f64(uint64_t u)
{
	double d;

	u = u >> 63 ? u & ~(1ull << 63) : ~u;
	memcpy(&d, &u, 8);
	return d;
}

static void put_be64(uint8_t *k, uint64_t u)
{
	int i;

	for (i = 7; i >= 0; i--) {
		k[i] = (uint8_t)u;
		u >>= 8;
	}
}

static uint64_t get_be64(const uint8_t *k)
{
	uint64_t u = 0;
	int i;

	for (i = 0; i < 8; i++)
		u = u << 8 | k[i];
	return u;
}

size_t gb_key_put(uint8_t *k, enum gb_type t, const struct gb_val *v)
{
	size_t n = 1, i;

	if (v->null) {
		k[0] = 0x02;
		return 1;
	}
	k[0] = 0x01;
	if (t == GB_I64) {
		put_be64(k + 1, gb_ord_i64(v->i));
		return 9;
	}
	if (t == GB_F64) {
		put_be64(k + 1, gb_ord_f64(v->d));
		return 9;
	}
	if (!memchr(v->s, 0, v->len)) {
		memcpy(k + 1, v->s, v->len);
		n += v->len;
	} else {
		for (i = 0; i < v->len; i++) {
			k[n++] = (uint8_t)v->s[i];
			if (!v->s[i])
				k[n++] = 0x01;
		}
	}
	k[n++] = 0;
	k[n++] = 0;
	return n;
}

size_t gb_key_get(const uint8_t *k, enum gb_type t, struct gb_val *v, char *scratch)
{
	size_t n = 1, len = 0;
	bool esc = false;

	v->null = k[0] == 0x02;
	if (v->null)
		return 1;
	if (t == GB_I64) {
		v->i = gb_unord_i64(get_be64(k + 1));
		return 9;
	}
	if (t == GB_F64) {
		v->d = gb_unord_f64(get_be64(k + 1));
		return 9;
	}
	for (;;) {	/* find the 0x00 0x00 end */
		const uint8_t *z = rawmemchr(k + n, 0);	/* the end is there */

		len += (size_t)(z - (k + n));
		n = (size_t)(z - k);
		if (k[n + 1] == 0)
			break;
		esc = true;
		n += 2;
		len++;
	}
	if (!esc) {
		v->s = (const char *)k + 1;
		v->len = n - 1;
	} else {
		size_t i = 1, o = 0;

		while (i < n) {
			scratch[o++] = (char)k[i];
			i += k[i] == 0 ? 2 : 1;
		}
		v->s = scratch;
		v->len = o;
	}
	return n + 2;
}

char *gb_put_i128(char *p, __int128 v)
{
	unsigned __int128 u = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
	char t[48];
	int n = 0;

	if (v < 0)
		*p++ = '-';
	do {
		t[n++] = (char)('0' + (int)(u % 10));
		u /= 10;
	} while (u);
	while (n)
		*p++ = t[--n];
	return p;
}

/* d as an integer number r of 10^-k (k <= 8) when r / 10^k rounds to d
 * and r has at most 15 digits: that decimal, trailing zeros dropped, is
 * then the shortest that reads back as d (15 digits name one double).
 * The usual case (prices, measurements, their sums) without printf's
 * multi-precision path.  NULL when d is not such a number. */
static char *put_decimal(char *p, double d)
{
	unsigned k;

	if (!(d > -1e15 && d < 1e15))
		return NULL;
	for (k = 0; k <= 8; k++) {
		double r = nearbyint(d * P10[k]);
		uint64_t u, ip, fp;
		unsigned n = k;

		if (r / P10[k] != d)
			continue;
		if (fabs(r) >= 1e15)
			return NULL;
		if (r < 0)
			*p++ = '-';
		u = (uint64_t)fabs(r);
		ip = u / (uint64_t)P10[k];
		fp = u % (uint64_t)P10[k];
		p = gb_put_i128(p, ip);
		if (!fp)
			return p;
		while (fp % 10 == 0) {
			fp /= 10;
			n--;
		}
		*p++ = '.';
		for (unsigned i = n; i > 0; i--) {
			p[i - 1] = (char)('0' + fp % 10);
			fp /= 10;
		}
		return p + n;
	}
	return NULL;
}

char *gb_put_f64(char *p, double d)
{
	int prec, n = 0;
	char *p2;

	if (isnan(d))
		return memcpy(p, "nan", 3), p + 3;
	if (isinf(d)) {
		memcpy(p, d < 0 ? "-inf" : "inf", 3 + (d < 0));
		return p + 3 + (d < 0);
	}
	if (d == 0)
		d = 0;
	p2 = put_decimal(p, d);
	if (p2)
		return p2;
	for (prec = 15; prec <= 17; prec++) {
		n = snprintf(p, 32, "%.*g", prec, d);
		if (strtod(p, NULL) == d)
			break;
	}
	return p + n;
}

char *gb_put_str(char *p, const char *s, size_t len, char delim)
{
	size_t i;
	bool q = len == 0;

	for (i = 0; i < len && !q; i++)
		q = s[i] == delim || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
	if (!q) {
		memcpy(p, s, len);
		return p + len;
	}
	*p++ = '"';
	for (i = 0; i < len; i++) {
		if (s[i] == '"')
			*p++ = '"';
		*p++ = s[i];
	}
	*p++ = '"';
	return p;
}
