/*
 * spmd.c - the BSP part of pems_csv_groupby.
 *
 * v VPs; VP i owns the records that start in data bytes
 * [data + i*len/v, data + (i+1)*len/v).  Supersteps:
 *   0-1  sample: each VP encodes the keys of up to SAMPLES records from
 *        random pieces of its slice; VP 0 gathers them, sorts them and
 *        broadcasts v-1 splitters (key prefixes of GB_SPLIT bytes), so
 *        that owner ranges hold about equal numbers of rows
 *   2    scan: read the slice in GB.piece pieces, parse the records into
 *        typed values, aggregate them in the VP's hash table (partial
 *        states; values for the holistic aggregates), serialize every
 *        group for the owner of its key range and post them with
 *        pems_exchange; the table is freed before the sync
 *   3    merge: the owner combines what it received into one table,
 *        sorts the groups by key, finalizes and formats them into its
 *        part of the output; allgather of each VP's counts and errors
 *   4    write: with no error anywhere, each VP writes its part at the
 *        sum of the parts of the VPs before it (VP 0 the header first)
 * Invariants:
 *  (1) a key's rows all reach one owner (owner = splitters <= key, the
 *      same function everywhere), and owner ranges increase with the VP
 *      id, so the concatenated parts are in key order;
 *  (2) a record belongs to the VP whose slice holds its first byte; a
 *      VP starts after the first newline at or after its slice start - 1,
 *      so VP i's start must equal VP i-1's end -- not so only when a
 *      quoted field with a newline spans the boundary (reported);
 *  (3) results do not depend on v: counts and integer sums are exact,
 *      floating sums are long double, lists are sorted before use.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groupby/gb.h"

#define REC_MAX (64u << 20)	/* longest record */
#define SAMPLES 64		/* sample keys per VP */
#define SPIECES 16		/* random pieces they come from */
#define SPIECE 4096

static uint64_t slice_lo(unsigned pid)
{
	return GB.data + (GB.size - GB.data) * pid / GB.v;
}

