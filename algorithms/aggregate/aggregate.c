/*
 * aggregate.c - GROUP BY of a file larger than memory (pems_aggregate):
 * the file front of the BSP core in groupby.c.
 *
 * Supersteps (v VPs; VP i owns input bytes [i*size/v, (i+1)*size/v) --
 * kv: rounded down to pages, the last VP taking the tail; csv: the lines
 * that start there):
 *   0-1  sample: SAMPLES random keys of the own slice (pems_file_read_pieces),
 *        pems_groupby_plan picks owner key ranges and heavy keys
 *   2    load: read the slice straight into context memory (kv: the
 *        records are the rows, read O_DIRECT in 4 MiB pieces, 4 in
 *        flight, while pems_groupby_fed pre-aggregates the rows already
 *        in; csv: parse the text into rows, remember the first error),
 *        then pems_groupby pre-aggregates, repartitions and frees the
 *        rows before its sync
 *   3    merge (pass 1): the owner walks its groups in key order,
 *        finalizes them, notes the first overflow and the bytes its
 *        output takes; allgather of {lines, error, bytes, overflow}
 *   4    write (pass 2): if nothing failed anywhere, walk again and write
 *        the formatted groups at the owner's offset (the sum of the bytes
 *        of lower VPs), in 1 MiB blocks
 * Disk traffic for N input bytes: read N, message store write + read of
 * at most N (less with pre-aggregation), the owners' sorted rows written
 * back and read once across the allgather (at most N), output once.
 *
 * Memory plan: see mu_for().  Errors in the data (malformed csv, an
 * overflowing sum) are found on whichever VP owns them and reported,
 * identically on every rank, for the lowest line / key.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pems_algorithms.h"
#include "aggregate/agg_internal.h"
#include "formats/pems_formats.h"
#include "job.h"

#define PAGE 4096u
#define CSV_PIECES 16		/* sample pieces per VP */
#define CSV_PIECE 4096
#define OUT_BLOCK (1u << 20)
#define LINE_MAX_OUT (24 + PEMS_AGG_MAX * 32)

struct vp_info {		/* allgathered after pass 1 */
	uint64_t nlines;	/* csv lines starting in the slice (header incl.) */
	uint64_t rows;
	uint64_t err_line;	/* 1-based within the slice */
	uint32_t err;		/* enum pems_csv_err */
	uint32_t err_col;	/* 1-based */
	uint32_t err_nf;	/* fields seen (E_FEW) */
	uint32_t ovf_agg;
	uint64_t ovf;		/* 1: ovf_key overflows */
	uint64_t ovf_key;
	uint64_t out_bytes;
	uint64_t groups;
	char tok[32];		/* the offending field, truncated */
};

struct agg_ctx {
	struct pems_aggregate_job *job;
	uint64_t size;		/* input bytes */
	int in, out;
	unsigned v;
	size_t table_bytes;
	/* csv */
	struct pems_csv_kv csv;	/* columns */
	uint64_t hdr_end;	/* first byte after the header line */
	char hdr[1024];		/* output header line */
	size_t hdr_len;
	uint64_t out_total;
	atomic_uint_fast64_t done[2];	/* input bytes loaded, output bytes written */
	atomic_int failed;
	struct agg_out fmt;	/* how groups are written */
};

static struct agg_ctx S;

static void fail(const char *what, long long rc)
{
	pems_job_fail("aggregate", what, rc);
}

static uint64_t slice_lo(unsigned pid)
{
	/* kv: page-aligned bounds (the last slice takes the tail), so that
	 * load_kv reads every slice O_DIRECT straight into place, with no
	 * unaligned head to shift out (a memmove of the whole slice) */
	if (S.job->in_fmt == PEMS_AGG_IN_KV)
		return pid >= S.v ? S.size : S.size / PAGE * pid / S.v * PAGE;
	return S.size * pid / S.v;
}

