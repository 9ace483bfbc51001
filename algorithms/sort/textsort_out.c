/*
 * textsort_out.c - the text sort's local sort and output (superstep 3),
 * and pems_textsort(), which plans and runs it (see textsort.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "pems_algorithms.h"
#include "sort/tsort.h"

#define S S_ts
#define PAGE 4096u
#define PIECE (1u << 20)	/* output pieces in flight */
#define NPIECE 4
#define RUN 16			/* merge sort: insertion-sorted runs */

/* ---- merge sort of items ---- */

static inline int item_cmp(const struct ts_item *a, const struct ts_item *b, ts_tie_fn tie,
			   void *arg)
{
	if (a->pre != b->pre)
		return a->pre < b->pre ? -1 : 1;
	return tie(a, b, arg);
}

static void insertion(struct ts_item *a, size_t n, ts_tie_fn tie, void *arg)
{
	size_t i, j;

	for (i = 1; i < n; i++) {
		struct ts_item x = a[i];

		for (j = i; j > 0 && item_cmp(&x, &a[j - 1], tie, arg) < 0; j--)
			a[j] = a[j - 1];
		a[j] = x;
	}
}

static void merge(const struct ts_item *a, size_t na, const struct ts_item *b, size_t nb,
		  struct ts_item *out, ts_tie_fn tie, void *arg)
{
	size_t i = 0, j = 0, k = 0;

	while (i < na && j < nb)
		out[k++] = item_cmp(&b[j], &a[i], tie, arg) < 0 ? b[j++] : a[i++];
	memcpy(out + k, a + i, (na - i) * sizeof(*a));
	k += na - i;
	memcpy(out + k, b + j, (nb - j) * sizeof(*b));
}

