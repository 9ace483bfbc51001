/*
 * textsort.c - BSP sample sort of variable-length records: text lines,
 * CSV rows, fixed-size records with a key range (formats/pems_formats.h).
 *
 * The input is cut into v byte slices; a record belongs to the slice
 * holding its first byte.  Supersteps (v VPs):
 *   (CSV only) parity: read the slice, count its '"' bytes (parity) and
 *              note the parity at the sample positions; allgather, so
 *              each VP knows whether its slice starts inside quotes
 *   0 sample:  read NPOS 4 KiB pieces of the slice, take the first
 *              SAMPLES/NPOS records that start in each (at most
 *              SPL_MAX bytes of each) and their file offsets; gather
 *              at VP 0
 *   1 split:   VP 0 sorts the samples, picks v-1 splitters; broadcast
 *   2 part:    read the slice and the rest of its last record, frame
 *              its records, assign each a bucket (binary search over
 *              the splitters, 64-bit key prefixes first), copy them in
 *              bucket order, each with its terminator (one is added to
 *              a last line without), pems_exchange, free the slice;
 *              allreduce the bucket sizes
 *   3 sort:    frame the received bucket (records packed back to back:
 *              no allocation per record), merge-sort 16-byte items
 *              (key prefix, index), full comparison only on equal
 *              prefixes, and write the records in order at the bucket's
 *              offset in the output, 4 MiB pieces in flight
 *   (-u)       drop records equal to the one before, allreduce the
 *              sizes, write in one more superstep
 * Disk traffic 4N (CSV 5N: the parity pass reads the input once more).
 *
 * Order: records compare as (key order, file offset) -- the offset
 * breaks ties, so equal keys spread over buckets by input position, and
 * since a bucket receives its records in source-VP order, i.e. file
 * order, the index in the bucket is the offset's order.  With -u the
 * splitters compare by key only: equal keys meet in one bucket, whose
 * first (earliest) record is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "pems_algorithms.h"
#include "sort/tsort.h"

#define SAMPLES 128		/* per VP */
#define NPOS 32			/* pieces read per VP for them */
#define SPL_MAX 256		/* bytes of a sample record kept */
#define SPIECE 4096u		/* bytes read per sample */
#define PAGE 4096u
#define RPIECE (1u << 20)	/* CSV parity pass reads */
#define RDEPTH 4

struct sample_msg {
	uint32_t count;
	uint16_t len[SAMPLES];
	uint64_t off[SAMPLES];
	uint8_t bytes[SAMPLES][SPL_MAX];
};

struct spl {			/* splitters as broadcast */
	uint32_t count;
	uint16_t len[1];	/* really [v - 1], then off[], then bytes */
};

struct ts_state S_ts;
#define S S_ts

/* ---- errors ---- */

/* Line number of the byte at @off: count terminators before it. */
static uint64_t line_of(uint64_t off)
{
	size_t piece = 1u << 20, i;
	uint8_t *buf = pems_malloc(piece);
	uint64_t line = 1, at = 0;
	uint8_t eol = S.ts->kind == PEMS_TEXT_CSV ? '\n' : S.ts->eol;

	while (at < off) {
		size_t n = off - at < piece ? (size_t)(off - at) : piece;
		long long rc = pems_file_read(S.in, buf, n, at);

		if (rc <= 0)
			break;
		for (i = 0; i < (size_t)rc; i++)
			line += buf[i] == eol;
		at += (uint64_t)rc;
	}
	pems_free(buf);
	return line;
}

void ts_fail(const char *what, long long rc)
{
	bsp_abort("pems: error: sort: %s: %s", what,
		  rc < 0 ? strerror((int)-rc) : "short transfer (file changed?)");
}

/* A data error at byte @off of the input: "IN: line N: why". */
void ts_bad(uint64_t off, const char *why)
{
	bsp_abort("pems: error: sort: %s: line %llu: %s", S.job->in,
		  (unsigned long long)line_of(off), why);
}