/* one csv data line as a row; 0 or an enum pems_csv_err */
static int parse_row(const char *s, size_t len, struct agg_pair *row,
		     unsigned *col, unsigned *nf, struct pems_csv_field *tok)
{
	int64_t val;
	int rc = pems_csv_kv_row(&S.csv, s, len, &row->key, &val, col, nf, tok);

	row->val = (uint64_t)val;
	return rc;
}

/* ---- superstep 0: samples ---- */

/* Samples come 8 to a 4 KiB page from KV_PAGES random pages of the
 * slice (one random read each, all in flight), or one per record for a
 * slice of fewer than PEMS_GROUPBY_SAMPLES records. */
#define KV_PAGES 32

static size_t sample_kv(unsigned pid, uint64_t *keys)
{
	uint64_t lo = slice_lo(pid) / 16, len = slice_lo(pid + 1) / 16 - lo;
	unsigned i, j, m = len < PEMS_GROUPBY_SAMPLES ? (unsigned)len : PEMS_GROUPBY_SAMPLES;
	bool pages = m == PEMS_GROUPBY_SAMPLES && S.size >= PAGE;
	unsigned np = pages ? KV_PAGES : m, per = PEMS_GROUPBY_SAMPLES / KV_PAGES;
	uint64_t *off = pems_malloc(PEMS_GROUPBY_SAMPLES * sizeof(*off));
	struct agg_pair *recs = pems_malloc(pages ? KV_PAGES * PAGE : PEMS_GROUPBY_SAMPLES * sizeof(*recs));
	size_t piece = pages ? PAGE : 16;
	long long rc;

	for (i = 0; i < np; i++) {
		uint64_t a = len * i / np, b = len * (i + 1) / np;

		off[i] = (lo + a + pems_mix64(pid * 1000003ull + i) % (b - a)) * 16;
		if (pages) {
			off[i] &= ~(uint64_t)(PAGE - 1);
			if (off[i] + PAGE > S.size)
				off[i] = S.size - PAGE;	/* a multiple of 16 */
		}
	}
	rc = np ? pems_file_read_pieces(S.in, recs, off, np, piece) : 0;
	if (rc != (long long)(np * piece))
		fail("reading samples of the input", rc);
	for (i = 0; i < np; i++) {
		if (!pages) {
			keys[i] = recs[i].key;
			continue;
		}
		for (j = 0; j < per; j++) {	/* spread over the page's 256 records */
			unsigned r = j * (PAGE / 16 / per) +
				     (unsigned)(pems_mix64(pid * 7ull + i * 131 + j) % (PAGE / 16 / per));

			keys[i * per + j] = recs[i * (PAGE / 16) + r].key;
		}
	}
	pems_free(recs);
	pems_free(off);
	return m;
}

static size_t sample_csv(unsigned pid, uint64_t *keys)
{
	uint64_t lo = slice_lo(pid), hi = slice_lo(pid + 1);
	uint64_t *off = pems_malloc(CSV_PIECES * sizeof(*off));
	char *buf = pems_malloc(CSV_PIECES * CSV_PIECE);
	size_t m = 0, per = PEMS_GROUPBY_SAMPLES / CSV_PIECES;
	unsigned i, np = 0;
	long long rc;

	if (lo < S.hdr_end)
		lo = S.hdr_end;
	if (hi > lo && S.size >= CSV_PIECE) {
		for (i = 0; i < CSV_PIECES; i++) {
			uint64_t o = lo + pems_mix64(pid * 7919ull + i) % (hi - lo);

			off[np++] = o + CSV_PIECE <= S.size ? o : S.size - CSV_PIECE;
		}
		rc = pems_file_read_pieces(S.in, buf, off, np, CSV_PIECE);
		if (rc != (long long)np * CSV_PIECE)
			fail("reading samples of the input", rc);
	}
	for (i = 0; i < np; i++) {
		const char *p = buf + (size_t)i * CSV_PIECE, *end = p + CSV_PIECE, *nl;
		size_t got = 0;

		nl = memchr(p, '\n', CSV_PIECE);
		while (nl && got < per) {
			const char *s = nl + 1, *e = memchr(s, '\n', (size_t)(end - s));
			struct agg_pair row;
			struct pems_csv_field tok;
			unsigned col, nf;

			if (!e)
				break;
			if (off[i] + (uint64_t)(s - p) >= S.hdr_end &&
			    !parse_row(s, (size_t)(e - s), &row, &col, &nf, &tok)) {
				keys[m++] = row.key;
				got++;
			}
			nl = e;
		}
	}
	pems_free(buf);
	pems_free(off);
	return m;
}

