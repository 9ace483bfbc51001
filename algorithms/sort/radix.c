/*
 * radix.c - radix sort kernels for the local sort of the BSP sort.
 *
 * Both kernels are most-significant-digit-first counting sorts with
 * digits of up to 8 bits.  After one or two MSD passes the buckets fit in
 * the L2 cache, so few passes touch DRAM.
 *
 * Invariants:
 *  1. Every scatter is a stable counting pass (input order kept within a
 *     bucket) and small buckets are finished by insertion sort, which is
 *     stable too; so equal keys keep their input order.
 *  2. A digit in which all keys of a bucket agree costs no scatter.
 *     Buckets of more than SURVEY_N keys are surveyed first in one read
 *     pass (u64: least and greatest key; rec100 items: OR ^ AND of the
 *     keys), and an already ascending bucket - u64: or descending, then
 *     reversed - is finished there; smaller ones find constant digits by
 *     their histogram (one bucket holds all n).  So sorted, reverse,
 *     few-distinct and all-equal inputs stay cheap; sorted rec100
 *     records are not moved.
 *  3. sort(src, oth, n, ..., to_oth) leaves the result in oth when
 *     to_oth, else in src; a scatter src -> oth flips the flag for the
 *     buckets, so data moves only when a digit really splits it.
 *  4. A recursion level keeps its bucket ends (u64: on the stack, 2 KiB a
 *     level, at most 64/3 levels; rec100 items: found again by scanning
 *     after the scatter); the histogram scratch is shared by all levels.
 *  5. rec100 records are not moved by the radix passes: each becomes a
 *     16-byte item (8-byte big-endian key prefix, 2-byte key tail, 4-byte
 *     input index); the items are sorted and the records gathered once.
 *     The items live at the end of the record scratch buffer: gathering
 *     record j into tmp + 100j only overwrites items below j (100(j+1) <=
 *     84n + 16(j+1) for j < n), so no extra memory is needed.
 *  6. u64 digits are taken from key - base, base the least key of the
 *     last surveyed bucket, starting at the highest bit in which the keys
 *     can still differ; a sample sort bucket (a narrow key range) is thus
 *     split 256 ways by its first pass.  Below RADIX keys the digit is
 *     about log2(n) bits wide, and buckets of at most SMALL_N keys are all
 *     finished by one insertion pass over the parent (keys never cross a
 *     bucket bound, so it costs n plus the inversions inside them).
 *  7. The streaming rec100 form (pems_rec100_order) sorts items in the
 *     caller's scratch and compacts them to 4-byte indices in place; the
 *     caller gathers and writes the records piece by piece.
 *  8. A u64 bucket of SMALL_N < n <= MID_N keys (an L2-sized sub-bucket
 *     of a VP's bucket after the first pass) takes one digit of about
 *     log2(n) + 1 bits (at most MID_BITS, counts in a 64 KiB array from
 *     malloc) and one insertion pass, if no digit value
 *     holds more than SMALL_N keys; otherwise it is left untouched for
 *     the 8-bit levels of invariant 6.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "radix.h"
#include "formats/pems_formats.h"

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
#define SMALL_N 16
/* below this a bucket is counted with one histogram, else with four */
#define WIDE_HIST_N 4096
#define HIST_CHUNK ((size_t)1 << 30)
/* buckets larger than this are surveyed first (invariant 2) */
#define SURVEY_N 65536
/* u64 buckets of at most MID_N keys take one wide digit (invariant 8) */
#define MID_N 65536
#define MID_BITS 14

#define REC 100
#define TAIL_SHIFT 32	/* key bytes 8..9 sit at bits 32..47 of item.lo */

struct item {
	uint64_t hi;	/* key bytes 0..7, big-endian value */
	uint64_t lo;	/* key bytes 8..9 << 32 | input index */
};