static void too_long(uint64_t off) __attribute__((noreturn));
static void too_long(uint64_t off)
{
	char why[160];

	snprintf(why, sizeof(why), "a record longer than %zu MiB, the longest the budget allows (raise --mem)",
		 S.max_rec >> 20);
	ts_bad(off, why);
}

/* ---- the order: (key order, file offset / index) ---- */

static int rec_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	return pems_text_cmp(S.ts, a, al, b, bl);
}

/* ---- superstep CSV parity ---- */

static uint64_t slice_lo(unsigned pid) { return S.n * pid / S.v; }

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Sample positions of VP @pid: one in each of NPOS strata of the slice */
static unsigned sample_pos(unsigned pid, uint64_t *pos)
{
	uint64_t lo = slice_lo(pid), len = slice_lo(pid + 1) - lo;
	unsigned i, m = len < NPOS ? (unsigned)len : NPOS;

	for (i = 0; i < m; i++) {
		uint64_t a = len * i / m, b = len * (i + 1) / m;

		pos[i] = lo + a + mix(pid * 1000003ull + i) % (b - a);
		if ((pos[i] & ~(uint64_t)(SPIECE - 1)) >= lo)	/* one page a piece */
			pos[i] &= ~(uint64_t)(SPIECE - 1);
		if (i && pos[i] < pos[i - 1])	/* ascending (csv_parity) */
			pos[i] = pos[i - 1];
	}
	return m;
}

/* Quote parity of the slice and at each sample position (relative to
 * the slice start), read RPIECE at a time. */
static void csv_parity(unsigned pid, const uint64_t *pos, unsigned m, uint8_t *rel,
		       uint8_t *total)
{
	uint64_t lo = slice_lo(pid), hi = slice_lo(pid + 1), at = lo;
	uint8_t *buf = pems_malloc(RPIECE), q = 0;
	unsigned j = 0;

	while (at < hi) {
		size_t n = hi - at < RPIECE ? (size_t)(hi - at) : RPIECE, i;
		long long rc = pems_file_read(S.in, buf, n, at);

		if (rc != (long long)n)
			ts_fail("reading the input", rc);
		for (i = 0; i < n; i++) {
			while (j < m && pos[j] == at + i)
				rel[j++] = q;
			q ^= buf[i] == '"';
		}
		at += n;
	}
	while (j < m)
		rel[j++] = q;
	*total = q;
	pems_free(buf);
}

/* ---- superstep 0: samples ---- */

/* Offset in @p (@n bytes at file offset @at, quote state @q before
 * p[0]) of the first record start; n when none. */
static size_t first_start(const uint8_t *p, size_t n, uint64_t at, uint8_t q)
{
	uint8_t eol = S.ts->kind == PEMS_TEXT_CSV ? '\n' : S.ts->eol;
	size_t i;

	if (S.ts->kind == PEMS_TEXT_FIXED) {
		uint64_t r = (at + S.ts->rec_size - 1) / S.ts->rec_size * S.ts->rec_size;

		return r - at < n ? (size_t)(r - at) : n;
	}
	if (at == 0 && !S.ts->header)
		return 0;
	for (i = 0; i < n; i++) {
		if (p[i] == '"' && S.ts->kind == PEMS_TEXT_CSV)
			q ^= 1;
		else if (p[i] == eol && !q)
			return i + 1;
	}
	return n;
}

/* Up to SAMPLES / NPOS records that start in the piece @p (see
 * first_start), at most SPL_MAX bytes of each, into @s from *k on. */
static void sample_in(const uint8_t *p, size_t n, uint64_t at, uint8_t q,
		      struct sample_msg *s, unsigned *k)
{
	size_t start = first_start(p, n, at, q), f, len;
	unsigned taken = 0;
	bool oq;

	while (start < n && taken < SAMPLES / NPOS && *k < SAMPLES) {
		f = pems_text_frame(S.ts, p + start, n - start, &oq);
		if (!f && taken)
			break;	/* a cut record: only as the piece's first */
		len = f ? f - pems_text_term(S.ts) : n - start;
		s->len[*k] = (uint16_t)(len < SPL_MAX ? len : SPL_MAX);
		s->off[*k] = at + start;
		memcpy(s->bytes[*k], p + start, s->len[*k]);
		(*k)++;
		taken++;
		if (!f)
			break;
		start += f;
	}
}