/* ---- superstep 2: load the slice as rows ---- */

/* kv: the slice is read in RPIECE pieces, RDEPTH in flight, while the
 * pre-aggregation consumes the rows already in (pems_groupby_fed): the
 * disk stays busy while this VP computes, instead of idling while it
 * aggregates a slice read whole */
#define RPIECE (4u << 20)
#define RDEPTH 4

struct kv_feed {
	uint8_t *buf;
	uint64_t lo, bytes;
	size_t np, waited, started;
	struct pems_file_aio aio[RDEPTH];
};

static size_t piece_len(const struct kv_feed *f, size_t p)
{
	uint64_t at = (uint64_t)p * RPIECE;

	return f->bytes - at < RPIECE ? (size_t)(f->bytes - at) : RPIECE;
}

static void feed_start(struct kv_feed *f)
{
	size_t p = f->started++;
	int rc = pems_file_start(S.in, false, f->buf + (size_t)p * RPIECE, piece_len(f, p),
				 f->lo + (uint64_t)p * RPIECE, &f->aio[p % RDEPTH]);

	if (rc)
		fail("reading the input", rc);
}

/* agg_ready_fn: wait for pieces until row i is in */
static size_t kv_ready(void *arg, size_t i)
{
	struct kv_feed *f = arg;
	uint64_t have = (uint64_t)f->waited * RPIECE;

	while (f->waited < f->np && have <= (uint64_t)i * 16) {
		size_t len = piece_len(f, f->waited);
		long long rc = pems_file_wait(&f->aio[f->waited % RDEPTH]);

		if (rc != (long long)len)
			fail("reading the input", rc);
		f->waited++;
		have += len;
		atomic_fetch_add(&S.done[0], len);
		if (f->started < f->np)
			feed_start(f);
	}
	return (size_t)((have < f->bytes ? have : f->bytes) / 16);
}

/* Start reading the slice (page-aligned: slice_lo) into a new buffer;
 * the rows arrive through kv_ready. */
static struct agg_pair *load_kv(unsigned pid, size_t *n, struct kv_feed *f)
{
	f->lo = slice_lo(pid);
	f->bytes = slice_lo(pid + 1) - f->lo;
	f->buf = pems_malloc(f->bytes + 1);
	f->np = (size_t)((f->bytes + RPIECE - 1) / RPIECE);
	f->waited = f->started = 0;
	while (f->started < f->np && f->started < RDEPTH)
		feed_start(f);
	*n = f->bytes / 16;
	return (struct agg_pair *)(void *)f->buf;
}

static struct agg_pair *load_csv(unsigned pid, size_t *n, struct vp_info *info)
{
	uint64_t lo = slice_lo(pid), hi = slice_lo(pid + 1);
	uint64_t start = lo ? lo - 1 : 0, len = hi - start, got;
	size_t cap, i, nrows = 0;
	struct agg_pair *rows;
	char *buf;
	long long rc;

