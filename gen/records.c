/*
 * records.c - deterministic sort records (pems_gen_records).
 *
 * Record i of a generated file is a pure function of (seed, skew, count,
 * i): every random value is splitmix64's output for the counter
 * stream_key + i * golden, so blocks can be generated in any order and in
 * parallel.  The key is 80 bits (hi: 64, lo: 16); each format lays it
 * out in a record with its ->encode (algorithms/formats/record.c).
 */
#include <errno.h>
#include <string.h>
#include "gen_internal.h"

#define GOLDEN 0x9e3779b97f4a7c15ULL
enum stream { S_KEY, S_TAIL, S_RANK_HI, S_RANK_LO, S_FILL, S_COUNT };

/* per-call constants of a generator */
struct gen_ctx {
	const struct pems_gen_records *g;
	uint64_t sk[S_COUNT];	/* stream keys */
	uint64_t step;		/* key distance of sorted / reverse */
};

static uint64_t rnd(const struct gen_ctx *c, enum stream s, uint64_t i)
{
	return gen_mix64(c->sk[s] + i * GOLDEN);
}

static const char *const skew_names[] = {
	[PEMS_GEN_UNIFORM] = "uniform", [PEMS_GEN_ZIPF] = "zipf",
	[PEMS_GEN_DUP] = "dup", [PEMS_GEN_SORTED] = "sorted",
	[PEMS_GEN_REVERSE] = "reverse", [PEMS_GEN_EQUAL] = "equal",
};

int pems_gen_skew_parse(const char *name, enum pems_gen_skew *out)
{
	size_t i;

	for (i = 0; i < sizeof(skew_names) / sizeof(skew_names[0]); i++) {
		if (!strcmp(name, skew_names[i])) {
			*out = (enum pems_gen_skew)i;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * Zipf(1.1)-like rank >= 1: P(rank >= r) = r^-0.1, i.e. P(rank = r) ~
 * r^-1.1 (the discrete Pareto tail), from r = x^-10 for x uniform in
 * (0, 1]; about 7% of the keys are the most frequent one.
 */
static uint64_t zipf_rank(uint64_t u64)
{
	double x = 1.0 - (double)(u64 >> 11) * 0x1p-53, x2, x10, r;

	x2 = x * x;
	x10 = x2 * x2;
	x10 = x10 * x10 * x2;
	r = 1.0 / x10;
	return r >= 0x1p62 ? (uint64_t)1 << 62 : (uint64_t)r;
}

static void ctx_init(struct gen_ctx *c, const struct pems_gen_records *g)
{
	unsigned s;

	c->g = g;
	for (s = 0; s < S_COUNT; s++)
		c->sk[s] = gen_mix64(g->seed * GOLDEN + s * 0xd1b54a32d192ed03ULL);
	c->step = g->count ? UINT64_MAX / g->count : 1;
	if (!c->step)
		c->step = 1;
}

static void key_of_rank(const struct gen_ctx *c, uint64_t rank, struct pems_key *k)
{
	k->hi = rnd(c, S_RANK_HI, rank);
	k->lo = (uint16_t)rnd(c, S_RANK_LO, rank);
}

static void gen_key(const struct gen_ctx *c, uint64_t i, struct pems_key *k)
{
	switch (c->g->skew) {
	case PEMS_GEN_ZIPF:
		key_of_rank(c, zipf_rank(rnd(c, S_KEY, i)), k);
		return;
	case PEMS_GEN_DUP:
		key_of_rank(c, rnd(c, S_KEY, i) % 16, k);
		return;
	case PEMS_GEN_EQUAL:
		key_of_rank(c, 0, k);
		return;
	case PEMS_GEN_SORTED:
		k->hi = i * c->step;
		break;
	case PEMS_GEN_REVERSE:
		k->hi = (c->g->count - 1 - i) * c->step;
		break;
	case PEMS_GEN_UNIFORM:
	default:
		k->hi = rnd(c, S_KEY, i);
		break;
	}
	k->lo = (uint16_t)rnd(c, S_TAIL, i);
}

void pems_gen_records(const struct pems_gen_records *g, uint64_t first, size_t n, uint8_t *buf)
{
	const struct pems_record_format *f = pems_format_get(g->fmt);
	struct gen_ctx c;
	struct pems_key k;
	uint64_t i, fill;
	size_t j;

	ctx_init(&c, g);
	for (j = 0; j < n; j++) {
		i = first + j;
		gen_key(&c, i, &k);
		fill = g->fmt == PEMS_FMT_U64 ? 0 : rnd(&c, S_FILL, i);
		f->encode(f, &k, i, fill, buf + j * f->size);
	}
}

static int fill(const void *g, uint64_t first, size_t n, uint8_t *buf)
{
	pems_gen_records(g, first, n, buf);
	return 0;
}

int pems_gen_records_file(const struct pems_gen_records *g, const char *out,
			  pems_gen_progress *progress, void *arg)
{
	const struct pems_record_format *f = pems_format_get(g->fmt);
	struct gen_file gf = { .count = g->count, .fill = fill, .g = g, .progress = progress,
			       .arg = arg };

	if (!f || !f->encode || !f->size)
		return -EINVAL;
	gf.item = f->size;
	gf.per_block = GEN_BLOCK / f->size;
	return gen_write(&gf, out);
}