struct radix_scratch {
	uint32_t part[4][RADIX];	/* per-lane counts, one chunk */
	size_t cnt[RADIX];		/* counts, then bucket fill offsets */
	uint32_t *mid;			/* u64: 2^MID_BITS counts (invariant 8) */
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
static bool prefix_sums(size_t *cnt, unsigned nb, size_t n)
{
	size_t sum = 0, c;
	unsigned b;

	for (b = 0; b < nb; b++) {
		c = cnt[b];
		if (c == n)
			return false;
		cnt[b] = sum;
		sum += c;
	}
	return true;
}

/* ---- u64 ---- */

/*
 * Keys are sorted as (key - base) >> shift digits: base is the least key
 * of the bucket that was last surveyed and the first digit starts at the
 * highest bit in which (key - base) can differ (invariant 6), so a
 * bucket holding a narrow key range -- every VP's bucket is one -- is
 * split 256 ways by its first pass instead of by a constant top byte.
 */
struct u64_range {
	uint64_t base;		/* every key of the bucket is >= base */
	unsigned top;		/* (key - base) agree above bit top - 1 */
};

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

/* Counts of digit ((key - base) >> shift) & mask, four lanes. */
static void u64_hist(const uint64_t *a, size_t n, uint64_t base, unsigned shift,
		     unsigned mask, struct radix_scratch *s)
{
	size_t i = 0, done = 0, len;
	unsigned b;

	memset(s->cnt, 0, (mask + 1) * sizeof(s->cnt[0]));
	if (n < WIDE_HIST_N) {
		for (i = 0; i < n; i++)
			s->cnt[((a[i] - base) >> shift) & mask]++;
		return;
	}
	while (done < n) {
		len = n - done < HIST_CHUNK ? n - done : HIST_CHUNK;
		memset(s->part, 0, sizeof(s->part));
		for (i = done; i + 4 <= done + len; i += 4) {
			s->part[0][((a[i] - base) >> shift) & mask]++;
			s->part[1][((a[i + 1] - base) >> shift) & mask]++;
			s->part[2][((a[i + 2] - base) >> shift) & mask]++;
			s->part[3][((a[i + 3] - base) >> shift) & mask]++;
		}
		for (; i < done + len; i++)
			s->part[0][((a[i] - base) >> shift) & mask]++;
		for (b = 0; b <= mask; b++)
			s->cnt[b] += (size_t)s->part[0][b] + s->part[1][b] +
				     s->part[2][b] + s->part[3][b];
		done += len;
	}
}

static void u64_scatter(const uint64_t *src, uint64_t *dst, size_t n, uint64_t base,
			unsigned shift, unsigned mask, size_t *off)
{
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v = src[i];

		dst[off[((v - base) >> shift) & mask]++] = v;
	}
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

/*
 * One read pass over a large bucket (invariant 2): its least and
 * greatest key become the new base and top; an ascending bucket is
 * done, a descending one is reversed in place and done (equal u64 keys
 * cannot be told apart).  Returns false when nothing is left to sort.
 */
static bool u64_survey(uint64_t *a, size_t n, struct u64_range *r)
{
	uint64_t lo = a[0], hi = a[0];
	bool up = true, down = true;
	size_t i;

	for (i = 1; i < n; i++) {
		uint64_t x = a[i];

		lo = x < lo ? x : lo;
		hi = x > hi ? x : hi;
		up &= a[i - 1] <= x;
		down &= a[i - 1] >= x;
	}
	if (up || down) {
		if (!up)
			u64_reverse(a, n);
		return false;
	}
	r->base = lo;
	r->top = 64 - (unsigned)__builtin_clzll(hi - lo);	/* hi > lo here */
	return true;
}

/* Digit width for @n keys: about log2(n) below RBITS, so that the
 * buckets of a small array hold one or two keys each. */
static unsigned u64_bits(size_t n, unsigned top)
{
	unsigned bits = n >= RADIX ? RBITS : 64 - (unsigned)__builtin_clzll(n);

	if (bits < 3)
		bits = 3;
	return bits < top ? bits : top;
}

/*
 * Invariant 8: a bucket of SMALL_N < n <= MID_N keys (in cache) is
 * sorted by one digit about log2(n) + 1 bits wide -- about half a key
 * per digit value -- and one insertion pass, instead of 8-bit levels
 * that each clear, count and walk 2^8 counters per sub-bucket of a few
 * dozen keys.  When some digit value holds more than SMALL_N keys (keys
 * clustered inside the bucket) nothing is moved and it returns false:
 * the caller takes the 8-bit path, which adapts to any distribution.
 */
static bool u64_mid(uint64_t *src, uint64_t *oth, size_t n, struct u64_range r,
		    bool to_oth, uint32_t *mid)
{
	unsigned bits = 65 - (unsigned)__builtin_clzll(n - 1), shift, b, nb;
	uint32_t sum = 0, c;
	uint64_t *dst = oth;
	size_t i;

	if (bits > MID_BITS)
		bits = MID_BITS;
	if (bits > r.top)
		bits = r.top;
	shift = r.top - bits;
	nb = 1u << bits;
	memset(mid, 0, nb * sizeof(*mid));
	for (i = 0; i < n; i++)
		mid[((src[i] - r.base) >> shift) & (nb - 1)]++;
	for (b = 0; b < nb; b++) {
		c = mid[b];
		if (c > SMALL_N)
			return false;
		mid[b] = sum;
		sum += c;
	}
	for (i = 0; i < n; i++) {
		uint64_t v = src[i];

		oth[mid[((v - r.base) >> shift) & (nb - 1)]++] = v;
	}
	if (to_oth) {
		u64_insertion(dst, n);
		return true;
	}
	/* back into src, each key inserted on the way (no separate copy) */
	for (i = 0; i < n; i++) {
		uint64_t v = oth[i];
		size_t j;

		for (j = i; j > 0 && src[j - 1] > v; j--)
			src[j] = src[j - 1];
		src[j] = v;
	}
	return true;
}

/* Invariant (3): result in oth when to_oth, else in src. */
static void u64_sort(uint64_t *src, uint64_t *oth, size_t n, struct u64_range r,
		     bool to_oth, struct radix_scratch *s)
{
	size_t end[RADIX], b0, c, run;
	unsigned bits = 0, shift = 0, mask = 0, b;
	bool live = n > 1 && r.top > 0, small = false;

	if (live && n > SURVEY_N)
		live = u64_survey(src, n, &r);
	if (live && s->mid && n > SMALL_N && n <= MID_N && u64_mid(src, oth, n, r, to_oth, s->mid))
		return;
	while (live && n > SMALL_N) {
		bits = u64_bits(n, r.top);
		shift = r.top - bits;
		mask = (1u << bits) - 1;
		u64_hist(src, n, r.base, shift, mask, s);
		if (prefix_sums(s->cnt, mask + 1, n))
			break;
		r.top = shift;		/* one digit value: nothing to move */
		live = r.top > 0;
	}
	if (!live || n <= SMALL_N) {
		if (to_oth)
			memcpy(oth, src, n * sizeof(*src));
		if (live)
			u64_insertion(to_oth ? oth : src, n);
		return;
	}
	u64_scatter(src, oth, n, r.base, shift, mask, s->cnt);
	memcpy(end, s->cnt, (mask + 1) * sizeof(end[0]));
	r.top = shift;
	for (b = 0, b0 = 0, run = 0; b <= mask; b0 = end[b], b++) {
		c = end[b] - b0;
		if (c <= SMALL_N) {
			small |= c > 1;
			continue;
		}
		/* small buckets [run, b0) are finished below, in place */
		if (!to_oth)
			memcpy(src + run, oth + run, (b0 - run) * sizeof(*src));
		u64_sort(oth + b0, src + b0, c, r, !to_oth, s);
		run = end[b];
	}
	if (!to_oth)
		memcpy(src + run, oth + run, (n - run) * sizeof(*src));
	/* the small buckets in one pass: keys never cross a bucket bound,
	 * so this costs n plus the inversions inside small buckets */
	if (small)
		u64_insertion(to_oth ? oth : src, n);
}

/* The counts of invariant 8 come from malloc (64 KiB, not on a VP's
 * stack, which may be as small as 64 KiB); without them every bucket
 * takes the 8-bit path. */
static void u64_entry(uint64_t *src, uint64_t *oth, size_t n, bool to_oth)
{
	struct radix_scratch s = { .mid = NULL };

	if (n > SMALL_N)
		s.mid = malloc(sizeof(uint32_t) << MID_BITS);
	u64_sort(src, oth, n, (struct u64_range){ 0, 64 }, to_oth, &s);
	free(s.mid);
}

void pems_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n)
{
	u64_entry(a, tmp, n, false);
}