	buf = pems_malloc(len + 1);
	rc = len ? pems_file_read(S.in, buf, len, start) : 0;
	if (rc != (long long)len)
		fail("reading the input", rc);
	got = len;
	/* the last line starting before hi may run past it */
	while (start + got < S.size && got && buf[got - 1] != '\n') {
		uint64_t more = S.size - start - got;

		if (more > 65536)
			more = 65536;
		buf = pems_realloc(buf, got + more + 1);
		rc = pems_file_read(S.in, buf + got, more, start + got);
		if (rc != (long long)more)
			fail("reading the input", rc);
		got += more;
		{
			char *nl = memchr(buf + got - more, '\n', more);

			if (nl) {
				got = (uint64_t)(nl - buf) + 1;
				break;
			}
		}
	}
	/* rows: at most one per line start in [lo, hi) */
	cap = 0;
	for (i = 0; i < hi - start; i++)
		if (buf[i] == '\n')
			cap++;
	rows = pems_malloc((cap + 2) * sizeof(*rows));
	i = lo ? 1 : 0;		/* index of byte lo in buf */
	if (lo) {
		/* a line starts at lo only if the byte before is a newline */
		if (buf[0] != '\n') {
			char *nl = hi > lo ? memchr(buf + 1, '\n', (size_t)(hi - lo)) : NULL;

			i = nl ? (size_t)(nl - buf) + 1 : (size_t)(hi - start);
		}
	}
	while (start + i < hi) {
		char *nl = memchr(buf + i, '\n', got - i);
		size_t e = nl ? (size_t)(nl - buf) : got;
		unsigned col = 0, nf = 0;
		struct pems_csv_field tok = { NULL, 0 };
		int err;

		info->nlines++;
		if (start + i < S.hdr_end || e == i || (e == i + 1 && buf[i] == '\r')) {
			i = e + 1;	/* the header, or an empty line */
			continue;
		}
		if (!info->err) {
			err = parse_row(buf + i, e - i, &rows[nrows], &col, &nf, &tok);
			if (err) {
				info->err = (uint32_t)err;
				info->err_line = info->nlines;
				info->err_col = col;
				info->err_nf = nf;
				snprintf(info->tok, sizeof(info->tok), "%.*s",
					 (int)(tok.len < 31 ? tok.len : 31), tok.p ? tok.p : "");
			} else {
				nrows++;
			}
		}
		i = e + 1;
	}
	pems_free(buf);
	atomic_fetch_add(&S.done[0], hi - lo);
	*n = info->err ? 0 : nrows;
	return rows;
}

struct pass1 {
	struct vp_info *info;
};

static void pass1_fn(uint64_t key, const void *states, void *arg)
{
	struct pass1 *p = arg;
	unsigned bad;
	long n;

	if (p->info->ovf)
		return;
	n = agg_format_group(&S.fmt, key, states, NULL, &bad);	/* bytes only */
	if (n < 0) {
		p->info->ovf = 1;
		p->info->ovf_key = key;
		p->info->ovf_agg = bad;
		return;
	}
	p->info->out_bytes += (uint64_t)n;
}

struct pass2 {
	char *buf;
	size_t fill;
	uint64_t off;		/* file offset of buf[0] */
};

static void flush_out(struct pass2 *p)
{
	long long rc;

	if (!p->fill)
		return;
	rc = pems_file_write(S.out, p->buf, p->fill, p->off);
	if (rc != (long long)p->fill)
		fail("writing the output", rc);
	atomic_fetch_add(&S.done[1], p->fill);
	p->off += p->fill;
	p->fill = 0;
}

static void pass2_fn(uint64_t key, const void *states, void *arg)
{
	struct pass2 *p = arg;
	unsigned bad;
	long n = agg_format_group(&S.fmt, key, states, p->buf + p->fill, &bad);

	if (n < 0)	/* pass 1 saw no overflow */
		bsp_abort("pems: error: aggregate: internal: overflow in pass 2");
	p->fill += (size_t)n;
	if (p->fill + LINE_MAX_OUT > OUT_BLOCK)
		flush_out(p);
}

