/*
 * result.c - the output of one group: finalize its aggregates, evaluate
 * the --agg expressions over them, write the CSV line.
 *
 * SQL semantics: an aggregate over no non-NULL value is NULL (count: 0);
 * sd is the sample standard deviation (NULL below 2 values); corr is
 * NULL below 2 pairs or with a constant column; an expression with a
 * NULL operand, or a division by zero, is NULL.  Integer + - * stay
 * integers (128-bit, as the sums are), / and pow give doubles.
 */
#include <math.h>
#include <string.h>

#include "groupby/gb.h"

struct rv {
	bool null, is_int, is_str;
	__int128 i;
	double d;
	const char *s;
	size_t len;
};

static struct rv rv_int(__int128 i)
{
	return (struct rv){ .is_int = true, .i = i, .d = (double)i };
}

static struct rv rv_dbl(double d)
{
	return (struct rv){ .d = d };
}

static const struct rv RV_NULL = { .null = true };

static double item_num(const struct gb_query *q, const struct gb_agg *a, const struct gb_item *it)
{
	return q->need_type[a->col] == GB_I64 ? (double)gb_unord_i64(it->data) :
	       gb_unord_f64(it->data);
}

static struct rv median(const struct gb_table *t, const struct gb_agg *a, uint32_t g)
{
	const struct gb_list *l = &t->list[a->list];
	uint64_t b = l->start[g], n = l->start[g + 1] - b;
	const struct gb_item *e = l->e + b;
	long double x, y;

	if (!n)
		return RV_NULL;
	if (t->q->need_type[a->col] == GB_I64) {
		x = (long double)gb_unord_i64(e[(n - 1) / 2].data);
		y = (long double)gb_unord_i64(e[n / 2].data);
	} else {
		x = item_num(t->q, a, &e[(n - 1) / 2]);
		y = item_num(t->q, a, &e[n / 2]);
	}
	return rv_dbl((double)((x + y) / 2));
}

static struct rv agg_value(const struct gb_table *t, uint32_t g, unsigned ai)
{
	const struct gb_query *q = t->q;
	const struct gb_agg *a = &q->agg[ai];
	const uint8_t *st = t->states + (size_t)g * q->state_size + a->off;
	const uint64_t *u = (const uint64_t *)(const void *)st;
	bool ints = a->col >= 0 && q->need_type[a->col] == GB_I64;
	const long double *ld = (const long double *)(const void *)st;

	switch (a->fn) {
	case F_COUNT_STAR:
	case F_COUNT:
		return rv_int(u[0]);
	case F_DISTINCT:
		return rv_int(t->list[a->list].start[g + 1] - t->list[a->list].start[g]);
	case F_SUM:
		if (!u[2])
			return RV_NULL;
		return ints ? rv_int(*(const __int128 *)(const void *)st) : rv_dbl((double)ld[0]);
	case F_AVG:
		if (!u[2])
			return RV_NULL;
		return rv_dbl((double)((ints ? (long double)*(const __int128 *)(const void *)st : ld[0]) /
				       (long double)u[2]));
	case F_MIN:
	case F_MAX:
		if (!u[2])
			return RV_NULL;
		return ints ? rv_int((int64_t)u[0]) : rv_dbl(*(const double *)(const void *)st);
	case F_SD:
		if (u[0] < 2)
			return RV_NULL;
		return rv_dbl((double)sqrtl(ld[2] / (long double)(u[0] - 1)));
	case F_CORR:
		if (u[0] < 2 || ld[3] <= 0 || ld[4] <= 0)
			return RV_NULL;
		return rv_dbl((double)(ld[5] / sqrtl(ld[3] * ld[4])));
	case F_MEDIAN:
		return median(t, a, g);
	case F_SMIN:
	case F_SMAX: {
		const struct gb_list *l = &t->list[a->list];
		struct rv r = { .is_str = true };

		if (l->start[g] == l->start[g + 1])
			return RV_NULL;
		r.s = (const char *)gb_item_bytes(&l->e[l->start[g]]);
		r.len = l->e[l->start[g]].len;
		return r;
	}
	default:
		return RV_NULL;	/* top/bottom: see top_value */
	}
}

static struct rv top_value(const struct gb_table *t, uint32_t g, unsigned ai, unsigned r)
{
	const struct gb_query *q = t->q;
	const struct gb_agg *a = &q->agg[ai];
	const uint8_t *st = t->states + (size_t)g * q->state_size + a->off;
	const uint64_t *vals = (const uint64_t *)(const void *)(st + 16);

	if (q->need_type[a->col] == GB_I64)
		return rv_int(gb_unord_i64(vals[r]));
	return rv_dbl(gb_unord_f64(vals[r]));
}

static struct rv eval(const struct gb_table *t, uint32_t g, int n, unsigned rank)
{
	const struct gb_expr *e = &t->q->expr[n];
	struct rv a, b;

