/*
 * radix.c - radix sort kernels for the local sort of the BSP sort.
 *
 * Both kernels are most-significant-digit-first counting sorts with
 * 8-bit digits.  After one or two MSD passes the buckets fit in the L2
 * cache, so few passes touch DRAM: on the 2-core build machine this was
 * about 2x faster than an LSD sort doing all its passes over the whole
 * array (32 Mi random u64, CPU time: 8-bit LSD ~260 MB/s, 11-bit LSD
 * ~330 MB/s, this ~650 MB/s; 4 Mi rec100: ~2.1 GB/s).  11-bit digits
 * measured no faster here and need 8x the scratch.
 *
 * Invariants:
 *  1. Every scatter is a stable counting pass (input order kept within a
 *     bucket) and small buckets are finished by insertion sort, which is
 *     stable too; so equal keys keep their input order.
 *  2. A digit in which all keys of a bucket agree costs no scatter.
 *     Buckets of more than SURVEY_N keys are surveyed first in one read
 *     pass (OR ^ AND of the keys finds all such digits at once, and an
 *     already ascending bucket - u64: or descending, then reversed - is
 *     finished there); smaller ones find them by their histogram (one
 *     bucket holds all n).  So sorted, reverse, few-distinct and
 *     all-equal inputs stay cheap; sorted rec100 records are not moved.
 *  3. sort(src, oth, n, level, to_oth) leaves the result in oth when
 *     to_oth, else in src; a scatter src -> oth flips the flag for the
 *     buckets, so data moves only when a digit really splits it.
 *  4. Bucket bounds are found again by scanning after the scatter, so a
 *     recursion level keeps no arrays: the one scratch (histograms and
 *     bucket pointers) is shared by all levels and stack use stays
 *     bounded (about sizeof(struct radix_scratch) + 100 bytes a level).
 *  5. rec100 records are not moved by the radix passes: each becomes a
 *     16-byte item (8-byte big-endian key prefix, 2-byte key tail, 4-byte
 *     input index); the items are sorted and the records gathered once.
 *     The items live at the end of the record scratch buffer: gathering
 *     record j into tmp + 100j only overwrites items below j (100(j+1) <=
 *     84n + 16(j+1) for j < n), so no extra memory is needed.
 *  6. u64 buckets of at most LSD_N keys (in cache) are finished by LSD:
 *     one histogram pass counts all their remaining digits at once, and
 *     digits in which all keys agree are skipped.  rec100 items stay
 *     MSD to the end (buckets of one or two items after two passes).
 */
#include <stdbool.h>
#include <string.h>
#include "radix.h"

#ifndef PEMS_RADIX_BITS
#define PEMS_RADIX_BITS 8
#endif
#define RBITS PEMS_RADIX_BITS
#define RADIX (1u << RBITS)
#define RMASK (RADIX - 1)
/* digits of a 64-bit word, top first; the last one may overlap */
#define WORD_DIGITS ((64 + RBITS - 1) / RBITS)
#define TAIL_DIGITS ((16 + RBITS - 1) / RBITS)
#define ITEM_DIGITS (WORD_DIGITS + TAIL_DIGITS)
#define SMALL_N 32
/* below this a bucket is counted with one histogram, else with four */
#define WIDE_HIST_N 4096
#define HIST_CHUNK ((size_t)1 << 30)
/* u64 buckets of at most this many keys (2 MiB) are finished by LSD */
#define LSD_N 262144
/* buckets larger than this are surveyed first (invariant 2) */
#define SURVEY_N 65536

#define REC 100
#define TAIL_SHIFT 32	/* key bytes 8..9 sit at bits 32..47 of item.lo */

struct item {
	uint64_t hi;	/* key bytes 0..7, big-endian value */
	uint64_t lo;	/* key bytes 8..9 << 32 | input index */
};

struct radix_scratch {
	union {
		uint32_t part[4][RADIX];	/* per-lane counts, one chunk */
		uint32_t lsd[WORD_DIGITS][RADIX];	/* leaf digit counts */
	};
	size_t cnt[RADIX];		/* counts, then bucket fill offsets */
};

/* shift of digit @level (0 = most significant) within a 64-bit word */
static unsigned word_shift(unsigned level)
{
	unsigned top = (level + 1) * RBITS;

	return top >= 64 ? 0 : 64 - top;
}

