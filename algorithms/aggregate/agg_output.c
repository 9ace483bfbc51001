/*
 * agg_output.c - the output of pems_aggregate: one group as a csv line
 * or a kv record, and the csv header line.  The built-ins are printed
 * straight from their states (no finalize call); decimal conversion by
 * two digits at a time.
 */
#include <stdio.h>
#include <string.h>

#include "pems_algorithms.h"
#include "aggregate/agg_internal.h"

static const uint64_t P10[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull,
	1000000000000ull, 10000000000000ull, 100000000000000ull,
	1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
	1000000000000000000ull, 10000000000000000000ull
};

static const char DIG2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* decimal digits of v */
static unsigned len_u64(uint64_t v)
{
	unsigned t = ((64u - (unsigned)__builtin_clzll(v | 1)) * 1233u) >> 12;

	return v ? t + (v >= P10[t]) : 1;
}

/* v in decimal at p; returns the end */
static char *put_u64(char *p, uint64_t v)
{
	unsigned n = len_u64(v);
	char *e = p + n;

	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		e -= 2;
		memcpy(e, DIG2 + 2 * r, 2);
	}
	if (v >= 10) {
		e -= 2;
		memcpy(e, DIG2 + 2 * v, 2);
	} else {
		*--e = (char)('0' + v);
	}
	return p + n;
}

/* Formatting goes through these: with line == NULL they count bytes
 * instead (pass 1), so both passes agree by construction. */
struct outp {
	char *p;		/* NULL: count only */
	size_t n;
};

static void out_u64(struct outp *o, uint64_t v)
{
	if (o->p) {
		char *e = put_u64(o->p + o->n, v);

		o->n = (size_t)(e - o->p);
	} else {
		o->n += len_u64(v);
	}
}

static void out_ch(struct outp *o, char c)
{
	if (o->p)
		o->p[o->n] = c;
	o->n++;
}

static void out_i64(struct outp *o, int64_t v)
{
	if (v < 0) {
		out_ch(o, '-');
		out_u64(o, 0 - (uint64_t)v);
		return;
	}
	out_u64(o, (uint64_t)v);
}

/* num/den in decimal, rounded to 9 places half away from zero, trailing
 * zeros dropped; |num/den| < 2^63 (a mean of int64 values) */
static void out_mean(struct outp *o, __int128 num, uint64_t den)
{
	unsigned __int128 a = num < 0 ? -(unsigned __int128)num : (unsigned __int128)num;
	uint64_t q, r, frac;
	unsigned nf = 9;

	if (a >> 64) {
		q = (uint64_t)(a / den);
		r = (uint64_t)(a % den);
	} else {	/* the common case: 64-bit division */
		q = (uint64_t)a / den;
		r = (uint64_t)a % den;
	}
	if (!r)
		frac = 0;
	else if (r < (1ull << 34) && den < (1ull << 34))
		frac = (r * 1000000000u + den / 2) / den;
	else
		frac = (uint64_t)(((unsigned __int128)r * 1000000000u + den / 2) / den);
	if (frac >= 1000000000u) {
		q++;
		frac -= 1000000000u;
	}
	if (num < 0 && (q || frac))
		out_ch(o, '-');
	out_u64(o, q);
	if (!frac)
		return;
	while (frac % 10 == 0) {
		frac /= 10;
		nf--;
	}
	out_ch(o, '.');
	if (o->p) {	/* frac with nf digits, leading zeros kept */
		char *e = o->p + o->n + nf;
		unsigned i;

		for (i = 0; i < nf; i++) {
			*--e = (char)('0' + frac % 10);
			frac /= 10;
		}
	}
	o->n += nf;
}

/* one 8-byte field of a kv record */
static void out_raw8(struct outp *o, const void *v)
{
	if (o->p)
		memcpy(o->p + o->n, v, 8);
	o->n += 8;
}

/* A built-in's result from its state @st: 1 written, 0 not handled here
 * (finalize it), -1 overflow. */
static int out_builtin(struct outp *o, bool kv, enum agg_kind kind, const uint8_t *st)
{
	__int128 sum;
	uint64_t u;
	int64_t x;

	switch (kind) {
	case AK_COUNT:
		memcpy(&u, st, 8);
		if (kv)
			out_raw8(o, &u);
		else
			out_u64(o, u);
		return 1;
	case AK_SUM:
		memcpy(&sum, st, 16);
		if (sum > INT64_MAX || sum < INT64_MIN)
			return -1;
		x = (int64_t)sum;
		break;
	case AK_MINMAX:
		memcpy(&x, st, 8);
		break;
	case AK_AVG:
		if (kv)
			return 0;	/* kv: the double, from finalize */
		memcpy(&sum, st, 16);
		memcpy(&u, st + 16, 8);
		if (u)
			out_mean(o, sum, u);
		else
			out_u64(o, 0);
		return 1;
	default:
		return 0;
	}
	if (kv)
		out_raw8(o, &x);
	else
		out_i64(o, x);
	return 1;
}

/* a finalized result */
static void out_result(struct outp *o, bool kv, const struct pems_agg_result *r)
{
	char tmp[32];
	int n;

	if (kv) {
		out_raw8(o, &r->u);	/* any member: 8 bytes */
	} else if (r->type == PEMS_AGG_UINT64) {
		out_u64(o, r->u);
	} else if (r->type == PEMS_AGG_INT64) {
		out_i64(o, r->i);
	} else if (r->type == PEMS_AGG_MEAN) {
		out_mean(o, r->num, r->den);
	} else {
		n = snprintf(tmp, sizeof(tmp), "%.17g", r->d);
		if (o->p)
			memcpy(o->p + o->n, tmp, (size_t)n);
		o->n += (size_t)n;
	}
}

long agg_format_group(const struct agg_out *f, uint64_t key, const uint8_t *states,
		      char *line, unsigned *bad)
{
	struct pems_agg_result r;
	struct outp o = { line, 0 };
	size_t off = 0;
	unsigned i;
	int done;

	if (f->kv)
		out_raw8(&o, &key);
	else
		out_u64(&o, key);
	for (i = 0; i < f->naggs; i++) {
		const uint8_t *st = states + off;

		off += f->aggs[i]->state_size;
		if (!f->kv)
			out_ch(&o, ',');
		done = out_builtin(&o, f->kv, f->kind[i], st);
		if (!done && f->aggs[i]->finalize(st, &r))
			done = -1;
		if (done < 0) {
			*bad = i;
			return -1;
		}
		if (!done)
			out_result(&o, f->kv, &r);
	}
	if (!f->kv)
		out_ch(&o, '\n');
	return (long)o.n;
}

size_t agg_format_header(const struct agg_out *f, char *hdr, size_t cap)
{
	size_t n = 0;
	unsigned i;

	if (f->kv)
		return 0;
	n += (size_t)snprintf(hdr + n, cap - n, "key");
	for (i = 0; i < f->naggs && n < cap - 2; i++)
		n += (size_t)snprintf(hdr + n, cap - n, ",%s", f->aggs[i]->name);
	if (n > cap - 2)
		n = cap - 2;
	hdr[n++] = '\n';
	return n;
}