	switch (e->op) {
	case E_AGG:
		if (t->q->agg[e->agg].fn == F_TOP || t->q->agg[e->agg].fn == F_BOTTOM)
			return top_value(t, g, (unsigned)e->agg, rank);
		return agg_value(t, g, (unsigned)e->agg);
	case E_NUM:
		return e->is_int ? rv_int(e->inum) : rv_dbl(e->num);
	case E_NEG:
		a = eval(t, g, e->a, rank);
		if (a.null || a.is_str)
			return RV_NULL;
		return a.is_int ? rv_int(-a.i) : rv_dbl(-a.d);
	default:
		break;
	}
	a = eval(t, g, e->a, rank);
	b = eval(t, g, e->b, rank);
	if (a.null || b.null || a.is_str || b.is_str)
		return RV_NULL;
	switch (e->op) {
	case E_ADD:
		return a.is_int && b.is_int ? rv_int(a.i + b.i) : rv_dbl(a.d + b.d);
	case E_SUB:
		return a.is_int && b.is_int ? rv_int(a.i - b.i) : rv_dbl(a.d - b.d);
	case E_MUL:
		return a.is_int && b.is_int ? rv_int(a.i * b.i) : rv_dbl(a.d * b.d);
	case E_DIV:
		return b.d == 0 ? RV_NULL : rv_dbl(a.d / b.d);
	default:
		return rv_dbl(pow(a.d, b.d));
	}
}

static char *put_rv(char *p, const struct rv *v, char delim)
{
	if (v->null)
		return p;
	if (v->is_str)
		return gb_put_str(p, v->s, v->len, delim);
	if (v->is_int)
		return gb_put_i128(p, v->i);
	return gb_put_f64(p, v->d);
}

/* the key columns of group g, each followed by the delimiter */
static char *put_key(const struct gb_table *t, uint32_t g, char *p, char delim, char *scratch)
{
	const struct gb_query *q = t->q;
	size_t klen, off = 0;
	const uint8_t *k = gb_group_key(t, g, &klen);
	unsigned i;

	for (i = 0; i < q->nkeys; i++) {
		enum gb_type ty = q->need_type[q->key[i]];
		struct gb_val v;

		off += gb_key_get(k + off, ty, &v, scratch);
		if (!v.null) {
			if (ty == GB_STR)
				p = gb_put_str(p, v.s, v.len, delim);
			else if (ty == GB_I64)
				p = gb_put_i128(p, v.i);
			else
				p = gb_put_f64(p, v.d);
		}
		*p++ = delim;
	}
	return p;
}

size_t gb_group_bound(const struct gb_table *t, uint32_t g)
{
	const struct gb_query *q = t->q;
	size_t klen, b;
	unsigned i, lines = 1;

	gb_group_key(t, g, &klen);
	b = 2 * klen + 4 * q->nkeys + 40 * q->nout + 8;
	for (i = 0; i < q->naggs; i++) {
		const struct gb_agg *a = &q->agg[i];

		if (a->fn == F_SMIN || a->fn == F_SMAX) {
			const struct gb_list *l = &t->list[a->list];

			if (l->start[g] < l->start[g + 1])
				b += 2 * l->e[l->start[g]].len + 2;
		}
		if (a->fn == F_TOP || a->fn == F_BOTTOM)
			lines = a->n;
	}
	return b * lines;
}

size_t gb_group_text(const struct gb_table *t, uint32_t g, char *out, char delim,
		     char *scratch)
{
	const struct gb_query *q = t->q;
	char *p = out;
	unsigned r, rows = 1, i;

	if (q->top_out >= 0) {
		const struct gb_agg *a = &q->agg[q->expr[q->out_expr[q->top_out]].agg];
		uint32_t cnt;

		memcpy(&cnt, t->states + (size_t)g * q->state_size + a->off, 4);
		rows = cnt;
	}
	for (r = 0; r < rows; r++) {
		char *line = p;

		p = put_key(t, g, p, delim, scratch);
		if (!q->nkeys && !q->nout)
			p = line;
		for (i = 0; i < q->nout; i++) {
			struct rv v = eval(t, g, q->out_expr[i], r);

			p = put_rv(p, &v, delim);
			*p++ = delim;
		}
		p[-1] = '\n';
	}
	return (size_t)(p - out);
}

size_t gb_header_text(const struct gb_query *q, char *out, char delim)
{
	char *p = out;
	unsigned i;

	for (i = 0; i < q->nkeys; i++) {
		const char *n = q->need_name[q->key[i]];

		p = gb_put_str(p, n, strlen(n), delim);
		*p++ = delim;
	}
	for (i = 0; i < q->nout; i++) {
		p = gb_put_str(p, q->out_name[i], strlen(q->out_name[i]), delim);
		*p++ = delim;
	}
	p[-1] = '\n';
	return (size_t)(p - out);
}