void pems_radix_sort_u64_to(uint64_t *src, uint64_t *dst, size_t n)
{
	u64_entry(src, dst, n, true);
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
		if (prefix_sums(s->cnt, RADIX, n))
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

/* the rec100 key layout is the formats module's (pems_formats.h) */
static void extract_items(const uint8_t *recs, struct item *it, size_t n)
{
	struct pems_key k;
	size_t i;

	for (i = 0; i < n; i++) {
		pems_key_rec100(recs + i * REC, &k);
		it[i].hi = k.hi;
		it[i].lo = k.lo << TAIL_SHIFT | (uint32_t)i;
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

/* Sort the records at @recs into @tmp (invariant 5); false when they
 * were in order already and nothing was written. */
static bool rec100_sort(const uint8_t *recs, uint8_t *tmp, size_t n)
{
	struct radix_scratch s;
	uintptr_t end, at;
	struct item *a, *b;

	if (n < 2)
		return false;
	/* a: the last 16n bytes of tmp, 16-byte aligned; b: just below */
	end = (uintptr_t)(tmp + n * REC);
	at = (end - n * sizeof(struct item)) & ~(uintptr_t)15;
	a = (struct item *)at;
	b = (struct item *)(at - n * sizeof(struct item));
	extract_items(recs, a, n);
	if (item_sort(a, b, n, 0, false, &s))
		return false;
	gather(recs, tmp, a, n);
	return true;
}

void pems_radix_sort_rec100(uint8_t *recs, uint8_t *tmp, size_t n)
{
	if (rec100_sort(recs, tmp, n))
		memcpy(recs, tmp, n * REC);
}

void pems_radix_sort_rec100_to(const uint8_t *src, uint8_t *dst, size_t n)
{
	if (!rec100_sort(src, dst, n))
		memcpy(dst, src, n * REC);
}

/*
 * Streaming form (invariant 7): the items at @scratch are sorted, then
 * compacted into the uint32 input indices: index j is written at byte 4j
 * after item j (at byte 16j) was read, so it never overwrites an item
 * still to be read.
 */
const uint32_t *pems_rec100_order(const uint8_t *recs, size_t n, void *scratch)
{
	struct radix_scratch s;
	uintptr_t at = ((uintptr_t)scratch + 15) & ~(uintptr_t)15;
	struct item *a = (struct item *)at, *b = a + n;
	uint32_t *order = (uint32_t *)at;
	size_t j;

	if (n < 2)
		return NULL;
	extract_items(recs, a, n);
	if (item_sort(a, b, n, 0, false, &s))
		return NULL;
	for (j = 0; j < n; j++)
		order[j] = (uint32_t)item_index(&a[j]);
	return order;
}

void pems_rec100_gather(const uint8_t *recs, const uint32_t *order, size_t from,
			size_t cnt, uint8_t *out)
{
	size_t j, end = from + cnt;

	if (!order) {
		memcpy(out, recs + from * REC, cnt * REC);
		return;
	}
	for (j = from; j < end; j++) {
		if (j + GATHER_AHEAD < end) {
			const uint8_t *p = recs + (size_t)order[j + GATHER_AHEAD] * REC;

			__builtin_prefetch(p);
			__builtin_prefetch(p + REC - 1);
		}
		memcpy(out, recs + (size_t)order[j] * REC, REC);
		out += REC;
	}
}