static void take_samples(struct sample_msg *s, const uint64_t *pos, unsigned m,
			 const uint8_t *rel, uint8_t q0)
{
	uint8_t *piece = pems_malloc((size_t)SPIECE * NPOS);
	unsigned i, k = 0;
	bool whole = true;
	long long rc;

	for (i = 0; i < m; i++)
		whole &= pos[i] + SPIECE <= S.n;
	if (whole && m) {	/* all in flight at once */
		rc = pems_file_read_pieces(S.in, piece, pos, m, SPIECE);
		if (rc != (long long)m * SPIECE)
			ts_fail("reading samples of the input", rc);
	}
	for (i = 0; i < m; i++) {
		uint64_t at = pos[i];
		size_t n = S.n - at < SPIECE ? (size_t)(S.n - at) : SPIECE;

		if (!whole) {
			rc = pems_file_read(S.in, piece + (size_t)i * SPIECE, n, at);
			if (rc != (long long)n)
				ts_fail("reading samples of the input", rc);
		}
		sample_in(piece + (size_t)i * SPIECE, n, at, rel ? q0 ^ rel[i] : 0, s, &k);
	}
	s->count = k;
	pems_free(piece);
}

/* ---- superstep 1: splitters ---- */

struct spl_view {
	uint32_t count;
	const uint16_t *len;
	const uint64_t *off;
	const uint64_t *pre;
	const uint8_t *bytes;	/* SPL_MAX each */
};

size_t ts_sample_msg_bytes(void)
{
	return sizeof(struct sample_msg);
}

size_t ts_spl_bytes(unsigned v)
{
	return 8 + (size_t)v * (2 + 8 + 8 + SPL_MAX);
}

static void spl_view(uint8_t *buf, unsigned v, struct spl_view *sv)
{
	sv->count = *(uint32_t *)(void *)buf;
	sv->off = (const uint64_t *)(void *)(buf + 8);
	sv->pre = sv->off + v;
	sv->len = (const uint16_t *)(const void *)(sv->pre + v);
	sv->bytes = (const uint8_t *)(sv->len + v);
}

struct sample_ctx {
	const struct sample_msg *all;
};

static int sample_tie(const struct ts_item *a, const struct ts_item *b, void *arg)
{
	const struct sample_msg *all = ((struct sample_ctx *)arg)->all;
	const struct sample_msg *x = &all[a->idx / SAMPLES], *y = &all[b->idx / SAMPLES];
	unsigned i = a->idx % SAMPLES, j = b->idx % SAMPLES;
	int d = rec_cmp(x->bytes[i], x->len[i], y->bytes[j], y->len[j]);

	if (d)
		return d;
	return x->off[i] < y->off[j] ? -1 : x->off[i] > y->off[j];
}

static void pick_splitters(const struct sample_msg *all, uint8_t *out)
{
	struct sample_ctx c = { all };
	size_t total = 0, t = 0, i, j;
	struct ts_item *it, *tmp;
	uint32_t *count = (uint32_t *)(void *)out;
	uint64_t *off = (uint64_t *)(void *)(out + 8), *pre = off + S.v;
	uint16_t *len = (uint16_t *)(void *)(pre + S.v);
	uint8_t *bytes = (uint8_t *)(len + S.v);

	for (i = 0; i < S.v; i++)
		total += all[i].count;
	it = pems_malloc((total + 1) * sizeof(*it));
	tmp = pems_malloc((total + 1) * sizeof(*tmp));
	for (i = 0; i < S.v; i++)
		for (j = 0; j < all[i].count; j++) {
			const struct sample_msg *m = &all[i];

			it[t].pre = pems_text_prefix(S.ts, m->bytes[j], m->len[j]);
			it[t++].idx = (uint32_t)(i * SAMPLES + j);
		}
	ts_msort(it, tmp, total, sample_tie, &c);
	*count = total ? S.v - 1 : 0;
	for (i = 1; total && i < S.v; i++) {
		const struct ts_item *s = &it[i * total / S.v];
		const struct sample_msg *m = &all[s->idx / SAMPLES];
		unsigned k = s->idx % SAMPLES;

		off[i - 1] = m->off[k];
		pre[i - 1] = s->pre;
		len[i - 1] = m->len[k];
		memcpy(bytes + (i - 1) * SPL_MAX, m->bytes[k], m->len[k]);
	}
	pems_free(tmp);
	pems_free(it);
}

