/*
 * sort.c - BSP sample sort of files larger than memory.
 *
 * Supersteps (v VPs, VP i owns input records [i*n/v, (i+1)*n/v)):
 *   0  sample:    read SAMPLES random records of the own slice; gather
 *                 them at VP 0
 *   1  splitters: VP 0 sorts the samples, picks v-1 splitters; broadcast
 *   2  partition: read the slice straight into context memory (4 MiB
 *                 pieces, several in flight) and assign each record a
 *                 bucket as its piece arrives, put the slice in bucket order
 *                 (u64: in place; rec100: stable scatter copy), post the
 *                 buckets with pems_exchange (data copied to the message
 *                 store), FREE the slice so the context written back is
 *                 tiny, allreduce the bucket sizes
 *   3  sort:      the exchange arrived directly in a context buffer (in
 *                 source order); radix sort it and write it at its final
 *                 offset in the output (u64: sorted into a second buffer;
 *                 rec100: only 32-byte sort items, then the records are
 *                 gathered 4 MiB at a time, each piece written
 *                 asynchronously while the next is gathered)
 * Disk traffic: read N (2) + write N, read N (message store) + write N
 * (3) = 4N, the bound of a two-pass external merge sort.
 *
 * Keys compare as (key, global record index), so equal keys split
 * across buckets instead of overloading one VP, and -- the local sort
 * being stable and buckets arriving in source order -- the output is the
 * stable sort of the input, byte-identical for every v, k and backend.
 *
 * Profiling knob: PEMS_SORT_TRACE=1 prints the plan (v, k, mu, message
 * memory) and the time the VPs spent in each phase, summed over VPs;
 * PEMS_SORT_TRACE=2 also one line per VP and phase with its start and end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pems_algorithms.h"
#include "sort/radix.h"
#include "formats/pems_formats.h"
#include "job.h"

#define SAMPLES 256		/* per VP: bucket sizes within ~+-15 % */
#define PAGE 4096u

struct skey {			/* a sample / splitter */
	uint64_t hi;		/* first 8 key bytes, big-endian */
	uint64_t lo;		/* rec100: bytes 8..9; u64: 0 */
	uint64_t idx;		/* global record index: the tie-break */
};

/* phases timed inside the VPs (summed over VPs) with PEMS_SORT_TRACE=1 */
enum { PH_READ, PH_CLASSIFY, PH_SCATTER, PH_EXCHANGE, PH_SORT, PH_WRITE, NPHASES };
static const char *const phase_name[NPHASES] = {
	"read slice", "classify", "scatter", "exchange", "local sort", "write output"
};

struct sort_ctx {
	const struct pems_sort_job *job;
	size_t rec;		/* bytes per record */
	uint64_t n;		/* records */
	int in, out;		/* pems_file handles */
	unsigned v;
	atomic_uint_fast64_t done[2];	/* bytes partitioned, written */
	atomic_uint_fast64_t ns[NPHASES];	/* PEMS_SORT_TRACE: time per phase */
	int trace;		/* PEMS_SORT_TRACE: 1 sums, 2 also one line a phase */
	uint64_t t0;		/* trace clock origin */
};

static struct sort_ctx S;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Charge the time since *t to @phase; *t becomes now. */
static void lap(int phase, uint64_t *t)
{
	uint64_t n;

	if (!S.trace)
		return;
	n = now_ns();
	atomic_fetch_add(&S.ns[phase], n - *t);
	if (S.trace > 1)
		fprintf(stderr, "pems: sort trace: vp %u tid %d %-13s %8.3f .. %8.3f s\n",
			(unsigned)bsp_pid(), (int)gettid(), phase_name[phase],
			(double)(*t - S.t0) / 1e9, (double)(n - S.t0) / 1e9);
	*t = n;
}

/* the key layouts are the formats module's (pems_formats.h) */
static struct skey key_of(const uint8_t *r, uint64_t idx)
{
	struct pems_key k;
	struct skey sk;

	if (S.rec == 8)
		pems_key_u64(r, &k);
	else
		pems_key_rec100(r, &k);
	sk.hi = k.hi;
	sk.lo = k.lo;
	sk.idx = idx;
	return sk;
}

