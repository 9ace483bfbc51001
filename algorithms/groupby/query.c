/*
 * query.c - the query of pems_csv_groupby: group keys (--by), output
 * columns (--agg: aggregates and expressions of them), their names
 * (--as), declared types (--schema).
 *
 * --agg grammar (names of functions case-insensitive, spaces anywhere):
 *   list   := item (',' item)*
 *   item   := sum (('+'|'-') sum)*            an output column
 *   sum    := factor (('*'|'/') factor)*
 *   factor := '-' factor | NUMBER | '(' item ')' | pow '(' item ',' item ')'
 *           | AGG '(' args ')'
 *   AGG    := count | sum | min | max | avg | mean | median | sd | stddev
 *           | corr | r2 | topN | bottomN
 *   args   := '*' | [distinct] COLUMN [',' COLUMN]
 * COLUMN is a header name (or "quoted name"), a 1-based index or cN.
 * A topN/bottomN makes several lines per group and stands alone.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groupby/gb.h"

struct parser {
	struct gb_query *q;
	const char *s;		/* the --agg text */
	size_t i;
};

static int qerr(struct gb_query *q, const char *fmt, const char *a, const char *b)
{
	snprintf(q->errmsg, sizeof(q->errmsg), fmt, a, b);
	return -EINVAL;
}

/* index of needed column @name (added when new), or -1 when full */
static int need(struct gb_query *q, const char *name, size_t len)
{
	unsigned i;

	if (len >= GB_NAME)
		len = GB_NAME - 1;
	for (i = 0; i < q->nneed; i++)
		if (strlen(q->need_name[i]) == len && !memcmp(q->need_name[i], name, len))
			return (int)i;
	if (q->nneed >= sizeof(q->need_col) / sizeof(q->need_col[0]))
		return -1;
	memcpy(q->need_name[q->nneed], name, len);
	q->need_name[q->nneed][len] = '\0';
	q->need_type[q->nneed] = GB_STR;
	return (int)q->nneed++;
}