/* ---- superstep 2: partition ---- */

/* Bucket of the record (@p, @len, prefix @pre, file offset @off): the
 * number of splitters <= it. */
static unsigned classify(const struct spl_view *sv, const uint8_t *p, size_t len,
			 uint64_t pre, uint64_t off)
{
	unsigned lo = 0, hi = sv->count;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		int d;

		if (sv->pre[mid] != pre) {
			d = sv->pre[mid] < pre ? -1 : 1;
		} else {
			d = rec_cmp(sv->bytes + (size_t)mid * SPL_MAX, sv->len[mid], p, len);
			if (!d && !S.ts->unique)
				d = sv->off[mid] < off ? -1 : sv->off[mid] > off;
		}
		if (d <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}


/* Index in @buf (file offset @a0) of the first record start at or after
 * file offset @from (> 0: after the first terminator at from - 1 or
 * later, quote state @q before byte from - 1), searching up to @n
 * bytes of buf; SIZE_MAX when none starts there. */
static size_t start_after(const uint8_t *buf, size_t n, uint64_t a0, uint64_t from, uint8_t q)
{
	const struct pems_textspec *ts = S.ts;
	uint8_t eol = ts->kind == PEMS_TEXT_CSV ? '\n' : ts->eol;
	size_t i = (size_t)(from - 1 - a0);
	const uint8_t *e;

	if (ts->kind == PEMS_TEXT_FIXED) {
		uint64_t r = (from + ts->rec_size - 1) / ts->rec_size * ts->rec_size;

		return r - a0 <= n ? (size_t)(r - a0) : SIZE_MAX;
	}
	if (ts->kind == PEMS_TEXT_LINES) {
		e = i < n ? memchr(buf + i, eol, n - i) : NULL;
		return e ? (size_t)(e - buf) + 1 : SIZE_MAX;
	}
	for (; i < n; i++) {
		if (buf[i] == '"')
			q ^= 1;
		else if (buf[i] == '\n' && !q)
			return i + 1;
	}
	return SIZE_MAX;
}

/* Read [a0, a0 + len) of the input into @buf. */
static void read_range(uint8_t *buf, uint64_t a0, size_t len)
{
	long long rc = len ? pems_file_read(S.in, buf, len, a0) : 0;

	if (rc != (long long)len)
		ts_fail("reading the input", rc);
}

struct slice {
	uint8_t *buf;		/* file offset a0 at buf[0] */
	uint64_t a0;
	size_t rs, re;		/* the records: buf[rs .. re) */
	bool last;		/* re is the end of the input */
};

/* Read the slice of VP @pid and the rest of its last record.  @q_lo:
 * quote state at the slice start, @q_hi at its end (CSV). */
static void read_slice(unsigned pid, uint8_t q_lo, uint8_t q_hi, struct slice *sl)
{
	uint64_t lo = slice_lo(pid), hi = slice_lo(pid + 1);
	uint64_t a0 = lo ? (lo - 1) & ~(uint64_t)(PAGE - 1) : 0;
	size_t ext = 16u << 10, have, cap, r;

	sl->a0 = a0;
	sl->last = pid == S.v - 1 || hi == S.n;
	cap = (size_t)(hi - a0) + ext;
	sl->buf = pems_malloc(cap + 1);
	have = (size_t)((hi + ext < S.n ? hi + ext : S.n) - a0);
	read_range(sl->buf, a0, have);
	atomic_fetch_add(&S.done[0], (hi - lo) / 2);
	if (lo == 0) {
		sl->rs = 0;
	} else {
		sl->rs = start_after(sl->buf, (size_t)(hi - a0), a0, lo,
				     q_lo ^ (sl->buf[lo - 1 - a0] == '"' &&
					     S.ts->kind == PEMS_TEXT_CSV));
		if (sl->rs == SIZE_MAX || sl->rs > hi - a0)
			sl->rs = SIZE_MAX;	/* no record starts here: rs = re below */
	}
	if (sl->last) {
		sl->re = have;
		sl->rs = sl->rs == SIZE_MAX ? sl->re : sl->rs;
		return;
	}
	for (;;) {	/* the first record start at or after hi */
		r = start_after(sl->buf, have, a0, hi,
				q_hi ^ (sl->buf[hi - 1 - a0] == '"' && S.ts->kind == PEMS_TEXT_CSV));
		if (r != SIZE_MAX || a0 + have == S.n) {
			sl->re = r != SIZE_MAX ? r : have;
			sl->last = r == SIZE_MAX;
			sl->rs = sl->rs == SIZE_MAX ? sl->re : sl->rs;
			return;
		}
		if (have - (size_t)(hi - a0) > S.max_rec)
			too_long(hi - 1);
		ext = have - (size_t)(hi - a0) + (ext < (64u << 20) ? ext : (64u << 20));
		cap = (size_t)(hi - a0) + ext;
		sl->buf = pems_realloc(sl->buf, cap + 1);
		r = (size_t)((hi + ext < S.n ? hi + ext : S.n) - a0);
		read_range(sl->buf + have, a0 + have, r - have);
		have = r;
	}
}

/* Check one CSV row (file offset @off) against the header's width. */
static void csv_check(const uint8_t *p, size_t len, uint64_t off)
{
	char why[160];
	unsigned bad;
	int nf = pems_csv_count(S.ts, p, len, &bad);

	if (nf < 0) {
		snprintf(why, sizeof(why), "field %u: a quote must open and close a field (write \"\" for a quote inside one)",
			 bad);
		ts_bad(off, why);
	}
	if (S.ncols && (unsigned)nf != S.ncols) {
		snprintf(why, sizeof(why), "%d fields, but the header has %u", nf, S.ncols);
		ts_bad(off, why);
	}
}

/* The record at buf[*pos] of the slice: its length without terminator
 * in *len; returns its length with it (as framed, 0: unterminated last
 * record).  With @check: its length and CSV well-formedness. */
static size_t next_record(const struct slice *sl, size_t pos, size_t *len, bool check)
{
	bool oq;
	size_t f = pems_text_frame(S.ts, sl->buf + pos, sl->re - pos, &oq);
	uint64_t off = sl->a0 + pos;

	if (!f) {
		if (oq)
			ts_bad(off, "a quoted field is not closed before the end of the file");
		if (S.ts->kind == PEMS_TEXT_FIXED)
			ts_bad(off, "a partial record at the end of the file");
		*len = sl->re - pos;
	} else {
		*len = f - pems_text_term(S.ts);
	}
	if (check && *len > S.max_rec)
		too_long(off);
	if (check && S.ts->kind == PEMS_TEXT_CSV)
		csv_check(sl->buf + pos, *len, off);
	return f;
}

/*
 * -u: equal keys meet in one bucket (the splitters compare keys only),
 * so a VP may send only the first record of each key of its slice: one
 * sort of the slice's items, and a key that fills the input no longer
 * fills one VP.  Returns a flag per record (1: dropped) and takes the
 * dropped records out of @counts.
 */
static uint8_t *unique_drop(const struct slice *sl, size_t pos, size_t n,
			    const struct spl_view *sv, const uint16_t *bk, size_t cap,
			    uint64_t *counts)
{
	uint64_t *starts = pems_malloc((n + 1) * sizeof(*starts));
	uint8_t *drop = pems_malloc(n + 1);
	size_t i, j, f, len, term = pems_text_term(S.ts);
	unsigned b;

	for (i = pos, j = 0; j < n; i += f ? f : len, j++) {
		f = next_record(sl, i, &len, false);
		starts[j] = i;
	}
	/* a last record without terminator: as if it had one */
	starts[n] = n ? starts[n - 1] + len + term : pos;
	ts_unique_marks(sl->buf, starts, n, drop);
	for (j = 0; j < n; j++) {
		if (!drop[j])
			continue;
		len = starts[j + 1] - starts[j] - term;
		b = j < cap ? bk[j] : classify(sv, sl->buf + starts[j], len,
					      pems_text_prefix(S.ts, sl->buf + starts[j], len),
					      sl->a0 + starts[j]);
		counts[b] -= len + term;
		counts[S.v + 1 + b]--;
	}
	pems_free(starts);
	return drop;
}

struct part_out {
	uint64_t *counts;	/* 2v + 1: bytes per bucket, header bytes,
				 * records per bucket */
	void *recv;
	size_t recvbytes;
	uint8_t *hdr;		/* VP 0, CSV: the header row with its terminator */
};

/* Superstep 2: frame and classify, copy in bucket order, exchange. */
static void partition(unsigned pid, const struct spl_view *sv, uint8_t q_lo, uint8_t q_hi,
		      struct part_out *po)
{
	struct slice sl;
	size_t pos, len, f, n = 0, cap, i, sum = 0, term = pems_text_term(S.ts);
	size_t *next = pems_malloc(S.v * sizeof(*next)), *sendcounts;
	uint8_t *send, *drop, eol = S.ts->kind == PEMS_TEXT_CSV ? '\n' : S.ts->eol;
	uint16_t *bk;
	unsigned b;

	read_slice(pid, q_lo, q_hi, &sl);
	memset(po->counts, 0, (2 * S.v + 1) * sizeof(*po->counts));
	pos = sl.rs;
	if (pid == 0 && S.ts->header && pos < sl.re) {	/* the CSV header stays first */
		f = next_record(&sl, pos, &len, true);
		po->hdr = pems_malloc(len + 1);
		memcpy(po->hdr, sl.buf + pos, len);
		po->hdr[len] = eol;
		po->counts[S.v] = len + 1;
		pos += f ? f : len;
	}
	send = pems_malloc(sl.re - pos + 2);
	cap = pems_context_avail() > (2u << 20) ? (pems_context_avail() - (2u << 20)) / 2 : 0;
	if (cap > sl.re - pos)
		cap = sl.re - pos;
	bk = pems_malloc(cap * sizeof(*bk) + 1);
	for (i = pos; i < sl.re; i += f ? f : len, n++) {
		f = next_record(&sl, i, &len, true);
		b = classify(sv, sl.buf + i, len, pems_text_prefix(S.ts, sl.buf + i, len), sl.a0 + i);
		if (n < cap)
			bk[n] = (uint16_t)b;
		po->counts[b] += len + term;
		po->counts[S.v + 1 + b]++;
	}
	drop = S.ts->unique ? unique_drop(&sl, pos, n, sv, bk, cap, po->counts) : NULL;
	for (b = 0; b < S.v; b++) {
		next[b] = sum;
		sum += po->counts[b];
	}
	for (i = pos, n = 0; i < sl.re; i += f ? f : len, n++) {
		f = next_record(&sl, i, &len, false);	/* checked in the first pass */
		if (drop && drop[n])
			continue;
		b = n < cap ? bk[n] : classify(sv, sl.buf + i, len,
					      pems_text_prefix(S.ts, sl.buf + i, len), sl.a0 + i);
		memcpy(send + next[b], sl.buf + i, len);
		if (term)
			send[next[b] + len] = eol;
		next[b] += len + term;
	}
	pems_free(drop);
	pems_free(bk);
	sendcounts = (size_t *)next;	/* same size; counts as size_t */
	for (b = 0; b < S.v; b++)
		sendcounts[b] = po->counts[b];
	pems_exchange(send, sendcounts, &po->recv, &po->recvbytes, NULL);
	/* the records are in the message store: free them before the sync,
	 * so that the context written back is a few pages */
	pems_free(send);
	pems_free(sl.buf);
	pems_free(next);
	atomic_fetch_add(&S.done[0], (slice_lo(pid + 1) - slice_lo(pid)) -
				     (slice_lo(pid + 1) - slice_lo(pid)) / 2);
}

/* ---- the SPMD section ---- */

static void sample_phase(unsigned pid, struct sample_msg *mine, uint8_t *q_lo, uint8_t *q_hi)
{
	uint64_t *pos = pems_malloc(NPOS * sizeof(*pos));
	uint8_t rel[NPOS], total = 0, *all;
	unsigned m = sample_pos(pid, pos), i;

	*q_lo = *q_hi = 0;
	if (S.ts->kind == PEMS_TEXT_CSV) {
		csv_parity(pid, pos, m, rel, &total);
		all = pems_malloc(S.v);
		pems_allgather(&total, all, 1);
		for (i = 0; i < pid; i++)
			*q_lo ^= all[i];
		*q_hi = *q_lo ^ total;
		pems_free(all);
	}
	memset(mine, 0, sizeof(*mine));
	take_samples(mine, pos, m, S.ts->kind == PEMS_TEXT_CSV ? rel : NULL, *q_lo);
	pems_free(pos);
}

void ts_spmd(void *arg)
{
	unsigned pid = bsp_pid();
	struct sample_msg *mine = pems_malloc(sizeof(*mine)), *all = NULL;
	uint8_t *spl = pems_malloc(ts_spl_bytes(S.v)), q_lo, q_hi;
	uint64_t *totals = pems_malloc((2 * S.v + 1) * sizeof(*totals)), off = 0;
	struct part_out po = { pems_malloc((2 * S.v + 1) * sizeof(uint64_t)), NULL, 0, NULL };
	struct spl_view sv;
	struct ts_bucket *bucket;
	unsigned i;

	(void)arg;
	sample_phase(pid, mine, &q_lo, &q_hi);
	if (pid == 0)
		all = pems_malloc(S.v * sizeof(*all));
	pems_gather(0, mine, all, sizeof(*mine));
	pems_free(mine);
	memset(spl, 0, ts_spl_bytes(S.v));
	if (pid == 0) {
		pick_splitters(all, spl);
		pems_free(all);
	}
	pems_broadcast(0, spl, ts_spl_bytes(S.v));
	spl_view(spl, S.v, &sv);
	partition(pid, &sv, q_lo, q_hi, &po);
	pems_free(spl);
	pems_allreduce(po.counts, totals, 2 * S.v + 1, PEMS_UINT64, PEMS_SUM);
	if (pid == 0 && po.hdr) {
		long long rc = pems_file_write(S.out, po.hdr, totals[S.v], 0);

		if (rc != (long long)totals[S.v])
			ts_fail("writing the output", rc);
	}
	pems_free(po.hdr);
	if (pid == 0 && getenv("PEMS_SORT_TRACE")) {	/* sampling's imbalance */
		uint64_t mx = 0;

		for (i = 0; i < S.v; i++)
			mx = totals[i] > mx ? totals[i] : mx;
		fprintf(stderr, "pems: sort trace: largest bucket %.3f of N/v\n",
			S.n ? (double)mx * S.v / (double)S.n : 0.0);
	}
	bucket = ts_sort_bucket(po.recv, po.recvbytes, totals[S.v + 1 + pid]);
	off = totals[S.v];
	if (S.ts->unique) {	/* the sizes are known only now */
		memset(po.counts, 0, (S.v + 1) * sizeof(uint64_t));
		po.counts[pid] = ts_bucket_bytes(bucket);
		pems_allreduce(po.counts, totals, S.v, PEMS_UINT64, PEMS_SUM);
		for (i = 0; pid == 0 && i <= S.v; i++)
			S.unique_total += totals[i];
	}
	for (i = 0; i < pid; i++)
		off += totals[i];
	ts_write_bucket(bucket, off);
	ts_bucket_free(bucket);
	pems_free(po.counts);
	pems_free(totals);
}
