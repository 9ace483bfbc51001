/*
 * check_property.c - property test of the key arithmetic: random keys
 * drawn from adversarial distributions (the whole 64-bit range, the
 * extremes 0 and 2^64-1, a few keys spanning 2^63 and more, one VP
 * holding every row, all keys equal, sorted and reversed runs, clusters
 * at both ends) are
 *   - aggregated in-process with pems_groupby (built-in and user-defined
 *     aggregates, many cases per SPMD section) for every v from 1 to 64,
 *   - sorted by pems_sort (u64 and rec100 files) for every v from 1 to 64,
 *   - aggregated by pems_aggregate (kv files) for every v from 1 to 64,
 *   - sorted by the local kernels (pems_radix_sort_u64 / _rec100),
 * and every result is compared with an independent reference: qsort of
 * the whole input and a scan.
 *
 *   PEMS_PROPERTY_CASES  cases in all (default 10000); a longer run by
 *                        hand: PEMS_PROPERTY_CASES=200000
 *   PEMS_PROPERTY_SEED   the seed (default 1); a failure names its case,
 *                        distribution and v
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pems.h"
#include "pems_algorithms.h"
#include "sort/radix.h"
#include "spmd_test.h"

#define VMAX 64
#define MAXROWS 3000		/* rows of one in-process aggregate case */

static uint64_t seed0 = 1;
static unsigned ncases = 10000;
static const char *tmpdir;

/* ---- random numbers and key distributions ---- */

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

enum dist {
	D_FULL,		/* uniform over 2^64 */
	D_EXTREME,	/* 0, 1, 2^63 +- 1, 2^64 - 2, 2^64 - 1 */
	D_FEW,		/* 1..8 random 64-bit keys */
	D_EQUAL,	/* one key */
	D_SORTED,	/* ascending over the whole range */
	D_REVERSE,	/* descending */
	D_ENDS,		/* clusters just above 0 and just below 2^64 */
	D_POW2,		/* 2^i, 2^i - 1, 2^i + 1 */
	D_NARROW,	/* a narrow range at a random base (may wrap past 2^64) */
	D_HEAVY,	/* one key in half the rows, the rest full range */
	NDIST
};

static const char *const dist_name[NDIST] = {
	"full", "extreme", "few", "equal", "sorted", "reverse", "ends", "pow2", "narrow", "heavy"
};

static uint64_t extreme(uint64_t *s)
{
	static const uint64_t x[] = { 0, 1, (1ull << 63) - 1, 1ull << 63, (1ull << 63) + 1,
				      UINT64_MAX - 1, UINT64_MAX };

	return x[below(s, sizeof(x) / sizeof(x[0]))];
}