/* ---- error messages (the same on every VP and rank) ---- */

static void report(const struct vp_info *all)
{
	struct pems_aggregate_job *job = S.job;
	uint64_t line = 0;
	unsigned i;

	if (atomic_exchange(&S.failed, 1))
		return;
	for (i = 0; i < S.v; i++) {
		const struct vp_info *f = &all[i];

		if (!f->err) {
			line += f->nlines;
			continue;
		}
		line += f->err_line;
		switch (f->err) {
		case PEMS_CSV_FEW:
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "%s: line %" PRIu64 ": %u fields, but the header has %u (column %u missing)",
				 job->in, line, f->err_nf, S.csv.ncols, f->err_col);
			break;
		case PEMS_CSV_MANY:
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "%s: line %" PRIu64 ", column %u: more fields than the %u of the header",
				 job->in, line, f->err_col, S.csv.ncols);
			break;
		case PEMS_CSV_QUOTE:
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "%s: line %" PRIu64 ", column %u: malformed quoted field (unterminated, or text after the closing quote)",
				 job->in, line, f->err_col);
			break;
		case PEMS_CSV_KEY:
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "%s: line %" PRIu64 ", column %u: key '%s' is not an unsigned 64-bit integer",
				 job->in, line, f->err_col, f->tok);
			break;
		default:
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "%s: line %" PRIu64 ", column %u: value '%s' is not a 64-bit integer",
				 job->in, line, f->err_col, f->tok);
			break;
		}
		return;
	}
	for (i = 0; i < S.v; i++) {
		if (all[i].ovf) {
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "%s of key %" PRIu64 " overflows int64",
				 job->aggs[all[i].ovf_agg]->name, all[i].ovf_key);
			return;
		}
	}
}

static void agg_spmd(void *arg)
{
	unsigned pid = bsp_pid(), i;
	uint64_t *keys = pems_malloc(PEMS_GROUPBY_SAMPLES * sizeof(*keys));
	struct vp_info *info = pems_calloc(1, sizeof(*info)), *all;
	struct pems_groupby_plan *plan;
	struct pems_groupby *g;
	struct agg_pair *rows;
	struct kv_feed *feed;
	uint64_t ng = 0, off;
	size_t m, n;
	bool bad = false;

	(void)arg;
	m = S.job->in_fmt == PEMS_AGG_IN_KV ? sample_kv(pid, keys) : sample_csv(pid, keys);
	plan = pems_groupby_plan(keys, m);
	pems_free(keys);
	feed = S.job->in_fmt == PEMS_AGG_IN_KV ? pems_malloc(sizeof(*feed)) : NULL;
	rows = feed ? load_kv(pid, &n, feed) : load_csv(pid, &n, info);
	info->rows = n;
	g = pems_groupby_fed(plan, rows, n, S.job->aggs, S.job->naggs, S.table_bytes, &ng,
			     feed ? kv_ready : NULL, feed);
	if (feed)
		pems_free(feed);	/* every piece was waited for: all rows were consumed */
	pems_free(plan);
	info->groups = ng;
	if (!info->err) {
		struct pass1 *p1 = pems_malloc(sizeof(*p1));

		p1->info = info;
		pems_groupby_walk(g, pass1_fn, p1);
		pems_free(p1);
	}
	all = pems_malloc(S.v * sizeof(*all));
	/* the groups cross the sync in the message store, not in the
	 * context: a large context to swap in would wait for budget that
	 * prefetching may hold (see the report on the runtime) */
	pems_groupby_park(g);
	pems_allgather(info, all, sizeof(*info));
	pems_groupby_unpark(g);
	for (i = 0, off = S.hdr_len; i < S.v; i++) {
		bad |= all[i].err || all[i].ovf;
		if (i < pid)
			off += all[i].out_bytes;
	}
	if (pid == 0 || bad) {
		uint64_t rows_total = 0, groups = 0, total = S.hdr_len;

		for (i = 0; i < S.v; i++) {
			rows_total += all[i].rows;
			groups += all[i].groups;
			total += all[i].out_bytes;
		}
		if (pid == 0) {
			S.job->rows = rows_total;
			S.job->groups = groups;
			S.out_total = total;
		}
		if (bad)
			report(all);
	}
	pems_free(all);
	if (!bad) {
		struct pass2 *p2 = pems_malloc(sizeof(*p2));

		p2->buf = pems_malloc(OUT_BLOCK);
		p2->fill = 0;
		p2->off = off;
		if (pid == 0 && S.hdr_len) {
			memcpy(p2->buf, S.hdr, S.hdr_len);
			p2->fill = S.hdr_len;
			p2->off = 0;
		}
		pems_groupby_walk(g, pass2_fn, p2);
		flush_out(p2);
		pems_free(p2->buf);
		pems_free(p2);
	}
	pems_groupby_free(g);
	pems_free(info);
}

