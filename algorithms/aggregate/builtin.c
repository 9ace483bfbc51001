/*
 * builtin.c - the built-in aggregates count, sum, min, max and avg
 * (pems_aggregate_builtin).  Exact integer arithmetic: sum and avg keep a
 * 128-bit sum.
 */
#include <errno.h>
#include <string.h>

#include "aggregate/gb_int.h"

static void count_init(void *s) { memset(s, 0, 8); }
static void count_update(void *s, int64_t v)
{
	uint64_t c;

	(void)v;
	memcpy(&c, s, 8);
	c++;
	memcpy(s, &c, 8);
}
static void count_combine(void *s, const void *o)
{
	uint64_t a, b;

	memcpy(&a, s, 8);
	memcpy(&b, o, 8);
	a += b;
	memcpy(s, &a, 8);
}
static int count_final(const void *s, struct pems_agg_result *r)
{
	r->type = PEMS_AGG_UINT64;
	memcpy(&r->u, s, 8);
	return 0;
}

static void sum_init(void *s) { memset(s, 0, 16); }
static void sum_update(void *s, int64_t v)
{
	__int128 a;

	memcpy(&a, s, 16);
	a += v;
	memcpy(s, &a, 16);
}
static void sum_combine(void *s, const void *o)
{
	__int128 a, b;

	memcpy(&a, s, 16);
	memcpy(&b, o, 16);
	a += b;
	memcpy(s, &a, 16);
}
static int sum_final(const void *s, struct pems_agg_result *r)
{
	__int128 a;

	memcpy(&a, s, 16);
	r->type = PEMS_AGG_INT64;
	if (a > INT64_MAX || a < INT64_MIN)
		return -ERANGE;
	r->i = (int64_t)a;
	return 0;
}

static void min_init(void *s)
{
	int64_t m = INT64_MAX;

	memcpy(s, &m, 8);
}
static void min_update(void *s, int64_t v)
{
	int64_t m;

	memcpy(&m, s, 8);
	if (v < m)
		memcpy(s, &v, 8);
}
static void min_combine(void *s, const void *o)
{
	int64_t v;

	memcpy(&v, o, 8);
	min_update(s, v);
}
static int i64_final(const void *s, struct pems_agg_result *r)
{
	r->type = PEMS_AGG_INT64;
	memcpy(&r->i, s, 8);
	return 0;
}

static void max_init(void *s)
{
	int64_t m = INT64_MIN;

	memcpy(s, &m, 8);
}
static void max_update(void *s, int64_t v)
{
	int64_t m;

	memcpy(&m, s, 8);
	if (v > m)
		memcpy(s, &v, 8);
}
static void max_combine(void *s, const void *o)
{
	int64_t v;

	memcpy(&v, o, 8);
	max_update(s, v);
}

/* avg: {__int128 sum, u64 count} */
static void avg_init(void *s) { memset(s, 0, 24); }
static void avg_update(void *s, int64_t v)
{
	sum_update(s, v);
	count_update((uint8_t *)s + 16, v);
}
static void avg_combine(void *s, const void *o)
{
	sum_combine(s, o);
	count_combine((uint8_t *)s + 16, (const uint8_t *)o + 16);
}
static int avg_final(const void *s, struct pems_agg_result *r)
{
	__int128 a;
	uint64_t c;

	memcpy(&a, s, 16);
	memcpy(&c, (const uint8_t *)s + 16, 8);
	r->type = c ? PEMS_AGG_MEAN : PEMS_AGG_DOUBLE;
	r->d = c ? (double)((long double)a / (long double)c) : 0.0;
	r->num = a;
	r->den = c;
	return 0;
}

static const struct pems_aggregate builtins[] = {
	{ "count", 8, count_init, count_update, count_combine, count_final },
	{ "sum", 16, sum_init, sum_update, sum_combine, sum_final },
	{ "min", 8, min_init, min_update, min_combine, i64_final },
	{ "max", 8, max_init, max_update, max_combine, i64_final },
	{ "avg", 24, avg_init, avg_update, avg_combine, avg_final },
};

const struct pems_aggregate *pems_aggregate_builtin(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (!strcmp(builtins[i].name, name))
			return &builtins[i];
	return NULL;
}

enum kind gb_builtin_kind(const struct pems_aggregate *a)
{
	size_t b;

	for (b = 0; b < sizeof(builtins) / sizeof(builtins[0]); b++)
		if (a == &builtins[b])
			return (enum kind)b;
	return K_USER;
}