static void fail(const char *what, long long rc)
{
	bsp_abort("pems: error: groupby: %s: %s", what,
		  rc < 0 ? strerror((int)-rc) : "short read (file changed?)");
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* per-VP parsing state */
struct scan {
	struct pems_csv_field *f;
	struct gb_val *vals;
	uint8_t *kbuf;
	size_t kcap;
	char *scratch;		/* unquoted fields */
	size_t scap;
};

static char *scratch(struct scan *s, size_t n)
{
	if (n > s->scap) {
		pems_free(s->scratch);
		s->scap = n + GB.piece;
		s->scratch = pems_malloc(s->scap);
	}
	return s->scratch;
}

static void scan_init(struct scan *s)
{
	s->f = pems_malloc(GB.q.max_need * sizeof(*s->f) + 1);
	s->vals = pems_malloc((GB.q.nneed + 1) * sizeof(*s->vals));
	s->kcap = 4096;
	s->kbuf = pems_malloc(s->kcap);
	s->scratch = NULL;
	s->scap = 0;
}

static void scan_free(struct scan *s)
{
	pems_free(s->f);
	pems_free(s->vals);
	pems_free(s->kbuf);
	pems_free(s->scratch);
}

/* Parse a record's needed fields and encode its key into s->kbuf.
 * Returns the key bytes, or -1 with *e filled (kind, col, tok). */
static long typed(struct scan *s, unsigned nf, size_t reclen, struct gb_errinfo *e)
{
	const struct gb_query *q = &GB.q;
	size_t k = 0;
	unsigned i;

	if (nf != q->ncols) {
		e->kind = nf < q->ncols ? GE_FEW : GE_MANY;
		e->col = nf < q->ncols ? nf + 1 : q->ncols + 1;
		e->nf = nf;
		return -1;
	}
	for (i = 0; i < q->nneed; i++) {
		const struct pems_csv_field *fl = &s->f[q->need_col[i]];

		if (!gb_parse_field(fl->p, fl->len, q->need_type[i], GB.null_tok, GB.null_len,
				    &s->vals[i])) {
			e->kind = q->need_type[i] == GB_I64 ? GE_INT : GE_NUM;
			e->col = q->need_col[i] + 1;
			e->nf = i;	/* the needed column, for its name */
			snprintf(e->tok, sizeof(e->tok), "%.*s", (int)(fl->len < 39 ? fl->len : 39), fl->p);
			return -1;
		}
	}
	if (2 * reclen + 16 * q->nkeys + 16 > s->kcap) {
		s->kcap = 2 * reclen + 16 * q->nkeys + 16;
		pems_free(s->kbuf);
		s->kbuf = pems_malloc(s->kcap);
	}
	for (i = 0; i < q->nkeys; i++)
		k += gb_key_put(s->kbuf + k, q->need_type[q->key[i]], &s->vals[q->key[i]]);
	return (long)k;
}

/* ---- superstep 0-1: splitters ---- */

static int split_sort(const void *a, const void *b)
{
	const uint8_t *x = a, *y = b;
	int c = memcmp(x + 1, y + 1, x[0] < y[0] ? x[0] : y[0]);

	return c ? c : (x[0] > y[0]) - (x[0] < y[0]);
}

static unsigned sample_keys(unsigned pid, uint8_t *out, struct scan *s)
{
	uint64_t lo = slice_lo(pid), hi = slice_lo(pid + 1);
	char *buf = pems_malloc((size_t)SPIECES * SPIECE);
	uint64_t off[SPIECES];
	unsigned i, m = 0, np = 0;

	for (i = 0; i < SPIECES && hi > lo; i++) {
		uint64_t o = lo + mix(pid * 7919ull + i) % (hi - lo);

		off[np++] = o + SPIECE <= GB.size ? o : (GB.size > SPIECE ? GB.size - SPIECE : 0);
	}
	if (GB.size < SPIECE)
		np = 0;
	if (np && pems_file_read_pieces(GB.in, buf, off, np, SPIECE) != (long long)np * SPIECE)
		fail("reading samples of the input", -EIO);
	for (i = 0; i < np && m < SAMPLES; i++) {
		const char *p = buf + (size_t)i * SPIECE, *nl = memchr(p, '\n', SPIECE);
		size_t at = nl ? (size_t)(nl - p) + 1 : SPIECE;
		unsigned got = 0;

		while (at < SPIECE && got < SAMPLES / SPIECES + 1 && m < SAMPLES) {
			unsigned nf, lines, bad;
			enum pems_csv_rec_err re;
			struct gb_errinfo e;
			long r = pems_csv_record(p + at, SPIECE - at, false, GB.delim, s->f, GB.q.max_need,
					   &nf, scratch(s, SPIECE), &lines, &re, &bad), k;

			if (r <= 0)
				break;
			k = off[i] + at >= GB.data ? typed(s, nf, (size_t)r, &e) : -1;
			at += (size_t)r;
			if (k < 0)
				continue;
			out[(size_t)m * GB_SPLIT] = (uint8_t)(k < GB_SPLIT - 1 ? k : GB_SPLIT - 1);
			memcpy(out + (size_t)m * GB_SPLIT + 1, s->kbuf, out[(size_t)m * GB_SPLIT]);
			m++;
			got++;
		}
	}
	pems_free(buf);
	return m;
}

/* Collective: returns the v-1 splitters (pems_free them). */
static uint8_t *splitters(unsigned pid, struct scan *s)
{
	unsigned v = GB.v, i, m = 0;
	size_t slot = (size_t)SAMPLES * GB_SPLIT + 8;
	uint8_t *mine = pems_calloc(1, slot), *all = NULL;
	uint8_t *split = pems_calloc((size_t)v, GB_SPLIT);
	uint32_t n;

	n = GB.q.nkeys ? sample_keys(pid, mine + 8, s) : 0;
	memcpy(mine, &n, 4);
	if (pid == 0)
		all = pems_malloc(slot * v);
	pems_gather(0, mine, all, slot);
	pems_free(mine);
	if (pid == 0) {
		uint8_t *keys = pems_malloc(slot * v);

		for (i = 0; i < v; i++) {
			memcpy(&n, all + slot * i, 4);
			memcpy(keys + (size_t)m * GB_SPLIT, all + slot * i + 8, (size_t)n * GB_SPLIT);
			m += n;
		}
		qsort(keys, m, GB_SPLIT, split_sort);
		for (i = 1; i < v && m; i++)
			memcpy(split + (size_t)(i - 1) * GB_SPLIT,
			       keys + (size_t)((uint64_t)m * i / v) * GB_SPLIT, GB_SPLIT);
		if (!m) {	/* no sample: every group to VP 0 */
			for (i = 1; i < v; i++) {
				memset(split + (size_t)(i - 1) * GB_SPLIT, 0xff, GB_SPLIT);
				split[(size_t)(i - 1) * GB_SPLIT] = GB_SPLIT - 1;
			}
		}
		pems_free(keys);
		pems_free(all);
	}
	pems_broadcast(0, split, (size_t)v * GB_SPLIT);
	return split;
}

/* ---- superstep 2: scan the slice ---- */

struct reader {
	char *buf;
	size_t cap, have;	/* bytes in buf, from file offset base */
	uint64_t base;
	bool eof;
};

/* Keep buf[from..have) and read more after it; false at the end. */
static bool refill(struct reader *r, size_t from)
{
	uint64_t left;
	size_t n;
	long long rc;

	if (r->eof)
		return false;
	memmove(r->buf, r->buf + from, r->have - from);
	r->have -= from;
	r->base += from;
	if (r->have + GB.piece > r->cap) {
		if (r->have >= REC_MAX)
			return false;
		r->cap = r->have + GB.piece;
		r->buf = pems_realloc(r->buf, r->cap + 1);
	}
	left = GB.size - r->base - r->have;
	n = left < GB.piece ? (size_t)left : GB.piece;
	rc = n ? pems_file_read(GB.in, r->buf + r->have, n, r->base + r->have) : 0;
	if (rc != (long long)n)
		fail("reading the input", rc);
	r->have += n;
	r->eof = r->base + r->have >= GB.size;
	atomic_fetch_add(&GB.done, n);
	return true;
}

/* The first record start at or after @lo (invariant 2). */
static uint64_t first_record(uint64_t lo, struct reader *r)
{
	r->base = lo - 1;
	r->have = 0;
	r->eof = false;
	for (;;) {
		char *nl;

		if (!refill(r, r->have))
			return GB.size;
		nl = memchr(r->buf, '\n', r->have);
		if (nl)
			return r->base + (uint64_t)(nl - r->buf) + 1;
	}
}

static void note_err(struct gb_vpinfo *info, const struct gb_errinfo *e)
{
	if (info->nerr < GB_NERR)
		info->err[info->nerr] = *e;
	info->nerr++;
}

/* One record at r->buf + off (@len bytes, nf fields): into the table,
 * or an error.  Returns false when the scan must stop. */
static bool take(struct scan *s, struct gb_table *t, unsigned nf, size_t len,
		 struct gb_vpinfo *info)
{
	struct gb_errinfo e = { .line = info->nlines + 1 };
	long k = typed(s, nf, len, &e);

	if (k < 0) {
		note_err(info, &e);
		info->skipped++;
		return GB.job->skip_errors;
	}
	gb_table_row(t, s->kbuf, (size_t)k, gb_hash(s->kbuf, (size_t)k), s->vals);
	info->rows++;
	return true;
}

/* a quote error at the record at @off: note it; skip mode goes on after
 * the record's first line */
static long quote_err(struct reader *r, size_t off, enum pems_csv_rec_err re, unsigned bad,
		      struct gb_vpinfo *info)
{
	struct gb_errinfo e = { .line = info->nlines + 1, .col = bad };
	char *nl = memchr(r->buf + off, '\n', r->have - off);

	e.kind = re == PEMS_CSV_REC_OPEN ? GE_QUOTE_OPEN : GE_QUOTE_TEXT;
	note_err(info, &e);
	info->skipped++;
	if (!GB.job->skip_errors)
		return -1;
	info->nlines++;
	return nl ? nl - (r->buf + off) + 1 : (long)(r->have - off);
}

/* an empty line: skipped, unless the file has one column (a NULL) */
static bool is_blank(const char *p, size_t n)
{
	return GB.q.ncols > 1 && (n == 1 || (n == 2 && p[0] == '\r'));
}

static void scan(unsigned pid, struct scan *s, struct gb_table *t, struct gb_vpinfo *info)
{
	uint64_t lo = slice_lo(pid), hi = slice_lo(pid + 1), pos;
	struct reader r = { .cap = GB.piece };

	r.buf = pems_malloc(r.cap + 1);
	pos = lo > GB.data ? first_record(lo, &r) : lo;
	info->start = pos;
	r.have = pos >= r.base && pos - r.base <= r.have ? r.have : 0;
	if (!r.have)
		r.base = pos;
	while (pos < hi) {
		size_t off = (size_t)(pos - r.base);
		unsigned nf = 0, lines = 0, bad = 0;
		enum pems_csv_rec_err re = PEMS_CSV_REC_OK;
		long n = 0;

		if (off < r.have)
			n = pems_csv_record(r.buf + off, r.have - off, r.eof, GB.delim, s->f, GB.q.max_need,
				      &nf, scratch(s, r.have - off), &lines, &re, &bad);
		if (n == 0) {
			if (off >= r.have && r.eof)
				break;
			if (!refill(&r, off)) {
				struct gb_errinfo e = { .line = info->nlines + 1, .kind = GE_LONG };

				note_err(info, &e);
				info->skipped++;
				break;
			}
			continue;
		}
		if (n < 0) {
			n = quote_err(&r, off, re, bad, info);
			if (n < 0)
				break;
			pos += (uint64_t)n;
			continue;
		}
		if (!is_blank(r.buf + off, (size_t)n) && !take(s, t, nf, (size_t)n, info)) {
			pos += (uint64_t)n;
			break;
		}
		info->nlines += lines + (r.buf[off + (size_t)n - 1] == '\n');
		pos += (uint64_t)n;
	}
	info->end = pos;
	pems_free(r.buf);
}

/* ---- superstep 3: the owner's groups, formatted ---- */

static char *format_groups(struct gb_table *t, size_t *bytes)
{
	size_t cap = 1u << 16, n = 0, maxk = 16;
	char *out = pems_malloc(cap), *sc;
	uint32_t i;

	for (i = 0; i < t->ngroups; i++) {
		size_t kl;

		gb_group_key(t, i, &kl);
		if (kl > maxk)
			maxk = kl;
	}
	sc = pems_malloc(maxk);
	for (i = 0; i < t->ngroups; i++) {
		uint32_t g = t->order[i];
		size_t b = gb_group_bound(t, g);

		if (n + b > cap) {
			while (n + b > cap)
				cap *= 2;
			out = pems_realloc(out, cap);
		}
		n += gb_group_text(t, g, out + n, GB.delim, sc);
	}
	pems_free(sc);
	*bytes = n;
	return out;
}

/* The owner's table must fit beside what it received: the values of
 * median and count(distinct) of its key range may not (one group larger
 * than a VP's memory is not split across VPs), so say so plainly. */
static void too_big(size_t groups, size_t kb, const size_t *items)
{
	size_t need = groups * (40 + GB.q.state_size) + kb, vals = 0;
	unsigned l;

	for (l = 0; l < GB.q.nlists; l++)
		vals += items[l];
	need += vals * sizeof(struct gb_item);
	if (need + (need >> 2) <= pems_context_avail())
		return;
	bsp_abort("pems: error: groupby: VP %u owns %zu groups with %zu values of median or count(distinct) (about %zu MiB) but only %zu MiB of its memory are free; a group that large is not split across VPs: raise --mem",
		  bsp_pid(), groups, vals, need >> 20, pems_context_avail() >> 20);
}

static char *merge(unsigned pid, void *recv, size_t bytes, struct gb_vpinfo *info,
		   size_t *out_bytes)
{
	struct gb_table *t = pems_malloc(sizeof(*t));
	size_t groups, kb, items[GB_MAX_AGGS];
	char *out;

	gb_wire_count(&GB.q, recv, bytes, &groups, &kb, items);
	too_big(groups, kb, items);
	gb_table_init(t, &GB.q, groups + 1, kb, items);
	if (!GB.q.nkeys && pid == 0)	/* no --by: one group, even of no rows */
		gb_table_touch(t, (const uint8_t *)"", 0);
	gb_table_absorb(t, recv, bytes);
	gb_table_finish(t);
	info->groups = t->ngroups;
	out = format_groups(t, out_bytes);
	gb_table_free(t);
	pems_free(t);
	return out;
}

static void write_part(unsigned pid, const struct gb_vpinfo *all, const char *part, size_t n)
{
	uint64_t off = GB.hdr_len;
	long long rc;
	unsigned i;

	for (i = 0; i < pid; i++)
		off += all[i].out_bytes;
	if (pid == 0 && GB.hdr_len) {
		rc = pems_file_write(GB.out, GB.hdr, GB.hdr_len, 0);
		if (rc != (long long)GB.hdr_len)
			fail("writing the output", rc);
	}
	rc = n ? pems_file_write(GB.out, part, n, off) : 0;
	if (rc != (long long)n)
		fail("writing the output", rc);
	if (pid == GB.v - 1)
		GB.out_total = off + n;
}

/* The formatted part crosses the allgather's sync in the message store
 * (an exchange to itself), not in the context: it lies above the freed
 * table and received groups, so the context written back would hold all
 * of them.  After the sync *part is the delivered copy. */
static void park(char **part, size_t n, size_t *bytes)
{
	size_t *counts = pems_calloc(GB.v, sizeof(*counts));
	char *old = *part;

	counts[bsp_pid()] = n;
	*part = NULL;
	pems_exchange(old, counts, (void **)part, bytes, NULL);
	pems_free(old);
	pems_free(counts);
}

void gb_spmd(void *arg)
{
	unsigned pid = bsp_pid(), v = GB.v;
	struct scan *s = pems_calloc(1, sizeof(*s));
	struct gb_vpinfo *info = pems_calloc(1, sizeof(*info)), *all;
	struct gb_table *t = pems_malloc(sizeof(*t));
	size_t *counts = pems_malloc((size_t)v * sizeof(*counts)), rbytes = 0, nout = 0;
	uint8_t *split, *send;
	void *recv = NULL;
	char *part;

	(void)arg;
	scan_init(s);
	split = splitters(pid, s);
	gb_table_init(t, &GB.q, GB.scan_groups, GB.scan_keys, NULL);
	scan(pid, s, t, info);
	scan_free(s);
	pems_free(s);
	send = gb_table_send(t, split, GB.q.nkeys ? v - 1 : 0, counts, v);
	pems_free(t);
	pems_free(split);
	pems_exchange(send, counts, &recv, &rbytes, NULL);
	pems_free(send);
	pems_free(counts);
	bsp_sync();
	part = merge(pid, recv, rbytes, info, &nout);
	pems_free(recv);
	info->out_bytes = nout;
	park(&part, nout, &rbytes);
	all = pems_malloc((size_t)v * sizeof(*all));
	pems_allgather(info, all, sizeof(*info));
	if (!gb_report(all, v))
		write_part(pid, all, part, nout);
	pems_free(all);
	pems_free(part);
	pems_free(info);
}