/* ---- planning ---- */

/*
 * Per VP, for B bytes of rows (16 per row) in its slice:
 *   load + partition: rows B, owner ids B/4, table T = B/4, send buffer
 *   <= B + T: 2.75 B
 *   owner: received R (~B, +30 % for imbalance) + its raw rows and
 *   partials copied out (<= R) + sort index: ~2.6 B
 * so mu = 2.9 B + per-VP tables (v-sized: counts, plan, allgather,
 * VP 0's gathered samples) + 3 MiB (stack, sample buffers, output block).
 * csv adds its text slice while parsing (freed before the partition).
 */
static uint64_t rows_per_byte_x1024;	/* csv: 16 * rows / text byte, *1024 */

static uint64_t mu_for(uint64_t bytes, unsigned v)
{
	uint64_t text = S.job->in_fmt == PEMS_AGG_IN_CSV ? bytes / v + (64u << 10) : 0;
	uint64_t rb = S.job->in_fmt == PEMS_AGG_IN_CSV ? bytes * rows_per_byte_x1024 / 1024 : bytes;
	uint64_t b = rb / v, tables = (uint64_t)v * (64 + 16 + sizeof(struct vp_info) + 8 +
						      (PEMS_GROUPBY_SAMPLES * 8 + 8) * 2);
	uint64_t need = b * 29 / 10;

	if (text + b > need)
		need = text + b;
	unsigned i;
	size_t ss = 0;

	for (i = 0; i < S.job->naggs; i++)
		ss += S.job->aggs[i]->state_size;
	/* the heavy-key table: up to 16 Ki slots of key + states + flag */
	return need + tables + (3u << 20) + (16384u * (ss + 17));
}