void ts_msort(struct ts_item *a, struct ts_item *tmp, size_t n, ts_tie_fn tie, void *arg)
{
	struct ts_item *src = a, *dst = tmp, *t;
	size_t w, i;

	for (i = 0; i < n; i += RUN)
		insertion(a + i, n - i < RUN ? n - i : RUN, tie, arg);
	for (w = RUN; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t na = n - i < w ? n - i : w;
			size_t nb = n - i - na < w ? n - i - na : w;

			merge(src + i, na, src + i + na, nb, dst + i, tie, arg);
		}
		t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* ---- superstep 3: one bucket ---- */

struct ts_bucket {
	uint8_t *recv;
	uint64_t *starts;	/* n + 1: record i is recv[starts[i] .. starts[i+1]) */
	struct ts_item *it;	/* in output order */
	size_t n;
	uint64_t out_bytes;
};

static int bucket_tie(const struct ts_item *a, const struct ts_item *b, void *arg)
{
	const struct ts_bucket *bk = arg;
	size_t term = pems_text_term(S.ts);
	const uint64_t *s = bk->starts;
	int d = pems_text_cmp(S.ts, bk->recv + s[a->idx], s[a->idx + 1] - s[a->idx] - term,
			      bk->recv + s[b->idx], s[b->idx + 1] - s[b->idx] - term);

	if (d)
		return d;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* The starts of the @n records of @p (@bytes). */
static void frame_records(const uint8_t *p, size_t bytes, uint64_t *starts, size_t n)
{
	size_t i, at = 0, f;
	bool oq;

	for (i = 0; i < n; i++) {
		starts[i] = at;
		f = pems_text_frame(S.ts, p + at, bytes - at, &oq);
		if (!f)
			ts_fail("a received record is not terminated (internal error)", -EPROTO);
		at += f;
	}
	if (at != bytes)
		ts_fail("received records and bytes disagree (internal error)", -EPROTO);
	starts[n] = at;
}

/* -u: keep the first of each run of equal records (in input order) */
static void unique(struct ts_bucket *b)
{
	size_t term = pems_text_term(S.ts), i, k = 0;
	const uint64_t *s = b->starts;

	for (i = 0; i < b->n; i++) {
		const struct ts_item *p = &b->it[k ? k - 1 : 0], *c = &b->it[i];

		if (k && pems_text_cmp(S.ts, b->recv + s[p->idx], s[p->idx + 1] - s[p->idx] - term,
				       b->recv + s[c->idx], s[c->idx + 1] - s[c->idx] - term) == 0)
			continue;
		b->it[k++] = *c;
	}
	b->n = k;
}

void ts_unique_marks(const uint8_t *p, const uint64_t *starts, size_t n, uint8_t *drop)
{
	struct ts_bucket b = { (uint8_t *)(uintptr_t)p, (uint64_t *)(uintptr_t)starts, NULL, n, 0 };
	struct ts_item *tmp = pems_malloc(n * sizeof(*tmp) + 1);
	size_t term = pems_text_term(S.ts), i;

	b.it = pems_malloc(n * sizeof(*b.it) + 1);
	for (i = 0; i < n; i++) {
		b.it[i].pre = pems_text_prefix(S.ts, p + starts[i], starts[i + 1] - starts[i] - term);
		b.it[i].idx = (uint32_t)i;
		drop[i] = 1;
	}
	ts_msort(b.it, tmp, n, bucket_tie, &b);
	pems_free(tmp);
	unique(&b);
	for (i = 0; i < b.n; i++)
		drop[b.it[i].idx] = 0;
	pems_free(b.it);
}

struct ts_bucket *ts_sort_bucket(uint8_t *recv, size_t bytes, uint64_t n)
{
	struct ts_bucket *b = pems_malloc(sizeof(*b));
	size_t term = pems_text_term(S.ts), i;
	struct ts_item *tmp;

	b->recv = recv;
	b->n = n;
	b->starts = pems_malloc((b->n + 1) * sizeof(*b->starts));
	frame_records(recv, bytes, b->starts, b->n);
	b->it = pems_malloc(b->n * sizeof(*b->it) + 1);
	tmp = pems_malloc(b->n * sizeof(*tmp) + 1);
	for (i = 0; i < b->n; i++) {
		uint64_t s = b->starts[i];

		b->it[i].pre = pems_text_prefix(S.ts, recv + s, b->starts[i + 1] - s - term);
		b->it[i].idx = (uint32_t)i;
		b->it[i].aux = 0;
	}
	ts_msort(b->it, tmp, b->n, bucket_tie, b);
	pems_free(tmp);
	if (S.ts->unique)
		unique(b);
	b->out_bytes = 0;
	for (i = 0; i < b->n; i++)
		b->out_bytes += b->starts[b->it[i].idx + 1] - b->starts[b->it[i].idx];
	return b;
}

uint64_t ts_bucket_bytes(const struct ts_bucket *b)
{
	return b->out_bytes;
}

void ts_bucket_free(struct ts_bucket *b)
{
	pems_free(b->it);
	pems_free(b->starts);
	pems_free(b->recv);
	pems_free(b);
}

/*
 * The output, appended at a file offset: PIECE-byte buffers whose start
 * maps to a page-aligned file offset (so each write's interior goes
 * O_DIRECT), written asynchronously while the next is filled.
 */
struct writer {
	uint8_t *raw, *base;
	uint64_t a0;		/* file offset of the current buffer's byte 0 */
	size_t fill, start;	/* bytes in it; the first to write */
	unsigned cur;
	size_t len[NPIECE];
	struct pems_file_aio aio[NPIECE];
};

static void w_wait(struct writer *w, unsigned i)
{
	long long rc;

	if (!w->len[i])
		return;
	rc = pems_file_wait(&w->aio[i]);
	if (rc != (long long)w->len[i])
		ts_fail("writing the output", rc);
	w->len[i] = 0;
}

static void w_flush(struct writer *w)
{
	uint8_t *piece = w->base + (size_t)w->cur * PIECE;
	int rc;

	if (w->fill > w->start) {
		rc = pems_file_start(S.out, true, piece + w->start, w->fill - w->start,
				     w->a0 + w->start, &w->aio[w->cur]);
		if (rc)
			ts_fail("writing the output", rc);
		w->len[w->cur] = w->fill - w->start;
		atomic_fetch_add(&S.done[1], w->fill - w->start);
	}
	w->a0 += w->fill;
	w->fill = w->start = 0;
	w->cur = (w->cur + 1) % NPIECE;
	w_wait(w, w->cur);
}

static void w_put(struct writer *w, const uint8_t *p, size_t len)
{
	while (len) {
		size_t c = PIECE - w->fill < len ? PIECE - w->fill : len;

		memcpy(w->base + (size_t)w->cur * PIECE + w->fill, p, c);
		w->fill += c;
		p += c;
		len -= c;
		if (w->fill == PIECE)
			w_flush(w);
	}
}

void ts_write_bucket(struct ts_bucket *b, uint64_t off)
{
	struct writer w;
	size_t i;
	unsigned j;

	memset(&w, 0, sizeof(w));
	w.raw = pems_malloc((size_t)NPIECE * PIECE + PAGE);
	w.base = (uint8_t *)(((uintptr_t)w.raw + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	w.a0 = off & ~(uint64_t)(PAGE - 1);
	w.fill = w.start = (size_t)(off - w.a0);
	for (i = 0; i < b->n; i++) {
		uint64_t s = b->starts[b->it[i].idx];

		w_put(&w, b->recv + s, b->starts[b->it[i].idx + 1] - s);
	}
	w_flush(&w);
	for (j = 0; j < NPIECE; j++)
		w_wait(&w, j);
	pems_free(w.raw);
	if (S.ts->unique)
		atomic_fetch_add(&S.written, b->out_bytes);
}