/* @n keys of distribution @d into @k */
static void gen_keys(uint64_t *s, enum dist d, uint64_t *k, size_t n)
{
	uint64_t few[8], base = rnd(s), step = 1 + below(s, UINT64_MAX / (n + 1));
	unsigned nfew = 1 + (unsigned)below(s, 8), i;
	size_t j;

	for (i = 0; i < 8; i++)
		few[i] = below(s, 3) ? rnd(s) : extreme(s);
	for (j = 0; j < n; j++) {
		uint64_t b = below(s, 64);

		switch (d) {
		case D_FULL: k[j] = rnd(s); break;
		case D_EXTREME: k[j] = extreme(s); break;
		case D_FEW: k[j] = few[below(s, nfew)]; break;
		case D_EQUAL: k[j] = few[0]; break;
		case D_SORTED: k[j] = j * step; break;
		case D_REVERSE: k[j] = UINT64_MAX - j * step; break;
		case D_ENDS: k[j] = below(s, 2) ? below(s, 100) : UINT64_MAX - below(s, 100); break;
		case D_POW2: k[j] = (1ull << b) + (uint64_t)below(s, 3) - 1; break;
		case D_NARROW: k[j] = base + below(s, 1 + (base & 4095)); break;
		default: k[j] = below(s, 2) ? few[0] : rnd(s); break;
		}
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* v for case @i of @n: every v from 1 to VMAX in turn, then log-uniform
 * (cost grows with v) */
static unsigned pick_v(uint64_t *s, unsigned i)
{
	double u = (double)below(s, 1u << 20) / (1u << 20);
	unsigned v = (unsigned)exp2(u * 6.0);

	if (i < VMAX)
		return i + 1;
	return v < 1 ? 1 : v > VMAX ? VMAX : v;
}

/* ---- in-process GROUP BY: many cases per SPMD section ---- */

struct row {
	uint64_t key;
	int64_t val;
};

struct agg_case {
	uint64_t seed;
	enum dist d;
	bool user;		/* a user-defined aggregate: the generic path */
	size_t table;		/* table_bytes for pems_groupby */
	unsigned sample;	/* 0: random rows, 1: none, 2: the first key only */
	size_t n;
	struct row *rows;
	size_t off[VMAX + 1];	/* VP p holds rows [off[p], off[p + 1]) */
};

struct grp {
	unsigned c;		/* case */
	uint64_t key, count, h;
	__int128 sum;
	int64_t min, max;
};

static struct agg_case *acases;
static unsigned nacases;
static struct grp *got[VMAX];
static size_t ngot[VMAX], capgot[VMAX];

static uint64_t hmix(int64_t v)
{
	uint64_t s = (uint64_t)v;

	return rnd(&s);
}

/* "hx": the xor of a mix of the values, a user-defined aggregate */
static void hx_init(void *s) { memset(s, 0, 8); }
static void hx_update(void *s, int64_t v)
{
	uint64_t a;

	memcpy(&a, s, 8);
	a ^= hmix(v);
	memcpy(s, &a, 8);
}
static void hx_combine(void *s, const void *o)
{
	uint64_t a, b;

	memcpy(&a, s, 8);
	memcpy(&b, o, 8);
	a ^= b;
	memcpy(s, &a, 8);
}
static int hx_final(const void *s, struct pems_agg_result *r)
{
	r->type = PEMS_AGG_UINT64;
	memcpy(&r->u, s, 8);
	return 0;
}
static const struct pems_aggregate hx = { "hx", 8, hx_init, hx_update, hx_combine, hx_final };

struct walk {
	unsigned pid, c;
	bool user;
};

/* core: count 0, sum 8 (16 B), min 24, max 32; user: count 0, sum 8, hx 24 */
static void walk_fn(uint64_t key, const void *states, void *arg)
{
	const struct walk *w = arg;
	const uint8_t *st = states;
	struct grp g = { .c = w->c, .key = key };
	unsigned p = w->pid;

	memcpy(&g.count, st, 8);
	memcpy(&g.sum, st + 8, 16);
	if (w->user) {
		memcpy(&g.h, st + 24, 8);
	} else {
		memcpy(&g.min, st + 24, 8);
		memcpy(&g.max, st + 32, 8);
	}
	if (ngot[p] == capgot[p]) {
		capgot[p] = capgot[p] ? 2 * capgot[p] : 1024;
		got[p] = realloc(got[p], capgot[p] * sizeof(*got[p]));
		if (!got[p])
			abort();
	}
	got[p][ngot[p]++] = g;
}

static void agg_spmd(void *arg)
{
	const struct pems_aggregate *core[] = {
		pems_aggregate_builtin("count"), pems_aggregate_builtin("sum"),
		pems_aggregate_builtin("min"), pems_aggregate_builtin("max") };
	const struct pems_aggregate *user[] = { pems_aggregate_builtin("count"),
						pems_aggregate_builtin("sum"), &hx };
	unsigned pid = bsp_pid(), c;

	(void)arg;
	for (c = 0; c < nacases; c++) {
		const struct agg_case *a = &acases[c];
		size_t lo = a->off[pid], n = a->off[pid + 1] - lo, m = 0, i;
		uint64_t *keys = pems_malloc(PEMS_GROUPBY_SAMPLES * sizeof(*keys));
		struct row *rows = pems_malloc(n * sizeof(*rows) + 1);
		uint64_t s = a->seed ^ pid, ng;
		struct pems_groupby_plan *plan;
		struct pems_groupby *g;
		struct walk w = { pid, c, a->user };

		memcpy(rows, a->rows + lo, n * sizeof(*rows));
		for (i = 0; n && a->sample != 1 && i < PEMS_GROUPBY_SAMPLES; i++)
			keys[m++] = a->sample ? rows[0].key : rows[below(&s, n)].key;
		plan = pems_groupby_plan(keys, m);
		pems_free(keys);
		g = pems_groupby(plan, rows, n, a->user ? user : core, a->user ? 3 : 4, a->table,
				 &ng);
		pems_free(plan);
		pems_groupby_walk(g, walk_fn, &w);
		pems_groupby_free(g);
	}
}

/* Case @c: distribution, row count, values and the rows' split over v */
static void make_agg_case(struct agg_case *a, uint64_t seed, unsigned v)
{
	uint64_t s = seed, *k;
	unsigned split = (unsigned)below(&s, 4), p, r = (unsigned)below(&s, v);
	bool wide = below(&s, 4) == 0;
	size_t i, sz = below(&s, 20);

	memset(a, 0, sizeof(*a));
	a->seed = seed;
	a->d = (enum dist)below(&s, NDIST);
	a->user = below(&s, 3) == 0;
	a->table = below(&s, 2) ? 0 : 64 + below(&s, 4096);
	a->sample = (unsigned)below(&s, 4) % 3;
	a->n = sz == 0 ? 0 : sz < 6 ? 1 + below(&s, v) : below(&s, MAXROWS + 1);
	a->rows = malloc(a->n * sizeof(*a->rows) + 1);
	k = malloc(a->n * sizeof(*k) + 1);
	ck_assert(a->rows && k);
	gen_keys(&s, a->d, k, a->n);
	for (i = 0; i < a->n; i++) {
		a->rows[i].key = k[i];
		a->rows[i].val = wide ? (int64_t)rnd(&s) : (int64_t)below(&s, 2001) - 1000;
	}
	free(k);
	for (p = 0; p <= v; p++) {
		if (split == 0)		/* even */
			a->off[p] = a->n * p / v;
		else if (split == 1)	/* one VP holds every row */
			a->off[p] = p <= r ? 0 : a->n;
		else			/* random cuts, sorted below */
			a->off[p] = p == 0 ? 0 : p == v ? a->n : below(&s, a->n + 1);
	}
	qsort(a->off, v + 1, sizeof(a->off[0]), (int (*)(const void *, const void *))u64_cmp);
}

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* The reference groups of case @a, compared with what the VPs walked
 * (VP 0's groups first: owners' key ranges increase with the VP). */
static void check_agg_case(const struct agg_case *a, unsigned c, unsigned v, size_t *cur)
{
	struct row *r = malloc(a->n * sizeof(*r) + 1);
	size_t i = 0, j, ng = 0;
	unsigned p = 0;

	ck_assert_ptr_nonnull(r);
	memcpy(r, a->rows, a->n * sizeof(*r));
	qsort(r, a->n, sizeof(*r), row_cmp);
	for (; i < a->n; i = j) {
		struct grp want = { .key = r[i].key, .min = INT64_MAX, .max = INT64_MIN };
		const struct grp *g;

		for (j = i; j < a->n && r[j].key == r[i].key; j++) {
			want.count++;
			want.sum += r[j].val;
			want.h ^= hmix(r[j].val);
			want.min = r[j].val < want.min ? r[j].val : want.min;
			want.max = r[j].val > want.max ? r[j].val : want.max;
		}
		while (p < v && (cur[p] >= ngot[p] || got[p][cur[p]].c != c))
			p++;
		ck_assert_msg(p < v, "seed %llu case %u (%s, v=%u, n=%zu, user %d): group %zu (key %llu) missing",
			      (unsigned long long)seed0, c, dist_name[a->d], v, a->n, a->user, ng,
			      (unsigned long long)want.key);
		g = &got[p][cur[p]++];
		ck_assert_msg(g->key == want.key && g->count == want.count && g->sum == want.sum &&
			      (a->user ? g->h == want.h : g->min == want.min && g->max == want.max),
			      "seed %llu case %u (%s, v=%u, n=%zu, user %d): group %zu: key %llu count %llu, want key %llu count %llu",
			      (unsigned long long)seed0, c, dist_name[a->d], v, a->n, a->user, ng,
			      (unsigned long long)g->key, (unsigned long long)g->count,
			      (unsigned long long)want.key, (unsigned long long)want.count);
		ng++;
	}
	for (p = 0; p < v; p++)
		ck_assert_msg(cur[p] >= ngot[p] || got[p][cur[p]].c != c,
			      "seed %llu case %u (%s, v=%u): VP %u has a group too many (key %llu)",
			      (unsigned long long)seed0, c, dist_name[a->d], v, p,
			      (unsigned long long)got[p][cur[p]].key);
	free(r);
}

/* @count cases with @v VPs in one SPMD section; returns the cases run */
static unsigned agg_batch(unsigned v, unsigned count, uint64_t *s)
{
	struct pems_config cfg;
	size_t cur[VMAX] = { 0 };
	unsigned c, p;

	acases = calloc(count, sizeof(*acases));
	ck_assert_ptr_nonnull(acases);
	for (c = 0; c < count; c++)
		make_agg_case(&acases[c], rnd(s), v);
	nacases = count;
	memset(ngot, 0, sizeof(ngot));
	pems_config_init(&cfg);
	cfg.procs = v;
	cfg.threads = 2;
	cfg.mem = 384u << 20;
	cfg.mu = 4u << 20;
	cfg.tmp[0] = tmpdir;
	cfg.ntmp = 1;
	cfg.quiet = true;
	ck_assert_int_eq(pems_spmd(&cfg, agg_spmd, NULL), 0);
	for (c = 0; c < count; c++) {
		check_agg_case(&acases[c], c, v, cur);
		free(acases[c].rows);
	}
	for (p = 0; p < v; p++)
		ck_assert_uint_eq(cur[p], ngot[p]);
	free(acases);
	return count;
}

/* ---- pems_sort and pems_aggregate on files ---- */

static char *path(const char *name)
{
	static char b[2][4200];
	static int i;
	char *p = b[i++ & 1];

	snprintf(p, sizeof(b[0]), "%s/%s", tmpdir, name);
	return p;
}

static void put_file(const char *name, const void *data, size_t len)
{
	int fd = open(path(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

static void *get_file(const char *name, size_t *len)
{
	struct stat st;
	int fd = open(path(name), O_RDONLY);
	void *b;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	*len = (size_t)st.st_size;
	b = malloc(*len + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(read(fd, b, *len), (ssize_t)*len);
	close(fd);
	return b;
}

/* The cases' files and scratch: a new dir in /dev/shm where there is
 * one (what is tested is key arithmetic, not the disk: the fsyncs of
 * thousands of runs would take most of the time), else spmd_tmp(). */
static const char *files_dir(void)
{
	static char d[64] = "/dev/shm/pems-property.XXXXXX";

	return mkdtemp(d) ? d : spmd_tmp();
}

static void configure_v(unsigned v)
{
	struct pems_config cfg;

	pems_config_init(&cfg);
	cfg.procs = v;
	cfg.threads = 2;
	cfg.mem = 256u << 20;
	cfg.tmp[0] = tmpdir;
	cfg.ntmp = 1;
	cfg.quiet = true;
	ck_assert_int_eq(pems_configure(&cfg), 0);
}

static int rec_cmp(const void *a, const void *b)
{
	return memcmp(a, b, 100);
}

/* u64 keys, or rec100 records whose first 8 key bytes are the keys
 * (big-endian: the sort compares bytes) and whose payload is unique */
static void sort_file_case(uint64_t seed, unsigned v)
{
	uint64_t s = seed, *k;
	enum dist d = (enum dist)below(&s, NDIST);
	bool rec = below(&s, 4) == 0;
	size_t n = below(&s, 5) ? below(&s, rec ? 1500 : 6000) : below(&s, v + 1), i, len;
	size_t rs = rec ? 100 : 8;
	uint8_t *in, *want, *out;
	struct pems_sort_job job = { .in = path("s.in"), .out = path("s.out"),
				     .fmt = rec ? PEMS_FMT_REC100 : PEMS_FMT_U64 };

	k = malloc(n * 8 + 8);
	in = malloc(n * rs + 1);
	ck_assert(k && in);
	gen_keys(&s, d, k, n);
	for (i = 0; i < n; i++) {
		if (!rec) {
			memcpy(in + i * 8, &k[i], 8);
			continue;
		}
		uint64_t be = __builtin_bswap64(k[i]);

		memcpy(in + i * 100, &be, 8);
		in[i * 100 + 8] = (uint8_t)below(&s, 3);	/* ties in byte 8..9 too */
		in[i * 100 + 9] = (uint8_t)below(&s, 2);
		memset(in + i * 100 + 10, 'a' + (int)(i % 26), 90);
		memcpy(in + i * 100 + 10, &i, sizeof(i));
	}
	put_file("s.in", in, n * rs);
	configure_v(v);
	ck_assert_msg(pems_sort(&job) == 0, "seed %llu: sort %s %s n=%zu v=%u failed",
		      (unsigned long long)seed, rec ? "rec100" : "u64", dist_name[d], n, v);
	out = get_file("s.out", &len);
	ck_assert_uint_eq(len, n * rs);
	want = in;
	if (rec) {
		/* keys in order; the same records (the sort need not be stable) */
		for (i = 1; i < n; i++)
			ck_assert_msg(memcmp(out + (i - 1) * 100, out + i * 100, 10) <= 0,
				      "seed %llu: rec100 %s n=%zu v=%u: record %zu out of order",
				      (unsigned long long)seed, dist_name[d], n, v, i);
		qsort(out, n, 100, rec_cmp);
		qsort(want, n, 100, rec_cmp);
	} else {
		qsort(want, n, 8, u64_cmp);
	}
	ck_assert_msg(!memcmp(out, want, n * rs), "seed %llu: sort %s %s n=%zu v=%u differs from the reference",
		      (unsigned long long)seed, rec ? "rec100" : "u64", dist_name[d], n, v);
	free(out);
	free(in);
	free(k);
}

/* kv rows in, kv groups out ({key, count, sum, min, max}, 8 bytes each) */
static void aggregate_file_case(uint64_t seed, unsigned v)
{
	uint64_t s = seed, *k;
	enum dist d = (enum dist)below(&s, NDIST);
	size_t n = below(&s, 5) ? below(&s, 6000) : below(&s, v + 1), i, j, len, ng = 0;
	struct row *r = malloc(n * sizeof(*r) + 1);
	struct pems_aggregate_job job = { .in = path("a.in"), .out = path("a.out"),
					  .in_fmt = PEMS_AGG_IN_KV, .out_fmt = PEMS_AGG_OUT_KV,
					  .naggs = 4 };
	int64_t *out, w[5];

	job.aggs[0] = pems_aggregate_builtin("count");
	job.aggs[1] = pems_aggregate_builtin("sum");
	job.aggs[2] = pems_aggregate_builtin("min");
	job.aggs[3] = pems_aggregate_builtin("max");
	k = malloc(n * 8 + 8);
	ck_assert(k && r);
	gen_keys(&s, d, k, n);
	for (i = 0; i < n; i++)
		r[i] = (struct row){ k[i], (int64_t)below(&s, 1u << 20) - (1 << 19) };
	put_file("a.in", r, n * sizeof(*r));
	configure_v(v);
	ck_assert_msg(pems_aggregate(&job) == 0, "seed %llu: aggregate %s n=%zu v=%u failed: %s",
		      (unsigned long long)seed, dist_name[d], n, v, job.errmsg);
	out = get_file("a.out", &len);
	qsort(r, n, sizeof(*r), row_cmp);
	for (i = 0; i < n; i = j, ng++) {
		w[0] = (int64_t)r[i].key;
		w[1] = 0;
		w[2] = 0;
		w[3] = INT64_MAX;
		w[4] = INT64_MIN;
		for (j = i; j < n && r[j].key == r[i].key; j++) {
			w[1]++;
			w[2] += r[j].val;
			w[3] = r[j].val < w[3] ? r[j].val : w[3];
			w[4] = r[j].val > w[4] ? r[j].val : w[4];
		}
		ck_assert_msg((ng + 1) * 40 <= len && !memcmp(out + ng * 5, w, 40),
			      "seed %llu: aggregate %s n=%zu v=%u: group %zu (key %llu) differs",
			      (unsigned long long)seed, dist_name[d], n, v, ng,
			      (unsigned long long)r[i].key);
	}
	ck_assert_uint_eq(len, ng * 40);
	free(out);
	free(k);
	free(r);
}

/* ---- the local sort kernels ---- */

static void radix_case(uint64_t seed)
{
	uint64_t s = seed, *k, *tmp, *want;
	enum dist d = (enum dist)below(&s, NDIST);
	size_t n = below(&s, 3) ? below(&s, 300) : below(&s, 20000);

	k = malloc(n * 8 + 8);
	tmp = malloc(n * 8 + 8);
	want = malloc(n * 8 + 8);
	ck_assert(k && tmp && want);
	gen_keys(&s, d, k, n);
	memcpy(want, k, n * 8);
	qsort(want, n, 8, u64_cmp);
	if (below(&s, 2)) {
		pems_radix_sort_u64(k, tmp, n);
		ck_assert_msg(!memcmp(k, want, n * 8), "seed %llu: radix u64 %s n=%zu differs",
			      (unsigned long long)seed, dist_name[d], n);
	} else {
		pems_radix_sort_u64_to(k, tmp, n);
		ck_assert_msg(!memcmp(tmp, want, n * 8), "seed %llu: radix u64_to %s n=%zu differs",
			      (unsigned long long)seed, dist_name[d], n);
	}
	free(want);
	free(tmp);
	free(k);
}

/* rec100: stable by the first 10 bytes; the reference sorts by the key
 * and then the input index (bytes 10..17) */
static void radix_rec_case(uint64_t seed)
{
	uint64_t s = seed, *k;
	enum dist d = (enum dist)below(&s, NDIST);
	size_t n = below(&s, 2000), i;
	uint8_t *r = malloc(n * 100 + 1), *tmp = malloc(n * 100 + 1), *want = malloc(n * 100 + 1);

	k = malloc(n * 8 + 8);
	ck_assert(k && r && tmp && want);
	gen_keys(&s, d, k, n);
	for (i = 0; i < n; i++) {
		uint64_t be = __builtin_bswap64(k[i]), ix = __builtin_bswap64(i);

		memset(r + i * 100, 0, 100);
		memcpy(r + i * 100, &be, 8);
		r[i * 100 + 8] = (uint8_t)below(&s, 2);
		memcpy(r + i * 100 + 10, &ix, 8);
	}
	memcpy(want, r, n * 100);
	qsort(want, n, 100, rec_cmp);
	pems_radix_sort_rec100(r, tmp, n);
	ck_assert_msg(!memcmp(r, want, n * 100), "seed %llu: radix rec100 %s n=%zu differs",
		      (unsigned long long)seed, dist_name[d], n);
	free(k);
	free(want);
	free(tmp);
	free(r);
}

/* ---- the cases, split between the kinds ---- */

static double secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static unsigned n_radix(void) { return ncases * 3 / 10; }
static unsigned n_sort(void) { return ncases / 75 > 2 * VMAX ? ncases / 75 : 2 * VMAX; }
static unsigned n_aggf(void) { return ncases / 150 > VMAX ? ncases / 150 : VMAX; }
static unsigned n_groupby(void)
{
	unsigned other = n_radix() + n_sort() + n_aggf();

	return ncases > other + VMAX ? ncases - other : VMAX;
}

START_TEST(groupby_every_v)
{
	double w = 0, t0 = secs();
	uint64_t s = seed0 * 7 + 1;
	unsigned v, done = 0, want = n_groupby();

	/* cases for v in proportion to 1/v^2 (a case costs about v), at
	 * least 8 for every v */
	for (v = 1; v <= VMAX; v++)
		w += 1.0 / ((double)v * v);
	for (v = 1; v <= VMAX; v++) {
		unsigned c = (unsigned)(want / (w * v * v));

		done += agg_batch(v, c > 8 ? c : 8, &s);
	}
	printf("groupby: %u cases, v = 1..%d, %.1f s\n", done, VMAX, secs() - t0);
}
END_TEST

/*
 * Every pems_spmd leaves its context region mapped (context.c: VP 0 may
 * run on in it), a few mappings per VP, so a process running thousands
 * of jobs would reach vm.max_map_count: the file cases run in children,
 * BATCH jobs each.
 */
#define BATCH 100

typedef void (*file_case_fn)(uint64_t seed, unsigned v);

static void in_children(file_case_fn fn, const uint64_t *seeds, const unsigned *vs, unsigned n)
{
	unsigned i, j;
	int st;

	for (i = 0; i < n; i += BATCH) {
		pid_t pid;

		fflush(stdout);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			for (j = i; j < n && j < i + BATCH; j++)
				fn(seeds[j], vs[j]);
			_exit(0);
		}
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "cases %u..%u failed (status %d; seed %llu)", i, j, st,
			      (unsigned long long)seed0);
	}
}

static void file_cases(file_case_fn fn, uint64_t s, unsigned n, unsigned repeat_v)
{
	uint64_t *seeds = malloc(n * sizeof(*seeds) + 1);
	unsigned *vs = malloc(n * sizeof(*vs) + 1), i;

	ck_assert(seeds && vs);
	for (i = 0; i < n; i++) {
		seeds[i] = rnd(&s);
		vs[i] = pick_v(&s, i < repeat_v * VMAX ? i % VMAX : i);
	}
	in_children(fn, seeds, vs, n);
	free(vs);
	free(seeds);
}

START_TEST(sort_files_every_v)
{
	double t0 = secs();
	unsigned n = n_sort();

	file_cases(sort_file_case, seed0 * 11 + 2, n, 2);
	printf("sort: %u cases, v = 1..%d, %.1f s\n", n, VMAX, secs() - t0);
}
END_TEST

START_TEST(aggregate_files_every_v)
{
	double t0 = secs();
	unsigned n = n_aggf();

	file_cases(aggregate_file_case, seed0 * 13 + 3, n, 1);
	printf("aggregate: %u cases, v = 1..%d, %.1f s\n", n, VMAX, secs() - t0);
}
END_TEST

START_TEST(radix_kernels)
{
	uint64_t s = seed0 * 17 + 4;
	double t0 = secs();
	unsigned i, n = n_radix();

	for (i = 0; i < n; i++) {
		if (i % 4 == 3)
			radix_rec_case(rnd(&s));
		else
			radix_case(rnd(&s));
	}
	printf("radix: %u cases, %.1f s\n", n, secs() - t0);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("property");
	TCase *tc = tcase_create("adversarial_keys");
	const char *e;
	SRunner *sr;
	int failed;

	if ((e = getenv("PEMS_PROPERTY_CASES")) && *e)
		ncases = (unsigned)strtoul(e, NULL, 10);
	if ((e = getenv("PEMS_PROPERTY_SEED")) && *e)
		seed0 = strtoull(e, NULL, 10);
	tmpdir = files_dir();
	printf("property: %u cases, seed %llu (PEMS_PROPERTY_CASES, PEMS_PROPERTY_SEED)\n", ncases,
	       (unsigned long long)seed0);
	tcase_set_timeout(tc, 3600);
	tcase_add_test(tc, groupby_every_v);
	tcase_add_test(tc, sort_files_every_v);
	tcase_add_test(tc, aggregate_files_every_v);
	tcase_add_test(tc, radix_kernels);
	suite_add_tcase(su, tc);
	sr = srunner_create(su);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	unlink(path("s.in"));
	unlink(path("s.out"));
	unlink(path("a.in"));
	unlink(path("a.out"));
	if (strcmp(tmpdir, spmd_tmp()))
		rmdir(tmpdir);
	return failed ? 1 : 0;
}
