/*
 * records.c - deterministic test records and record hashing.
 *
 * Record i of a generated file is a pure function of (seed, skew, count,
 * i): every random value is splitmix64's output for the counter
 * stream_key + i * golden, so blocks can be generated in any order and in
 * parallel.  The key is 80 bits (hi: 64, lo: 16); formats show it as:
 *   u64      hi, native byte order (8 bytes)
 *   rec100   hi and lo big-endian (10 bytes), the index big-endian
 *            (8 bytes), 82 filler bytes
 *   ascii100 the 80 bits (+ 4 zero bits) as 14 characters of an alphabet
 *            in ASCII order, ' ', 16 hex digits of the index, ' ', 67
 *            filler characters, '\n': LC_ALL=C byte order of the lines is
 *            the order of the binary keys.
 */
#include <errno.h>
#include <string.h>
#include "cli.h"

#define GOLDEN 0x9e3779b97f4a7c15ULL
#define REC 100
#define ASCII_KEY 14

/* 64 characters in increasing ASCII order */
static const char alphabet[] =
	"+-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
static const char hexdig[] = "0123456789ABCDEF";

enum stream { S_KEY, S_TAIL, S_RANK_HI, S_RANK_LO, S_FILL, S_COUNT };

/* per-call constants of a generator */
struct gen_ctx {
	const struct cli_gen *g;
	uint64_t sk[S_COUNT];	/* stream keys */
	uint64_t step;		/* key distance of sorted / reverse */
};

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(const struct gen_ctx *c, enum stream s, uint64_t i)
{
	return mix64(c->sk[s] + i * GOLDEN);
}

static const char *const skew_names[] = {
	[CLI_SKEW_UNIFORM] = "uniform", [CLI_SKEW_ZIPF] = "zipf",
	[CLI_SKEW_DUP] = "dup", [CLI_SKEW_SORTED] = "sorted",
	[CLI_SKEW_REVERSE] = "reverse", [CLI_SKEW_EQUAL] = "equal",
};

int cli_skew_parse(const char *name, enum cli_skew *out)
{
	size_t i;

	for (i = 0; i < sizeof(skew_names) / sizeof(skew_names[0]); i++) {
		if (!strcmp(name, skew_names[i])) {
			*out = (enum cli_skew)i;
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

struct key {
	uint64_t hi;
	uint16_t lo;
};

static void ctx_init(struct gen_ctx *c, const struct cli_gen *g)
{
	unsigned s;

	c->g = g;
	for (s = 0; s < S_COUNT; s++)
		c->sk[s] = mix64(g->seed * GOLDEN + s * 0xd1b54a32d192ed03ULL);
	c->step = g->count ? UINT64_MAX / g->count : 1;
	if (!c->step)
		c->step = 1;
}

static void key_of_rank(const struct gen_ctx *c, uint64_t rank, struct key *k)
{
	k->hi = rnd(c, S_RANK_HI, rank);
	k->lo = (uint16_t)rnd(c, S_RANK_LO, rank);
}

static void gen_key(const struct gen_ctx *c, uint64_t i, struct key *k)
{
	switch (c->g->skew) {
	case CLI_SKEW_ZIPF:
		key_of_rank(c, zipf_rank(rnd(c, S_KEY, i)), k);
		return;
	case CLI_SKEW_DUP:
		key_of_rank(c, rnd(c, S_KEY, i) % 16, k);
		return;
	case CLI_SKEW_EQUAL:
		key_of_rank(c, 0, k);
		return;
	case CLI_SKEW_SORTED:
		k->hi = i * c->step;
		break;
	case CLI_SKEW_REVERSE:
		k->hi = (c->g->count - 1 - i) * c->step;
		break;
	case CLI_SKEW_UNIFORM:
	default:
		k->hi = rnd(c, S_KEY, i);
		break;
	}
	k->lo = (uint16_t)rnd(c, S_TAIL, i);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	int b;

	for (b = 7; b >= 0; b--) {
		p[b] = (uint8_t)v;
		v >>= 8;
	}
}

static void gen_rec100(const struct key *k, uint64_t i, uint64_t fill,
		       uint8_t *r)
{
	uint64_t w;
	size_t off;

	put_be64(r, k->hi);
	r[8] = (uint8_t)(k->lo >> 8);
	r[9] = (uint8_t)k->lo;
	put_be64(r + 10, i);
	for (off = 18; off + 8 <= REC; off += 8) {
		w = fill ^ (off * 0x0101010101010101ULL);
		memcpy(r + off, &w, 8);
	}
	memcpy(r + off, &fill, REC - off);
}

static void gen_ascii100(const struct key *k, uint64_t i, uint64_t fill,
			 uint8_t *r)
{
	unsigned __int128 v = ((unsigned __int128)k->hi << 16 | k->lo) << 4;
	size_t j;

	for (j = 0; j < ASCII_KEY; j++)
		r[j] = alphabet[(v >> (78 - 6 * j)) & 63];
	r[14] = ' ';
	for (j = 0; j < 16; j++)
		r[15 + j] = hexdig[(i >> (60 - 4 * j)) & 15];
	r[31] = ' ';
	for (j = 32; j < REC - 1; j++) {
		if ((j - 32) % 10 == 0 && j > 32)
			fill = fill * 0x5851f42d4c957f2dULL + 1;
		r[j] = alphabet[(fill >> ((j - 32) % 10 * 6)) & 63];
	}
	r[REC - 1] = '\n';
}

void cli_gen_records(const struct cli_gen *g, uint64_t first, size_t n,
		     uint8_t *buf)
{
	struct gen_ctx c;
	struct key k;
	uint64_t i, fill;
	size_t j;

	ctx_init(&c, g);
	for (j = 0; j < n; j++) {
		i = first + j;
		gen_key(&c, i, &k);
		if (g->fmt == PEMS_FMT_U64) {
			memcpy(buf + j * 8, &k.hi, 8);
			continue;
		}
		fill = rnd(&c, S_FILL, i);
		if (g->fmt == PEMS_FMT_REC100)
			gen_rec100(&k, i, fill, buf + j * REC);
		else
			gen_ascii100(&k, i, fill, buf + j * REC);
	}
}

int cli_record_cmp(enum pems_format fmt, const uint8_t *a, const uint8_t *b)
{
	uint64_t x, y;

	switch (fmt) {
	case PEMS_FMT_U64:
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return x < y ? -1 : x > y;
	case PEMS_FMT_ASCII100:
		return memcmp(a, b, ASCII_KEY);
	case PEMS_FMT_REC100:
	default:
		return memcmp(a, b, 10);
	}
}

uint64_t cli_record_hash(const uint8_t *p, size_t len)
{
	uint64_t h = GOLDEN ^ len, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, p + i, len - i);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	}
	return mix64(h);
}