static int plan(struct pems_config *cfg, uint64_t bytes, const struct pems_plan_env *env)
{
	unsigned k, best_v, user_v = cfg->procs;
	int rc = pems_plan_for(cfg, bytes, "aggregate", mu_for, env);
	uint64_t rb;

	if (rc)
		return rc;
	k = cfg->threads;
	best_v = cfg->procs;
	rb = S.job->in_fmt == PEMS_AGG_IN_CSV ? bytes * rows_per_byte_x1024 / 1024 : bytes;
	if (!user_v && rb / 16 < best_v)
		best_v = rb / 16 > k ? (unsigned)(rb / 16) : k;
	if (best_v < 1)
		best_v = 1;
	cfg->procs = best_v;
	if (!cfg->mu)
		cfg->mu = mu_for(bytes, best_v);
	cfg->mu = (cfg->mu + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
	S.table_bytes = rb / best_v / 4;
	if (S.table_bytes < (64u << 10))
		S.table_bytes = 64u << 10;
	return 0;
}

void pems_aggregate_shape(struct pems_aggregate_shape *s)
{
	pems_groupby_shape(s);
	s->sample_pages = KV_PAGES;
	s->info = sizeof(struct vp_info);
}

/* plan() for the cost model: kv input only (a csv plan needs
 * rows_per_byte_x1024 from a sample of the file); S is restored */
int pems_aggregate_plan(struct pems_config *cfg, const struct pems_aggregate_job *job,
			uint64_t bytes, const struct pems_plan_env *env)
{
	struct pems_aggregate_job *saved = S.job;
	size_t table = S.table_bytes;
	int rc;

	if (job->in_fmt != PEMS_AGG_IN_KV)
		return -EINVAL;
	S.job = (struct pems_aggregate_job *)job;	/* mu_for only reads it */
	rc = plan(cfg, bytes, env);
	S.job = saved;
	S.table_bytes = table;
	return rc;
}

/* ---- csv header ---- */

/* Rows per text byte, from the lines after the header in the first
 * @got bytes at @buf (*1024, with a margin): the csv plan's guess. */
static uint64_t rows_per_byte(const char *buf, size_t got, const char *nl)
{
	uint64_t lines = 0, bytes = 0, r;
	const char *p;

	if (nl) {
		p = nl + 1;
		while ((p = memchr(p, '\n', (size_t)(buf + got - p)))) {
			lines++;
			p++;
			bytes = (uint64_t)(p - nl - 1);
		}
	}
	r = lines && bytes ? 16 * 1024 * lines / bytes + 1 : 16 * 1024 / 4;
	return r * 5 / 4;	/* margin */
}

static int read_header(void)
{
	struct pems_aggregate_job *job = S.job;
	char *buf, *nl, why[256];
	ssize_t got;
	size_t bom;
	int fd, rc;

	buf = malloc(1u << 20);
	if (!buf)
		return -ENOMEM;
	fd = open(job->in, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		free(buf);
		return rc;
	}
	got = pread(fd, buf, (1u << 20) - 1, 0);
	close(fd);
	if (got < 0) {
		free(buf);
		return -EIO;
	}
	buf[got] = '\0';
	nl = memchr(buf, '\n', (size_t)got);
	if (got == 0 || (!nl && (size_t)got == (1u << 20) - 1)) {
		if (got)
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "%s: line 1: header row longer than 1 MiB", job->in);
		else
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "%s: empty file: a csv input needs a header row", job->in);
		free(buf);
		return -EINVAL;
	}
	S.hdr_end = nl ? (uint64_t)(nl - buf) + 1 : (uint64_t)got;
	/* a UTF-8 byte order mark (spreadsheet exports) is not part of the
	 * first column's name */
	bom = got >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3) ? 3 : 0;
	rc = pems_csv_kv_header(&S.csv, buf + bom, S.hdr_end - (nl ? 1 : 0) - bom, job->key_col,
				job->value_col, why, sizeof(why));
	if (rc)
		snprintf(job->errmsg, sizeof(job->errmsg), "%s: %s", job->in, why);
	rows_per_byte_x1024 = rows_per_byte(buf, (size_t)got, nl);
	free(buf);
	return rc;
}

/* ---- the job ---- */

/* pems_job_poll_fn: aggregate (input bytes), then write (output bytes) */
static bool agg_poll(void *state, bool final, char *phase, size_t len, uint64_t *done,
		     uint64_t *total)
{
	uint64_t w = atomic_load(&S.done[1]);

	(void)state;
	if (final && atomic_load(&S.failed))
		return false;
	if (final) {
		snprintf(phase, len, "done");
		*done = *total = S.size;
	} else if (w && S.out_total) {
		snprintf(phase, len, "write");
		*done = w;
		*total = S.out_total;
	} else {
		snprintf(phase, len, "aggregate");
		*done = atomic_load(&S.done[0]);
		*total = S.size;
	}
	return true;
}