static int key_cmp(const struct skey *a, const struct skey *b)
{
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static int key_qcmp(const void *a, const void *b)
{
	return key_cmp(a, b);
}

static void fail(const char *what, long long rc)
{
	pems_job_fail("sort", what, rc);
}

static uint64_t slice_lo(unsigned pid) { return S.n * pid / S.v; }

/* superstep 0: SAMPLES records of the slice, one at a random position in
 * each of SAMPLES equal strata (good splitters for sorted inputs too) */
static void take_samples(unsigned pid, struct skey *out, uint32_t *count)
{
	uint64_t lo = slice_lo(pid), len = slice_lo(pid + 1) - lo;
	unsigned i, m = len < SAMPLES ? (unsigned)len : SAMPLES;
	uint64_t *idx = pems_malloc(SAMPLES * sizeof(*idx));
	uint64_t *off = pems_malloc(SAMPLES * sizeof(*off));
	uint8_t *recs = pems_malloc(SAMPLES * 100);
	long long rc;

	for (i = 0; i < m; i++) {
		uint64_t a = len * i / m, b = len * (i + 1) / m;

		idx[i] = lo + a + pems_mix64(pid * 1000003ull + i) % (b - a);
		off[i] = idx[i] * S.rec;
	}
	rc = pems_file_read_pieces(S.in, recs, off, m, S.rec);
	if (rc != (long long)(m * S.rec))
		fail("reading samples of the input", rc);
	for (i = 0; i < m; i++)
		out[i] = key_of(recs + i * S.rec, idx[i]);
	*count = m;
	pems_free(recs);
	pems_free(off);
	pems_free(idx);
}

struct sample_msg {
	uint32_t count;
	uint32_t pad;
	struct skey k[SAMPLES];
};

/* superstep 1 on VP 0: v-1 evenly spaced splitters of the sorted sample */
static void pick_splitters(struct sample_msg *all, struct skey *spl)
{
	size_t total = 0, i, j, t = 0;
	struct skey *flat;

	for (i = 0; i < S.v; i++)
		total += all[i].count;
	flat = pems_malloc((total + 1) * sizeof(*flat));
	for (i = 0; i < S.v; i++)
		for (j = 0; j < all[i].count; j++)
			flat[t++] = all[i].k[j];
	qsort(flat, total, sizeof(*flat), key_qcmp);
	for (i = 1; i < S.v; i++) {
		if (total)
			spl[i - 1] = flat[i * total / S.v];
		else
			spl[i - 1] = (struct skey){ UINT64_MAX, UINT64_MAX, UINT64_MAX };
	}
	pems_free(flat);
}

/* Bucket of a record: the number of splitters <= it, searched in the
 * bucket range [lo, hi] that the key's table cell allows. */
static unsigned search(const struct skey *spl, const struct skey *k, unsigned lo,
		       unsigned hi)
{
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (key_cmp(&spl[mid], k) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Classifying a record by binary search over v-1 splitters costs log2(v)
 * unpredictable branches.  Instead, cut the key range spanned by the
 * splitters into TBITS-bit cells of their leading key bits; a cell lists
 * the buckets its keys can fall in -- almost always one, so most records
 * are classified by one table load.
 */
#define TBITS 16
struct classifier {
	const struct skey *spl;
	uint64_t base, top;	/* first and last splitter key (hi) */
	unsigned shift;
	uint32_t (*cell)[2];	/* [lo, hi] bucket per cell */
};

static void classifier_init(struct classifier *c, const struct skey *spl)
{
	uint64_t span, i, ncell = 1u << TBITS;
	unsigned a0, b0;

	c->spl = spl;
	c->cell = pems_malloc(ncell * sizeof(*c->cell));
	if (S.v == 1) {
		c->base = c->top = 0;
		c->shift = 63;
		return;
	}
	c->base = spl[0].hi;
	c->top = spl[S.v - 2].hi;
	span = c->top - c->base;
	/* shift <= 48: span < 2^64 */
	for (c->shift = 0; (span >> c->shift) >= ncell; c->shift++)
		;
	/* lo_key and hi_key grow with i up to the first cell past the range,
	 * so the bounds (the number of splitters <= each) are one sweep over
	 * the splitters, not two searches per cell (v of these per run) */
	for (i = 0, a0 = b0 = 0; i < ncell; i++) {
		uint64_t lo_key = c->base + (i << c->shift);
		uint64_t hi_key = lo_key + ((1ull << c->shift) - 1);
		struct skey a = { lo_key, 0, 0 }, b = { hi_key, UINT64_MAX, UINT64_MAX };

		if (lo_key < c->base || lo_key > c->top) {	/* past the range */
			c->cell[i][0] = c->cell[i][1] = S.v - 1;
			continue;
		}
		if (hi_key < lo_key)
			b.hi = UINT64_MAX;
		while (a0 < S.v - 1 && key_cmp(&spl[a0], &a) <= 0)
			a0++;
		while (b0 < S.v - 1 && key_cmp(&spl[b0], &b) <= 0)
			b0++;
		c->cell[i][0] = a0;
		c->cell[i][1] = b0;
	}
}

static unsigned classify(const struct classifier *c, const struct skey *k)
{
	const uint32_t *cell;

	if (k->hi < c->base)
		return 0;
	if (k->hi > c->top)
		return S.v - 1;
	cell = c->cell[(k->hi - c->base) >> c->shift];
	if (cell[0] == cell[1])
		return cell[0];
	return search(c->spl, k, cell[0], cell[1]);
}

/*
 * Put the @n records of @data into bucket order; returns where they are.
 * @next and @end are scratch of v entries.
 *
 * u64: in place, with American flag sort's permutation -- swap each key
 * into the fill position of its bucket.  The positions touched are v
 * sequential streams, so it runs at memory speed, and no second
 * slice-sized buffer is needed (half the memory and half the fresh pages
 * of a scatter copy).  It is not stable, which equal u64 keys (identical
 * bytes) cannot show.
 *
 * rec100 must stay stable (the output is the stable sort): a counting
 * scatter into a second buffer.  (A stable in-place permutation that
 * follows the cycles of the destinations cost about 1 s more CPU per GiB
 * in one measurement on a loaded machine: it chases one random record
 * after another, a cache miss each.)
 */
static void permute_u64(uint64_t *data, uint32_t *bk, size_t *next, const size_t *end)
{
	size_t b, i, j;
	uint32_t d;
	uint64_t x;

	for (b = 0; b < S.v; b++) {
		for (i = next[b]; i < end[b]; i = next[b]) {
			d = bk[i];
			if (d == b) {
				next[b]++;
				continue;
			}
			j = next[d]++;
			x = data[i];
			data[i] = data[j];
			data[j] = x;
			bk[i] = bk[j];
		}
	}
}

static uint8_t *by_bucket(uint8_t *data, uint32_t *bk, size_t n,
			  const uint64_t *counts, size_t *next, size_t *end)
{
	size_t b, i, sum = 0;
	uint8_t *out;

	for (b = 0; b < S.v; b++) {
		next[b] = sum;
		sum += counts[b];
		end[b] = sum;
	}
	if (S.rec == 8) {
		permute_u64((uint64_t *)(uintptr_t)data, bk, next, end);
		return data;
	}
	out = pems_malloc(n * 100 + 1);
	for (i = 0; i < n; i++)
		memcpy(out + next[bk[i]]++ * 100, data + i * 100, 100);
	return out;
}

/*
 * Read the slice into @buf (file offset @a0 at buf[0], the first record
 * at buf[head]) and classify its @n records as they arrive: RPIECE-byte
 * pieces, RDEPTH of them in flight, so the disk reads the rest of the
 * slice while the first pieces are classified.
 */
#define RPIECE (4u << 20)
#define RDEPTH 4

static size_t piece_len(size_t total, size_t p)
{
	return total - p * RPIECE < RPIECE ? total - p * RPIECE : RPIECE;
}

static void read_piece(uint8_t *buf, size_t total, size_t p, uint64_t a0,
		       struct pems_file_aio *aio)
{
	int rc = pems_file_start(S.in, false, buf + p * RPIECE, piece_len(total, p),
				 a0 + p * RPIECE, aio);

	if (rc)
		fail("reading the input", rc);
}

static void classify_slice(uint8_t *buf, size_t head, size_t n, uint64_t lo,
			   const struct classifier *cls, uint32_t *bk, uint64_t *counts,
			   uint64_t a0, uint64_t *t)
{
	struct pems_file_aio aio[RDEPTH];
	size_t total = head + n * S.rec, np = (total + RPIECE - 1) / RPIECE, p, i = 0;

	for (p = 0; p < np && p < RDEPTH; p++)
		read_piece(buf, total, p, a0, &aio[p]);
	for (p = 0; p < np; p++) {
		size_t have, upto, len = piece_len(total, p);
		long long rc = pems_file_wait(&aio[p % RDEPTH]);

		if (rc != (long long)len)
			fail("reading the input", rc);
		if (p + RDEPTH < np)
			read_piece(buf, total, p + RDEPTH, a0, &aio[p % RDEPTH]);
		lap(PH_READ, t);
		have = p * RPIECE + len;
		upto = have > head ? (have - head) / S.rec : 0;
		if (upto > n)
			upto = n;
		for (; i < upto; i++) {
			struct skey k = key_of(buf + head + i * S.rec, lo + i);

			bk[i] = classify(cls, &k);
			counts[bk[i]]++;
		}
		lap(PH_CLASSIFY, t);
	}
}

/* superstep 2: read the slice, order it by bucket, post the exchange */
static void partition(unsigned pid, const struct skey *spl, uint64_t *counts,
		      void **recv, size_t *recvbytes)
{
	uint64_t lo = slice_lo(pid), n = slice_lo(pid + 1) - lo;
	uint64_t off = lo * S.rec, a0 = off & ~(uint64_t)(PAGE - 1), t = now_ns();
	size_t bytes = n * S.rec, head = off - a0, i;
	uint8_t *buf = pems_malloc(head + bytes + PAGE), *data = buf + head, *send;
	size_t *next = pems_malloc(S.v * sizeof(*next));
	size_t *end = pems_malloc(S.v * sizeof(*end));
	size_t *sendcounts = pems_malloc(S.v * sizeof(*sendcounts));
	uint32_t *bk;
	struct classifier cls;

	if (n > UINT32_MAX)	/* bucket numbers and sort items hold 32-bit indices */
		fail("a VP's slice holds 2^32 records or more (raise --procs)", -EFBIG);
	memset(counts, 0, S.v * sizeof(*counts));
	bk = pems_malloc(n * sizeof(*bk) + 1);
	classifier_init(&cls, spl);
	classify_slice(buf, head, n, lo, &cls, bk, counts, a0, &t);
	atomic_fetch_add(&S.done[0], bytes / 2);
	pems_free(cls.cell);
	send = by_bucket(data, bk, n, counts, next, end);
	for (i = 0; i < S.v; i++)
		sendcounts[i] = counts[i] * S.rec;
	lap(PH_SCATTER, &t);
	pems_exchange(send, sendcounts, recv, recvbytes, NULL);
	/* the data is in the message store now: free it before the sync so
	 * that the context written back is a few pages, not the slice */
	if (send != data)
		pems_free(send);
	pems_free(bk);
	pems_free(sendcounts);
	pems_free(end);
	pems_free(next);
	pems_free(buf);
	lap(PH_EXCHANGE, &t);
	atomic_fetch_add(&S.done[0], bytes - bytes / 2);
}

/*
 * rec100 output without a second bucket-sized buffer: the sort order is
 * computed on 16-byte items, then the records are gathered PIECE bytes at
 * a time into one of NPIECE buffers whose start maps to a page-aligned
 * file offset (so each piece's interior goes O_DIRECT) and written
 * asynchronously while the next piece is gathered; the bytes of the
 * record that crosses the end of a piece move to the front of the next
 * buffer.
 */
#define PIECE (4u << 20)
#define NPIECE 3
#define PIECE_BUF (PIECE + PAGE)	/* a piece, the record over its end, alignment */

static void write_rec100(const uint8_t *recv, size_t n, uint64_t off, uint64_t *t)
{
	uint8_t *items = pems_malloc(n * 32 + 16 + 1);
	uint8_t *raw = pems_malloc(NPIECE * PIECE_BUF + PAGE);
	uint8_t *base = (uint8_t *)(((uintptr_t)raw + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	const uint32_t *order = pems_rec100_order(recv, n, items);
	uint64_t a0 = off & ~(uint64_t)(PAGE - 1);
	size_t fill = off - a0, start = fill, j = 0, take, upto, len[NPIECE] = { 0 };
	struct pems_file_aio aio[NPIECE];
	unsigned cur = 0, nxt, i;
	uint8_t *piece;
	long long rc;
	int erc;

	lap(PH_SORT, t);
	while (j < n) {
		piece = base + cur * PIECE_BUF;
		take = (PIECE + 100 - fill) / 100;
		if (take > n - j)
			take = n - j;
		pems_rec100_gather(recv, order, j, take, piece + fill);
		fill += take * 100;
		j += take;
		if (fill < PIECE && j < n)
			continue;
		upto = j == n ? fill : PIECE;
		nxt = (cur + 1) % NPIECE;
		if (len[nxt]) {		/* its write must be done before reuse */
			rc = pems_file_wait(&aio[nxt]);
			if (rc != (long long)len[nxt])
				fail("writing the output", rc);
			len[nxt] = 0;
		}
		memcpy(base + nxt * PIECE_BUF, piece + upto, fill - upto);
		erc = pems_file_start(S.out, true, piece + start, upto - start, a0 + start,
				      &aio[cur]);
		if (erc)
			fail("writing the output", erc);
		len[cur] = upto - start;
		a0 += upto;
		fill -= upto;
		start = 0;
		cur = nxt;
	}
	for (i = 0; i < NPIECE; i++) {
		if (!len[i])
			continue;
		rc = pems_file_wait(&aio[i]);
		if (rc != (long long)len[i])
			fail("writing the output", rc);
	}
	pems_free(raw);
	pems_free(items);
}

/* Write @len bytes at @off from @buf (aligned like @off) in pieces that
 * end at PIECE boundaries of the file, with NPIECE + 1 in flight: a
 * deeper queue than one pems_file_write keeps, and only the first and
 * last piece have an unaligned end. */
static void write_deep(const uint8_t *buf, size_t len, uint64_t off)
{
	struct pems_file_aio aio[NPIECE + 1];
	uint64_t a0 = off & ~(uint64_t)(PIECE - 1), end = off + len, from, to;
	size_t np = (size_t)((end - a0 + PIECE - 1) / PIECE), p, plen[NPIECE + 1];
	long long rc;
	int erc;

	for (p = 0; p < np + NPIECE + 1; p++) {
		unsigned s = p % (NPIECE + 1);

		if (p >= NPIECE + 1) {
			rc = pems_file_wait(&aio[s]);
			if (rc != (long long)plen[s])
				fail("writing the output", rc);
		}
		if (p >= np)
			continue;
		from = a0 + p * PIECE > off ? a0 + p * PIECE : off;
		to = a0 + (p + 1) * PIECE < end ? a0 + (p + 1) * PIECE : end;
		plen[s] = (size_t)(to - from);
		erc = pems_file_start(S.out, true, (uint8_t *)(uintptr_t)buf + (from - off),
				      plen[s], from, &aio[s]);
		if (erc)
			fail("writing the output", erc);
	}
}

/* superstep 3: sort the bucket and write it at its offset */
static void sort_and_write(unsigned pid, uint8_t *recv, size_t bytes,
			   const uint64_t *totals)
{
	uint64_t first = 0, off, t = now_ns();
	size_t n = bytes / S.rec;
	uint8_t *tmp, *data;
	unsigned i;

	for (i = 0; i < pid; i++)
		first += totals[i];
	off = first * S.rec;
	if (S.rec == 100) {
		write_rec100(recv, n, off, &t);
		pems_free(recv);
	} else {
		/* place the result so that buffer and file offset share their
		 * page alignment: the interior of the write then goes O_DIRECT */
		tmp = pems_malloc(bytes + PAGE + 1);
		data = tmp + off % PAGE;
		/* sorted straight from the received buffer into the output one */
		pems_radix_sort_u64_to((uint64_t *)recv, (uint64_t *)data, n);
		pems_free(recv);
		lap(PH_SORT, &t);
		write_deep(data, bytes, off);
		pems_free(tmp);
	}
	lap(PH_WRITE, &t);
	atomic_fetch_add(&S.done[1], bytes);
}

static void sort_spmd(void *arg)
{
	unsigned pid = bsp_pid();
	struct sample_msg *mine = pems_malloc(sizeof(*mine)), *all = NULL;
	struct skey *spl = pems_malloc(S.v * sizeof(*spl));
	uint64_t *counts = pems_malloc(S.v * sizeof(*counts));
	uint64_t *totals = pems_malloc(S.v * sizeof(*totals));
	void *recv = NULL;
	size_t recvbytes = 0;

	(void)arg;
	memset(mine, 0, sizeof(*mine));
	take_samples(pid, mine->k, &mine->count);
	if (pid == 0)
		all = pems_malloc(S.v * sizeof(*all));
	pems_gather(0, mine, all, sizeof(*mine));
	pems_free(mine);
	if (pid == 0) {
		pick_splitters(all, spl);
		pems_free(all);
	}
	pems_broadcast(0, spl, (S.v - 1) * sizeof(*spl) + 1);
	partition(pid, spl, counts, &recv, &recvbytes);
	pems_allreduce(counts, totals, S.v, PEMS_UINT64, PEMS_SUM);
	sort_and_write(pid, recv, recvbytes, totals);
	pems_free(spl);
	pems_free(counts);
	pems_free(totals);
}

/* ---- choosing v, k and mu, and checking space up front ---- */

/*
 * Memory plan (bytes, per rank), for v VPs and message chunks of C bytes:
 *   k * mu           the VPs computing: mu = the larger of superstep 2
 *                    (the slice, rec100: a second copy of it, and 4
 *                    bytes a record of bucket numbers) and
 *                    superstep 3 (the bucket, up to 1.3 N/v with the
 *                    sampling's imbalance, and u64: a second copy for the
 *                    radix sort; rec100: 32 bytes a record of sort items
 *                    and one output piece), + 2 MiB (stack, tables)
 *   (2kv + 8k) * C   message buffers (pems/msg.c invariant 5)
 * The first falls with v, the second grows with it; take the v that
 * minimises the sum, for the largest C <= 1 MiB that fits -- message
 * I/O runs at disk speed only with large requests.
 */
static uint64_t mu_for(uint64_t bytes, unsigned v)
{
	uint64_t tables = (uint64_t)v * (sizeof(struct skey) + 48) +
			  (uint64_t)v * sizeof(struct sample_msg) * 2;
	uint64_t slice = bytes / v, part, sort;

	part = slice * (S.rec == 8 ? 1 : 2) + slice / S.rec * 4;
	if (S.rec == 8)
		sort = slice * 26 / 10;
	else
		sort = slice * 13 / 10 * 132 / 100 + NPIECE * PIECE_BUF + PAGE;
	return (part > sort ? part : sort) + tables + (2u << 20);
}

static int plan(struct pems_config *cfg, uint64_t bytes, const struct pems_plan_env *env)
{
	unsigned k, best_v;
	int rc = pems_plan_extra(cfg, bytes, "sort", mu_for, env);

	if (rc)
		return rc;
	k = cfg->threads;
	best_v = cfg->procs;
	if (bytes / S.rec < best_v)
		best_v = bytes / S.rec > k ? (unsigned)(bytes / S.rec) : k;
	if (!bytes || best_v < 1)
		best_v = 1;
	cfg->procs = best_v;
	if (!cfg->mu)
		cfg->mu = mu_for(bytes, best_v);
	cfg->mu = (cfg->mu + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
	return 0;
}

/* plan() for the cost model: S.rec is the only state mu_for reads */
void pems_sort_shape(struct pems_sort_shape *s)
{
	s->samples = SAMPLES;
	s->key = sizeof(struct skey);
	s->sample_msg = sizeof(struct sample_msg);
}

int pems_sort_plan(struct pems_config *cfg, enum pems_format fmt, uint64_t bytes,
		   const struct pems_plan_env *env)
{
	size_t saved = S.rec;
	int rc;

	if (!pems_format_get(fmt) || !pems_format_get(fmt)->sortable)
		return -EINVAL;
	S.rec = pems_format_size(fmt);
	rc = plan(cfg, bytes, env);
	S.rec = saved;
	return rc;
}

/* ---- the job ---- */

/* pems_job_poll_fn: partition, then sort+write, in bytes */
static bool sort_poll(void *state, bool final, char *phase, size_t len, uint64_t *done,
		      uint64_t *total)
{
	(void)state;
	return pems_job_sort_progress(final, atomic_load(&S.done[0]), S.n * S.rec,
				      atomic_load(&S.done[1]), S.n * S.rec, phase, len, done,
				      total);
}

static void trace_plan(const struct pems_config *cfg)
{
	S.trace = getenv("PEMS_SORT_TRACE") ? atoi(getenv("PEMS_SORT_TRACE")) : 0;
	S.t0 = now_ns();
	if (S.trace)
		fprintf(stderr, "pems: sort trace: v=%u k=%u mu=%zu MiB msg_mem=%zu MiB chunk=%zu KiB\n",
			cfg->procs, cfg->threads, cfg->mu >> 20, cfg->msg_mem >> 20,
			(size_t)(cfg->msg_mem / (2ull * cfg->threads * cfg->procs + 8ull * cfg->threads)) >> 10);
}

static void trace_phases(void)
{
	for (int i = 0; S.trace && i < NPHASES; i++)
		fprintf(stderr, "pems: sort trace: %-13s %8.3f s (sum over VPs)\n", phase_name[i],
			(double)atomic_load(&S.ns[i]) / 1e9);
}

/* The input: a sortable format, whole records; sets S.n.  0 or -errno. */
static int check_input(const struct pems_sort_job *job, uint64_t *bytes)
{
	struct stat st;
	int rc;

	if (!pems_format_get(job->fmt) || !pems_format_get(job->fmt)->sortable) {
		fprintf(stderr, "pems: error: sort: format not sortable; use u64 or rec100\n");
		return -EINVAL;
	}
	if (stat(job->in, &st)) {
		rc = -errno;
		fprintf(stderr, "pems: error: sort: %s: %s\n", job->in, strerror(errno));
		return rc;
	}
	if ((uint64_t)st.st_size % S.rec) {
		fprintf(stderr, "pems: error: sort: %s: size %llu is not a multiple of the %zu-byte record\n",
			job->in, (unsigned long long)st.st_size, S.rec);
		return -EINVAL;
	}
	*bytes = (uint64_t)st.st_size;
	S.n = *bytes / S.rec;
	return 0;
}

int pems_sort(const struct pems_sort_job *job)
{
	struct pems_plan_env env = pems_plan_here(false);
	struct pems_job j;
	uint64_t bytes = 0;
	int rc;

	memset(&S, 0, sizeof(S));
	S.job = job;
	S.rec = pems_format_size(job->fmt);
	pems_job_init(&j, "sort", job->cfg, job->progress, job->progress_arg, sort_poll, NULL);
	rc = pems_job_lock(&j, job->out);	/* before any work */
	if (!rc)
		rc = check_input(job, &bytes);
	if (!rc)
		rc = plan(&j.cfg, bytes, &env);
	/* scratch: the messages, plus a sixteenth for the sampling's
	 * imbalance and 256 MiB of contexts */
	if (!rc)
		rc = pems_job_space(&j, job->out, bytes + bytes / 16 + (256u << 20), bytes);
	if (rc)
		return pems_job_end(&j, rc, false, 0);
	S.v = j.cfg.procs;
	trace_plan(&j.cfg);
	rc = pems_job_input(&j, job->in);
	if (!rc)
		rc = pems_job_output(&j, job->out, true, bytes);
	if (!rc) {
		S.in = j.in;
		S.out = j.out_handle;
		rc = pems_job_run(&j, sort_spmd, NULL);
		if (!rc)
			trace_phases();
	}
	return pems_job_end(&j, rc, false, 0);
}