/* ---- histograms: 4 lanes so runs of equal digits do not serialize ---- */

#define DEFINE_HIST(name, type, expr)					\
static void name##_chunk(const type *a, size_t n, unsigned level,	\
			 struct radix_scratch *s)			\
{									\
	size_t i = 0;							\
	unsigned b;							\
									\
	memset(s->part, 0, sizeof(s->part));				\
	for (; i + 4 <= n; i += 4) {					\
		s->part[0][expr(&a[i], level)]++;			\
		s->part[1][expr(&a[i + 1], level)]++;			\
		s->part[2][expr(&a[i + 2], level)]++;			\
		s->part[3][expr(&a[i + 3], level)]++;			\
	}								\
	for (; i < n; i++)						\
		s->part[0][expr(&a[i], level)]++;			\
	for (b = 0; b < RADIX; b++)					\
		s->cnt[b] += (size_t)s->part[0][b] + s->part[1][b] +	\
			     s->part[2][b] + s->part[3][b];		\
}									\
									\
static void name(const type *a, size_t n, unsigned level,		\
		 struct radix_scratch *s)				\
{									\
	size_t i, len;							\
									\
	memset(s->cnt, 0, sizeof(s->cnt));				\
	if (n < WIDE_HIST_N) {						\
		for (i = 0; i < n; i++)					\
			s->cnt[expr(&a[i], level)]++;			\
		return;							\
	}								\
	for (i = 0; i < n; i += len) {					\
		len = n - i < HIST_CHUNK ? n - i : HIST_CHUNK;		\
		name##_chunk(a + i, len, level, s);			\
	}								\
}

/* Turn counts into start offsets; false when one bucket holds all n. */
static bool prefix_sums(size_t *cnt, size_t n)
{
	size_t sum = 0, c;
	unsigned b;

	for (b = 0; b < RADIX; b++) {
		c = cnt[b];
		if (c == n)
			return false;
		cnt[b] = sum;
		sum += c;
	}
	return true;
}

static bool prefix_sums32(uint32_t *cnt, size_t n)
{
	uint32_t sum = 0, c;
	unsigned b;

	for (b = 0; b < RADIX; b++) {
		c = cnt[b];
		if (c == n)
			return false;
		cnt[b] = sum;
		sum += c;
	}
	return true;
}

/* ---- u64 ---- */

static unsigned u64_digit(const uint64_t *v, unsigned level)
{
	return (*v >> word_shift(level)) & RMASK;
}

DEFINE_HIST(u64_hist, uint64_t, u64_digit)

static void u64_insertion(uint64_t *a, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		uint64_t v = a[i];

		for (j = i; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static void u64_scatter(const uint64_t *src, uint64_t *dst, size_t n,
			unsigned shift, size_t *off)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = src[i];

		dst[off[(v >> shift) & RMASK]++] = v;
	}
}

/* Counts of digits @level.. of @n keys, all in one pass (invariant 6). */
static void u64_lsd_hist(const uint64_t *a, size_t n, unsigned level,
			 const unsigned *sh, uint32_t (*c)[RADIX])
{
	unsigned nd = WORD_DIGITS - level, d;
	size_t i;

	memset(c, 0, nd * sizeof(*c));
	for (i = 0; i < n; i++) {
		uint64_t k = a[i];

		for (d = 0; d < nd; d++)
			c[d][(k >> sh[d]) & RMASK]++;
	}
}

/* Leaf: LSD passes over digits level.. of an in-cache bucket. */
static void u64_lsd(uint64_t *src, uint64_t *oth, size_t n, unsigned level,
		    bool to_oth, struct radix_scratch *s)
{
	unsigned nd = WORD_DIGITS - level, d, sh[WORD_DIGITS];
	uint32_t (*c)[RADIX] = s->lsd;
	uint64_t *x = src, *y = oth, *t;
	size_t i;

	for (d = 0; d < nd; d++)
		sh[d] = word_shift(level + d);
	u64_lsd_hist(src, n, level, sh, c);
	for (d = nd; d-- > 0;) {
		if (!prefix_sums32(c[d], n))
			continue;
		for (i = 0; i < n; i++)
			y[c[d][(x[i] >> sh[d]) & RMASK]++] = x[i];
		t = x;
		x = y;
		y = t;
	}
	if ((x == oth) != to_oth)
		memcpy(y, x, n * sizeof(*x));
}