/* The job's aggregates: 1..PEMS_AGG_MAX, complete; S.fmt of them. */
static int check_aggs(struct pems_aggregate_job *job)
{
	static const char *const names[] = { "count", "sum", "min", "max", "avg" };
	static const enum agg_kind kinds[] = { AK_COUNT, AK_SUM, AK_MINMAX, AK_MINMAX, AK_AVG };
	unsigned i, b;

	if (!job->naggs || job->naggs > PEMS_AGG_MAX) {
		snprintf(job->errmsg, sizeof(job->errmsg), "give 1 to %d aggregates", PEMS_AGG_MAX);
		return -EINVAL;
	}
	for (i = 0; i < job->naggs; i++) {
		const struct pems_aggregate *a = job->aggs[i];

		if (!a || !a->init || !a->update || !a->combine || !a->finalize ||
		    !a->state_size || a->state_size > PEMS_AGG_STATE_MAX) {
			snprintf(job->errmsg, sizeof(job->errmsg),
				 "aggregate %u is incomplete (callbacks, state size 1..%d)",
				 i + 1, PEMS_AGG_STATE_MAX);
			return -EINVAL;
		}
		S.fmt.kind[i] = AK_USER;
		for (b = 0; b < 5; b++)
			if (a == pems_aggregate_builtin(names[b]))
				S.fmt.kind[i] = kinds[b];
	}
	return 0;
}

/* The input: its size (S.size), kv records or a csv header.  0 or -errno. */
static int check_input(struct pems_aggregate_job *job)
{
	struct stat st;
	int fd, rc;

	fd = pems_input_open("aggregate", job->in, &st);	/* no FIFO, never blocks */
	if (fd < 0)
		return fd;
	close(fd);
	S.size = (uint64_t)st.st_size;
	if (job->in_fmt == PEMS_AGG_IN_KV && S.size % 16) {
		snprintf(job->errmsg, sizeof(job->errmsg),
			 "%s: size %llu is not a multiple of the 16-byte kv record (u64 key, i64 value)",
			 job->in, (unsigned long long)S.size);
		return -EINVAL;
	}
	if (job->in_fmt == PEMS_AGG_IN_CSV) {
		rc = read_header();
		if (rc && !job->errmsg[0])
			fprintf(stderr, "pems: error: aggregate: %s: %s\n", job->in, strerror(-rc));
		return rc;
	}
	return 0;
}

int pems_aggregate(struct pems_aggregate_job *job)
{
	struct pems_plan_env env = pems_plan_here(false);
	struct pems_job j;
	int rc;

	memset(&S, 0, sizeof(S));
	S.job = job;
	job->errmsg[0] = '\0';
	job->rows = job->groups = 0;
	rc = check_aggs(job);
	if (rc)
		return rc;
	pems_job_init(&j, "aggregate", job->cfg, job->progress, job->progress_arg, agg_poll, NULL);
	j.own_errors = true;
	rc = pems_job_lock(&j, job->out);	/* before any work */
	if (!rc)
		rc = check_input(job);
	if (rc)
		return pems_job_end(&j, rc, false, 0);
	S.fmt.kv = job->out_fmt == PEMS_AGG_OUT_KV;
	S.fmt.naggs = job->naggs;
	S.fmt.aggs = job->aggs;
	S.hdr_len = agg_format_header(&S.fmt, S.hdr, sizeof(S.hdr));
	rc = plan(&j.cfg, S.size, &env);
	if (rc)
		return pems_job_end(&j, rc, false, 0);
	S.v = j.cfg.procs;
	rc = pems_job_input(&j, job->in);
	if (!rc)
		rc = pems_job_output(&j, job->out, false, 0);
	if (!rc) {
		S.in = j.in;
		S.out = j.out_handle;
		rc = pems_job_run(&j, agg_spmd, NULL);
		if (!rc && atomic_load(&S.failed))
			rc = strstr(job->errmsg, "overflows") ? -ERANGE : -EINVAL;
	}
	return pems_job_end(&j, rc, true, S.out_total);
}
