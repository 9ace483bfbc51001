/*
 * kv.c - GROUP BY test rows (pems_gen_kv_file): 16-byte little-endian
 * records {u64 key, i64 value}.  Row i is a pure function of (seed,
 * groups, skew, i):
 *   rank   uniform: splitmix(i) mod G; Zipf(S) over 1..G by
 *          rejection-inversion (Hoermann & Derflinger), rank 1 most
 *          frequent; groups 0: all keys distinct (rank = i)
 *   key    a bijective 64-bit mix of (rank, seed), so G ranks give G
 *          distinct keys spread over the whole u64 range
 *   value  uniform in [-1000000, 1000000]
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "gen_internal.h"

/* the generator with its rejection-inversion constants */
struct kv_gen {
	uint64_t count, groups, seed;
	double s;		/* zipf exponent; 0: uniform */
	double h_x1, h_n, cut;
};

/* splitmix64 */
static uint64_t mix64(uint64_t z)
{
	return gen_mix64(z + 0x9e3779b97f4a7c15ULL);
}

static double unit(uint64_t u)
{
	return (double)(u >> 11) * 0x1p-53;
}

/* H(x) = integral of x^-s, and its inverse (s != 1 and s == 1) */
static double zh(const struct kv_gen *g, double x)
{
	double l = log(x);

	if (fabs(1 - g->s) < 1e-9)
		return l;
	return expm1((1 - g->s) * l) / (1 - g->s);
}

static double zh_inv(const struct kv_gen *g, double x)
{
	double t;

	if (fabs(1 - g->s) < 1e-9)
		return exp(x);
	t = x * (1 - g->s);
	if (t < -1)
		t = -1;
	return exp(log1p(t) / (1 - g->s));
}

static void zipf_init(struct kv_gen *g)
{
	g->h_x1 = zh(g, 1.5) - 1;	/* h(1) = 1 */
	g->h_n = zh(g, (double)g->groups + 0.5);
	g->cut = 2 - zh_inv(g, zh(g, 2.5) - exp(-g->s * log(2.0)));
}

/* Zipf rank in 1..G from the random stream starting at @st */
static uint64_t zipf_rank(const struct kv_gen *g, uint64_t st)
{
	uint64_t j;

	for (j = 0;; j++) {
		double u = g->h_n + unit(mix64(st + j * 0x632be59bd9b4e019ULL)) * (g->h_x1 - g->h_n);
		double x = zh_inv(g, u);
		double k = floor(x + 0.5);

		if (k < 1)
			k = 1;
		if (k > (double)g->groups)
			k = (double)g->groups;
		if (k - x <= g->cut || u >= zh(g, k + 0.5) - exp(-g->s * log(k)))
			return (uint64_t)k;
	}
}

static void kv_records(const struct kv_gen *g, uint64_t first, size_t n, uint8_t *buf)
{
	uint64_t sk = mix64(g->seed * 0xd1b54a32d192ed03ULL), i, rank, key;
	int64_t val;
	size_t j;

	for (j = 0; j < n; j++) {
		i = first + j;
		if (!g->groups)
			rank = i;
		else if (g->s > 0)
			rank = zipf_rank(g, sk ^ mix64(i * 2 + 1));
		else
			rank = mix64(sk + i * 0x9e3779b97f4a7c15ULL) % g->groups;
		key = mix64(rank ^ mix64(g->seed));	/* bijective in rank */
		val = (int64_t)(mix64(sk + i * 0xbf58476d1ce4e5b9ULL + 7) % 2000001) - 1000000;
		memcpy(buf + j * 16, &key, 8);
		memcpy(buf + j * 16 + 8, &val, 8);
	}
}

static int fill(const void *g, uint64_t first, size_t n, uint8_t *buf)
{
	kv_records(g, first, n, buf);
	return 0;
}

int pems_gen_kv_file(const struct pems_gen_kv *k, const char *out, pems_gen_progress *progress,
		     void *arg)
{
	struct kv_gen g = { .count = k->count, .groups = k->groups, .seed = k->seed, .s = k->zipf };
	struct gen_file f = { .count = k->count, .item = 16, .per_block = GEN_BLOCK / 16,
			      .fill = fill, .g = &g, .progress = progress, .arg = arg };

	if (g.s < 0 || g.s > 100 || (g.s > 0 && !g.groups))
		return -EINVAL;
	if (g.s > 0)
		zipf_init(&g);
	return gen_write(&f, out);
}