/*
 * One read pass over a large bucket (invariant 2): the bits that differ
 * between any two keys (OR ^ AND of all keys), and whether the keys are
 * already ascending (1) or descending (-1), else 0.
 */
static uint64_t u64_survey(const uint64_t *a, size_t n, int *order)
{
	uint64_t o = a[0], x = a[0];
	bool up = true, down = true;
	size_t i;

	for (i = 1; i < n; i++) {
		o |= a[i];
		x &= a[i];
		up &= a[i - 1] <= a[i];
		down &= a[i - 1] >= a[i];
	}
	*order = up ? 1 : down ? -1 : 0;
	return o ^ x;
}

static void u64_reverse(uint64_t *a, size_t n)
{
	size_t i;
	uint64_t t;

	for (i = 0; i < n / 2; i++) {
		t = a[i];
		a[i] = a[n - 1 - i];
		a[n - 1 - i] = t;
	}
}

/* Skip the digits no key differs in; returns the first level that
 * needs sorting, or WORD_DIGITS when @src is already done (reversed in
 * place when it was descending: equal u64 keys cannot be told apart). */
static unsigned u64_first_level(uint64_t *src, size_t n, unsigned level)
{
	int order;
	uint64_t diff = u64_survey(src, n, &order);

	if (order) {
		if (order < 0)
			u64_reverse(src, n);
		return WORD_DIGITS;
	}
	while (level < WORD_DIGITS && !((diff >> word_shift(level)) & RMASK))
		level++;
	return level;
}

/* Invariant (3): result in oth when to_oth, else in src. */
static void u64_sort(uint64_t *src, uint64_t *oth, size_t n, unsigned level,
		     bool to_oth, struct radix_scratch *s)
{
	size_t i, j;
	unsigned shift, b;

	if (n > SURVEY_N)
		level = u64_first_level(src, n, level);
	for (; level < WORD_DIGITS && n > SMALL_N; level++) {
		u64_hist(src, n, level, s);
		if (prefix_sums(s->cnt, n))
			break;
	}
	if (level >= WORD_DIGITS || n <= SMALL_N) {
		if (to_oth) {
			memcpy(oth, src, n * sizeof(*src));
			src = oth;
		}
		if (level < WORD_DIGITS)
			u64_insertion(src, n);
		return;
	}
	if (n <= LSD_N && level > 0) {
		u64_lsd(src, oth, n, level, to_oth, s);
		return;
	}
	shift = word_shift(level);
	u64_scatter(src, oth, n, shift, s->cnt);
	for (i = 0; i < n; i = j) {
		b = (oth[i] >> shift) & RMASK;
		for (j = i + 1; j < n && ((oth[j] >> shift) & RMASK) == b; j++)
			;
		u64_sort(oth + i, src + i, j - i, level + 1, !to_oth, s);
	}
}

void pems_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
	struct radix_scratch s;

	u64_sort(a, tmp, n, 0, false, &s);
}

/* ---- rec100 items ---- */

/* word (0: hi, 1: lo) and shift of item digit @level */
static unsigned item_shift(unsigned level, unsigned *word)
{
	unsigned top;

	if (level < WORD_DIGITS) {
		*word = 0;
		return word_shift(level);
	}
	*word = 1;
	top = (level - WORD_DIGITS + 1) * RBITS;
	return TAIL_SHIFT + (top >= 16 ? 0 : 16 - top);
}

static unsigned item_digit(const struct item *it, unsigned level)
{
	unsigned word, shift = item_shift(level, &word);

	return ((word ? it->lo : it->hi) >> shift) & RMASK;
}

DEFINE_HIST(item_hist, struct item, item_digit)

static bool item_less(const struct item *x, const struct item *y)
{
	if (x->hi != y->hi)
		return x->hi < y->hi;
	return (x->lo >> TAIL_SHIFT) < (y->lo >> TAIL_SHIFT);
}

/* Stable: an item moves left only past strictly greater keys. */
static void item_insertion(struct item *it, size_t n)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct item v = it[i];

		for (j = i; j > 0 && item_less(&v, &it[j - 1]); j--)
			it[j] = it[j - 1];
		it[j] = v;
	}
}