static void skip_ws(struct parser *p)
{
	while (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n')
		p->i++;
}

static bool eat(struct parser *p, char c)
{
	skip_ws(p);
	if (p->s[p->i] != c)
		return false;
	p->i++;
	return true;
}

/* a column name: "quoted" or a run of [A-Za-z0-9_.$] */
static int column(struct parser *p, int *out)
{
	const char *s = p->s;
	size_t b, e;

	skip_ws(p);
	if (s[p->i] == '"') {
		b = ++p->i;
		while (s[p->i] && s[p->i] != '"')
			p->i++;
		if (!s[p->i])
			return qerr(p->q, "--agg '%s': unterminated \"column name\"%s", s, "");
		e = p->i++;
	} else {
		b = p->i;
		while (isalnum((unsigned char)s[p->i]) || s[p->i] == '_' || s[p->i] == '.' ||
		       s[p->i] == '$')
			p->i++;
		e = p->i;
	}
	if (e == b)
		return qerr(p->q, "--agg '%s': a column name expected at '%s'", s, s + b);
	*out = need(p->q, s + b, e - b);
	if (*out < 0)
		return qerr(p->q, "--agg '%s': too many columns%s", s, "");
	return 0;
}

static int node(struct gb_query *q, enum gb_op op, int a, int b)
{
	struct gb_expr *e;

	if (q->nexpr >= GB_MAX_EXPR)
		return -1;
	e = &q->expr[q->nexpr];
	memset(e, 0, sizeof(*e));
	e->op = op;
	e->a = a;
	e->b = b;
	e->agg = -1;
	return (int)q->nexpr++;
}

static int add_agg(struct gb_query *q, enum gb_fn fn, int col, int col2, unsigned n)
{
	unsigned i;
	int e;

	for (i = 0; i < q->naggs; i++)
		if (q->agg[i].fn == fn && q->agg[i].col == col && q->agg[i].col2 == col2 &&
		    q->agg[i].n == n)
			break;
	if (i == q->naggs) {
		if (q->naggs >= GB_MAX_AGGS)
			return -1;
		q->agg[i] = (struct gb_agg){ .fn = fn, .col = col, .col2 = col2, .n = n, .list = -1 };
		q->naggs++;
	}
	e = node(q, E_AGG, -1, -1);
	if (e >= 0)
		q->expr[e].agg = (int)i;
	return e;
}

static const struct {
	const char *name;
	enum gb_fn fn;
	unsigned ncols;		/* 0: count, which takes * too */
} FNS[] = {
	{ "count", F_COUNT, 0 }, { "sum", F_SUM, 1 }, { "min", F_MIN, 1 },
	{ "max", F_MAX, 1 }, { "avg", F_AVG, 1 }, { "mean", F_AVG, 1 },
	{ "median", F_MEDIAN, 1 }, { "sd", F_SD, 1 }, { "stddev", F_SD, 1 },
	{ "stddev_samp", F_SD, 1 }, { "corr", F_CORR, 2 },
};

static int expr_item(struct parser *p, int *out);

/* the arguments of aggregate @fn, after its '(' */
static int agg_args(struct parser *p, enum gb_fn fn, unsigned ncols, unsigned n, int *out)
{
	int c1 = -1, c2 = -1, rc;

	if (fn == F_COUNT && eat(p, '*')) {
		fn = F_COUNT_STAR;
	} else {
		skip_ws(p);
		if (fn == F_COUNT && !strncasecmp(p->s + p->i, "distinct", 8) &&
		    !isalnum((unsigned char)p->s[p->i + 8])) {
			p->i += 8;
			fn = F_DISTINCT;
		}
		rc = column(p, &c1);
		if (rc)
			return rc;
		if (ncols == 2) {
			if (!eat(p, ','))
				return qerr(p->q, "--agg '%s': corr takes two columns, as corr(v1,v2)%s",
					    p->s, "");
			rc = column(p, &c2);
			if (rc)
				return rc;
		}
	}
	if (!eat(p, ')'))
		return qerr(p->q, "--agg '%s': ')' expected at '%s'", p->s, p->s + p->i);
	*out = add_agg(p->q, fn, c1, c2, n);
	return *out < 0 ? qerr(p->q, "--agg '%s': too many aggregates%s", p->s, "") : 0;
}

/* NAME '(' ... after the name [b, e) */
static int call(struct parser *p, size_t b, size_t e, int *out)
{
	const char *nm = p->s + b;
	size_t len = e - b, i;
	int a, c;

	if (len == 3 && !strncasecmp(nm, "pow", 3)) {
		if (expr_item(p, &a) || !eat(p, ',') || expr_item(p, &c) || !eat(p, ')'))
			return p->q->errmsg[0] ? -EINVAL :
			       qerr(p->q, "--agg '%s': pow takes two arguments, as pow(corr(v1,v2),2)%s",
				    p->s, "");
		*out = node(p->q, E_POW, a, c);
		return 0;
	}
	if ((len > 3 && !strncasecmp(nm, "top", 3)) || (len > 6 && !strncasecmp(nm, "bottom", 6))) {
		bool top = nm[0] == 't' || nm[0] == 'T';
		char *end;
		unsigned long n = strtoul(nm + (top ? 3 : 6), &end, 10);

		if (end != nm + len || n < 1 || n > GB_TOP_MAX)
			return qerr(p->q, "--agg '%s': top and bottom take N from 1 to 16, as top2(v3)%s",
				    p->s, "");
		return agg_args(p, top ? F_TOP : F_BOTTOM, 1, (unsigned)n, out);
	}
	if (len == 2 && !strncasecmp(nm, "r2", 2)) {	/* r2(a,b) = pow(corr(a,b),2) */
		int two;

		if (agg_args(p, F_CORR, 2, 0, &a))
			return -EINVAL;
		two = node(p->q, E_NUM, -1, -1);
		p->q->expr[two].is_int = true;
		p->q->expr[two].inum = 2;
		p->q->expr[two].num = 2;
		*out = node(p->q, E_POW, a, two);
		return 0;
	}
	for (i = 0; i < sizeof(FNS) / sizeof(FNS[0]); i++)
		if (strlen(FNS[i].name) == len && !strncasecmp(nm, FNS[i].name, len))
			return agg_args(p, FNS[i].fn, FNS[i].ncols ? FNS[i].ncols : 1, 0, out);
	snprintf(p->q->errmsg, sizeof(p->q->errmsg),
		 "--agg '%s': unknown function '%.*s'; use count, sum, min, max, avg/mean, median, sd/stddev, corr, r2, topN, bottomN or pow",
		 p->s, (int)len, nm);
	return -EINVAL;
}

static int factor(struct parser *p, int *out)
{
	const char *s = p->s;
	size_t b, e;

	skip_ws(p);
	if (eat(p, '-')) {
		int a;

		if (factor(p, &a))
			return -EINVAL;
		*out = node(p->q, E_NEG, a, -1);
		return 0;
	}
	if (eat(p, '(')) {
		if (expr_item(p, out))
			return -EINVAL;
		return eat(p, ')') ? 0 : qerr(p->q, "--agg '%s': ')' expected at '%s'", s, s + p->i);
	}
	skip_ws(p);
	b = p->i;
	if (isdigit((unsigned char)s[b]) || s[b] == '.') {
		char *end;
		double d = strtod(s + b, &end);
		int n = node(p->q, E_NUM, -1, -1);
		size_t j;

		p->i = (size_t)(end - s);
		p->q->expr[n].num = d;
		p->q->expr[n].is_int = true;
		for (j = b; j < p->i; j++)
			if (!isdigit((unsigned char)s[j]))
				p->q->expr[n].is_int = false;
		p->q->expr[n].inum = (int64_t)d;
		*out = n;
		return 0;
	}
	while (isalnum((unsigned char)s[p->i]) || s[p->i] == '_')
		p->i++;
	e = p->i;
	if (e == b || !eat(p, '('))
		return qerr(p->q, "--agg '%s': an aggregate such as sum(v1) expected at '%s'", s, s + b);
	return call(p, b, e, out) ? -EINVAL : 0;
}

static int term(struct parser *p, int *out)
{
	int a, b;

	if (factor(p, &a))
		return -EINVAL;
	for (;;) {
		enum gb_op op;

		if (eat(p, '*'))
			op = E_MUL;
		else if (eat(p, '/'))
			op = E_DIV;
		else
			break;
		if (factor(p, &b))
			return -EINVAL;
		a = node(p->q, op, a, b);
	}
	*out = a;
	return 0;
}

static int expr_item(struct parser *p, int *out)
{
	int a, b;

	if (term(p, &a))
		return -EINVAL;
	for (;;) {
		enum gb_op op;

		if (eat(p, '+'))
			op = E_ADD;
		else if (eat(p, '-'))
			op = E_SUB;
		else
			break;
		if (term(p, &b))
			return -EINVAL;
		a = node(p->q, op, a, b);
	}
	*out = a;
	return a < 0 ? qerr(p->q, "--agg '%s': expression too long%s", p->s, "") : 0;
}

/* "max(v1) - min(v2)" -> "max_v1_min_v2" */
static void default_name(char *out, const char *s, size_t len)
{
	size_t i, n = 0;
	bool gap = false;

	for (i = 0; i < len && n < GB_NAME - 2; i++) {
		unsigned char c = (unsigned char)s[i];

		if (isalnum(c) || c == '.' || c == '$') {
			if (gap && n)
				out[n++] = '_';
			out[n++] = (char)c;
			gap = false;
		} else {
			gap = true;
		}
	}
	out[n] = '\0';
}

/* split @s at top-level commas: calls @fn for each piece */
static int split_list(struct gb_query *q, const char *s, const char *what,
		      int (*fn)(struct gb_query *q, const char *b, size_t len, void *arg), void *arg)
{
	size_t b = 0, i = 0;
	int depth = 0;
	bool quote = false;

	for (;; i++) {
		char c = s[i];

		if (c == '"')
			quote = !quote;
		else if (!quote && c == '(')
			depth++;
		else if (!quote && c == ')')
			depth--;
		if (c == '\0' || (c == ',' && !depth && !quote)) {
			size_t e = i;
			int rc;

			while (b < e && (s[b] == ' ' || s[b] == '\t'))
				b++;
			while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t'))
				e--;
			if (e == b)
				return qerr(q, "%s '%s': an empty item", what, s);
			rc = fn(q, s + b, e - b, arg);
			if (rc || c == '\0')
				return rc;
			b = i + 1;
		}
	}
}

static int by_item(struct gb_query *q, const char *b, size_t len, void *arg)
{
	int c;

	(void)arg;
	if (len >= 2 && b[0] == '"' && b[len - 1] == '"') {
		b++;
		len -= 2;
	}
	if (q->nkeys >= GB_MAX_KEYS)
		return qerr(q, "--by '%s': at most 16 columns%s", q->by, "");
	c = need(q, b, len);
	if (c < 0)
		return qerr(q, "--by '%s': too many columns%s", q->by, "");
	q->key[q->nkeys++] = (unsigned)c;
	return 0;
}

static int agg_item(struct gb_query *q, const char *b, size_t len, void *arg)
{
	struct parser p = { q, q->aggs, (size_t)(b - q->aggs) };
	int e;

	(void)arg;
	if (q->nout >= GB_MAX_OUT)
		return qerr(q, "--agg '%s': at most 32 output columns%s", q->aggs, "");
	if (expr_item(&p, &e))
		return -EINVAL;
	skip_ws(&p);
	if (p.i != (size_t)(b - q->aggs) + len)
		return qerr(q, "--agg '%s': unexpected text at '%s'", q->aggs, q->aggs + p.i);
	q->out_expr[q->nout] = e;
	default_name(q->out_name[q->nout], b, len);
	q->nout++;
	return 0;
}

static int as_item(struct gb_query *q, const char *b, size_t len, void *arg)
{
	unsigned *n = arg;

	if (*n >= q->nout)
		return qerr(q, "--as '%s': more names than --agg columns%s", q->as, "");
	if (len >= GB_NAME)
		len = GB_NAME - 1;
	memcpy(q->out_name[*n], b, len);
	q->out_name[*n][len] = '\0';
	(*n)++;
	return 0;
}

static int type_name(const char *t, size_t len, enum gb_type *out)
{
	static const struct {
		const char *n;
		enum gb_type t;
	} T[] = {
		{ "str", GB_STR }, { "string", GB_STR }, { "text", GB_STR }, { "varchar", GB_STR },
		{ "i64", GB_I64 }, { "int", GB_I64 }, { "int64", GB_I64 }, { "integer", GB_I64 },
		{ "bigint", GB_I64 }, { "f64", GB_F64 }, { "float", GB_F64 }, { "double", GB_F64 },
		{ "float64", GB_F64 },
	};
	size_t i;

	for (i = 0; i < sizeof(T) / sizeof(T[0]); i++)
		if (strlen(T[i].n) == len && !strncasecmp(T[i].n, t, len)) {
			*out = T[i].t;
			return 0;
		}
	return -EINVAL;
}

static int schema_item(struct gb_query *q, const char *b, size_t len, void *arg)
{
	const char *colon = NULL;
	enum gb_type t;
	unsigned i;

	(void)arg;
	for (i = 0; i < len; i++)
		if (b[i] == ':')
			colon = b + i;
	if (!colon || colon == b)
		return qerr(q, "--schema '%s': give COLUMN:TYPE items, as id1:str,v3:f64%s", q->schema, "");
	if (type_name(colon + 1, (size_t)(b + len - colon - 1), &t))
		return qerr(q, "--schema '%s': unknown type in '%s'; use str, i64 or f64", q->schema, b);
	for (i = 0; i < q->nneed; i++)	/* only the columns the query uses matter */
		if (strlen(q->need_name[i]) == (size_t)(colon - b) &&
		    !memcmp(q->need_name[i], b, (size_t)(colon - b))) {
			q->need_type[i] = t;
			q->type_given[i] = true;
		}
	return 0;
}

int gb_query_parse(struct gb_query *q, const char *by, const char *agg, const char *as,
		   const char *schema)
{
	unsigned i, nas = 0;
	int rc = 0;

	memset(q, 0, sizeof(*q));
	q->by = by;
	q->aggs = agg;
	q->as = as;
	q->schema = schema;
	q->top_out = -1;
	if (by && *by)
		rc = split_list(q, by, "--by", by_item, NULL);
	if (!rc && (!agg || !*agg))
		rc = qerr(q, "--agg: give at least one aggregate, as 'sum(v1),mean(v3)'%s%s", "", "");
	if (!rc)
		rc = split_list(q, agg, "--agg", agg_item, NULL);
	if (!rc && as && *as)
		rc = split_list(q, as, "--as", as_item, &nas);
	if (!rc && as && *as && nas != q->nout)
		rc = qerr(q, "--as '%s': fewer names than --agg columns%s", as, "");
	if (!rc && schema && *schema)
		rc = split_list(q, schema, "--schema", schema_item, NULL);
	for (i = 0; !rc && i < q->nout; i++) {
		const struct gb_expr *e = &q->expr[q->out_expr[i]];

		if (e->op == E_AGG && (q->agg[e->agg].fn == F_TOP || q->agg[e->agg].fn == F_BOTTOM)) {
			if (q->top_out >= 0)
				rc = qerr(q, "--agg '%s': at most one topN or bottomN%s", agg, "");
			q->top_out = (int)i;
		}
	}
	for (i = 0; !rc && i < q->nexpr; i++) {
		const struct gb_expr *e = &q->expr[i];

		if (e->op == E_AGG && (q->agg[e->agg].fn == F_TOP || q->agg[e->agg].fn == F_BOTTOM) &&
		    (q->top_out < 0 || q->out_expr[q->top_out] != (int)i))
			rc = qerr(q, "--agg '%s': topN and bottomN stand alone, not inside an expression%s",
				  agg, "");
	}
	return rc;
}

int gb_query_resolve(struct gb_query *q, char (*names)[GB_NAME], unsigned ncols)
{
	unsigned i, j;

	q->ncols = ncols;
	q->max_need = 0;
	for (i = 0; i < q->nneed; i++) {
		const char *n = q->need_name[i];
		char *end;
		unsigned long idx;

		for (j = 0; j < ncols; j++)
			if (!strcmp(names[j], n))
				break;
		if (j == ncols) {
			idx = strtoul(n + (n[0] == 'c'), &end, 10);
			if (end != n + (n[0] == 'c') && !*end && idx >= 1 && idx <= ncols)
				j = (unsigned)idx - 1;
		}
		if (j == ncols)
			return qerr(q, "no column '%s' in the header%s", n, "");
		q->need_col[i] = j;
		memmove(q->need_name[i], names[j], GB_NAME);	/* the header's name */
		if (j + 1 > q->max_need)
			q->max_need = j + 1;
	}
	return 0;
}

/* Check that aggregate @a takes its column's type; pick string variants. */
static int check_agg(struct gb_query *q, struct gb_agg *a)
{
	static const char *const fname[] = {
		"count", "count", "sum", "min", "max", "avg", "sd", "corr", "top", "bottom",
		"median", "count(distinct)", "min", "max"
	};
	bool str = a->col >= 0 && q->need_type[a->col] == GB_STR;

	if (a->col2 >= 0 && q->need_type[a->col2] == GB_STR)
		str = true;
	if (!str)
		return 0;
	switch (a->fn) {
	case F_MIN:
		a->fn = F_SMIN;
		return 0;
	case F_MAX:
		a->fn = F_SMAX;
		return 0;
	case F_COUNT:
	case F_COUNT_STAR:
	case F_DISTINCT:
		return 0;
	default:
		return qerr(q, "%s of column '%s': the column holds strings (declare its type with --schema COLUMN:f64 if it is numeric)",
			    fname[a->fn], q->need_name[a->col2 >= 0 && q->need_type[a->col2] == GB_STR ?
						       a->col2 : a->col]);
	}
}

/* bytes of @a's fixed state; *align 16 when it holds a long double or
 * an __int128, else 8 */
static size_t state_bytes(const struct gb_agg *a, size_t *align)
{
	*align = 16;
	switch (a->fn) {
	case F_SUM:
	case F_AVG:
	case F_MIN:
	case F_MAX:
		return 24;	/* 16-byte sum / 8-byte value, u64 count / has at 16 */
	case F_SD:
		return 48;	/* n, mean, m2 (long double) */
	case F_CORR:
		return 96;	/* n, mx, my, m2x, m2y, cxy */
	default:
		break;
	}
	*align = 8;
	switch (a->fn) {
	case F_COUNT_STAR:
	case F_COUNT:
	case F_SMIN:
	case F_SMAX:
		return 8;	/* n, or 1 + the index of the best string in its list */
	case F_TOP:
	case F_BOTTOM:
		return 16 + 8 * a->n;	/* count, N values */
	default:
		return 0;	/* a value list */
	}
}

int gb_query_types(struct gb_query *q)
{
	unsigned i;
	size_t off = 0;

	unsigned pass;

	q->nlists = 0;
	for (i = 0; i < q->naggs; i++) {
		struct gb_agg *a = &q->agg[i];

		if (check_agg(q, a))
			return -EINVAL;
		a->list = a->fn >= F_MEDIAN ? (int)q->nlists++ : -1;
	}
	/* the 16-aligned states first, then the 8-byte ones fill the gaps:
	 * sum(v3),count(*) takes 32 bytes */
	for (pass = 16; pass >= 8; pass -= 8) {
		for (i = 0; i < q->naggs; i++) {
			struct gb_agg *a = &q->agg[i];
			size_t align, b = state_bytes(a, &align);

			if (align != pass || !b)
				continue;
			off = (off + align - 1) & ~(align - 1);
			a->off = off;
			off += b;
		}
	}
	q->state_size = (off + 15) & ~(size_t)15;
	return 0;
}