static void item_scatter(const struct item *src, struct item *dst, size_t n,
			 unsigned level, size_t *off)
{
	unsigned word, shift = item_shift(level, &word);
	size_t i;

	if (word) {
		for (i = 0; i < n; i++)
			dst[off[(src[i].lo >> shift) & RMASK]++] = src[i];
	} else {
		for (i = 0; i < n; i++)
			dst[off[(src[i].hi >> shift) & RMASK]++] = src[i];
	}
}

/* Like u64_first_level: skip digits no key differs in; ITEM_DIGITS
 * when the items are already in (stable) order. */
static unsigned item_first_level(const struct item *it, size_t n,
				 unsigned level)
{
	uint64_t ohi = it[0].hi, ahi = it[0].hi, olo = it[0].lo, alo = it[0].lo;
	unsigned word, shift;
	bool up = true;
	size_t i;

	for (i = 1; i < n; i++) {
		ohi |= it[i].hi;
		ahi &= it[i].hi;
		olo |= it[i].lo;
		alo &= it[i].lo;
		up &= !item_less(&it[i], &it[i - 1]);
	}
	if (up)
		return ITEM_DIGITS;
	ohi ^= ahi;
	olo = (olo ^ alo) & (0xffffULL << TAIL_SHIFT);	/* not the index */
	for (; level < ITEM_DIGITS; level++) {
		shift = item_shift(level, &word);
		if (((word ? olo : ohi) >> shift) & RMASK)
			break;
	}
	return level;
}

/* Invariant (3): result in oth when to_oth, else in src.  Returns true
 * when nothing had to move (the items were in order). */
static bool item_sort(struct item *src, struct item *oth, size_t n,
		      unsigned level, bool to_oth, struct radix_scratch *s)
{
	size_t i, j;
	unsigned b;

	if (n > SURVEY_N)
		level = item_first_level(src, n, level);
	for (; level < ITEM_DIGITS && n > SMALL_N; level++) {
		item_hist(src, n, level, s);
		if (prefix_sums(s->cnt, n))
			break;
	}
	if (level >= ITEM_DIGITS || n <= SMALL_N) {
		if (to_oth) {
			memcpy(oth, src, n * sizeof(*src));
			src = oth;
		}
		if (level < ITEM_DIGITS)
			item_insertion(src, n);
		return level >= ITEM_DIGITS && !to_oth;
	}
	item_scatter(src, oth, n, level, s->cnt);
	for (i = 0; i < n; i = j) {
		b = item_digit(&oth[i], level);
		for (j = i + 1; j < n && item_digit(&oth[j], level) == b; j++)
			;
		item_sort(oth + i, src + i, j - i, level + 1, !to_oth, s);
	}
	return false;
}

static uint64_t load_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static void extract_items(const uint8_t *recs, struct item *it, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const uint8_t *r = recs + i * REC;

		it[i].hi = load_be64(r);
		it[i].lo = (uint64_t)(r[8] << 8 | r[9]) << TAIL_SHIFT |
			   (uint32_t)i;
	}
}

#define GATHER_AHEAD 16

static size_t item_index(const struct item *it)
{
	return (uint32_t)it->lo;
}

/* tmp + 100j = record it[j].index; it lies in tmp's tail (invariant 5). */
static void gather(const uint8_t *recs, uint8_t *tmp, const struct item *it,
		   size_t n)
{
	size_t j, idx;

	for (j = 0; j < n; j++) {
		idx = item_index(&it[j]);
		if (j + GATHER_AHEAD < n) {
			const uint8_t *p = recs +
				item_index(&it[j + GATHER_AHEAD]) * REC;

			__builtin_prefetch(p);
			__builtin_prefetch(p + REC - 1);
		}
		memcpy(tmp + j * REC, recs + idx * REC, REC);
	}
}

void pems_radix_sort_rec100(uint8_t *recs, uint8_t *tmp, size_t n)
{
	struct radix_scratch s;
	uintptr_t end, at;
	struct item *a, *b;

	if (n < 2)
		return;
	/* a: the last 16n bytes of tmp, 16-byte aligned; b: just below */
	end = (uintptr_t)(tmp + n * REC);
	at = (end - n * sizeof(struct item)) & ~(uintptr_t)15;
	a = (struct item *)at;
	b = (struct item *)(at - n * sizeof(struct item));
	extract_items(recs, a, n);
	if (item_sort(a, b, n, 0, false, &s))
		return;		/* already in order: records stay */
	gather(recs, tmp, a, n);
	memcpy(recs, tmp, n * REC);
}
