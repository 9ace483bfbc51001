/*
 * engine.c - pems_csv_groupby: the driver around the BSP section in
 * spmd.c.  Before the run, rank 0's view of the file's first MiB gives
 * the header (column names; a UTF-8 BOM is skipped), the types of the
 * columns the query needs that --schema does not declare (a column is
 * i64 if every non-empty field of the sample is an integer, f64 if every
 * one is a number, else str), the bytes per row and per key for the
 * memory plan.  After it, the VPs' error reports become one message
 * (the lowest line), identical on every rank.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "groupby/gb.h"
#include "job.h"

#define HEAD (1u << 20)		/* bytes read for the header and the sample */
#define INFER_ROWS 10000

struct gb_run GB;
static const char *display_name;	/* of the input in messages (stdin) */

static struct {
	uint64_t rec_bytes, key_bytes;	/* per sampled row, at least 1 */
	uint64_t rows, distinct;	/* sampled rows, distinct keys among them */
	bool quoted_nl;		/* a sampled field holds a newline */
} sample;

#define SEEN_SLOTS 32768	/* > 2 * INFER_ROWS */

/* count the key of a sampled row in a hash set of key hashes */
static void seen_key(uint64_t *set, const struct pems_csv_field *f)
{
	uint64_t h = 1, j;
	unsigned i;

	for (i = 0; i < GB.q.nkeys; i++)
		h = h * 0x9e3779b97f4a7c15ull ^
		    gb_hash((const uint8_t *)f[GB.q.need_col[GB.q.key[i]]].p,
			    f[GB.q.need_col[GB.q.key[i]]].len);
	h |= 1;
	for (j = h & (SEEN_SLOTS - 1); set[j]; j = (j + 1) & (SEEN_SLOTS - 1))
		if (set[j] == h)
			return;
	set[j] = h;
	sample.distinct++;
}

/* ---- reports ---- */

static void describe(char *m, size_t len, const struct gb_errinfo *e, uint64_t line)
{
	const struct gb_query *q = &GB.q;
	const char *in = GB.name;

	switch (e->kind) {
	case GE_FEW:
		snprintf(m, len, "%s: line %" PRIu64 ": %u fields, but the header has %u (column %u missing)",
			 in, line, e->nf, q->ncols, e->col);
		break;
	case GE_MANY:
		snprintf(m, len, "%s: line %" PRIu64 ", column %u: %u fields, more than the %u of the header",
			 in, line, e->col, e->nf, q->ncols);
		break;
	case GE_QUOTE_OPEN:
		snprintf(m, len, "%s: line %" PRIu64 ", column %u: quoted field not closed before the end of the file",
			 in, line, e->col);
		break;
	case GE_QUOTE_TEXT:
		snprintf(m, len, "%s: line %" PRIu64 ", column %u: text after the closing quote of a field",
			 in, line, e->col);
		break;
	case GE_INT:
	case GE_NUM: {
		bool num = gb_guess(e->tok, strlen(e->tok)) != GB_STR;
		int n = snprintf(m, len, "%s: line %" PRIu64 ", column %u (%s): '%s' is not %s",
				 in, line, e->col, q->need_name[e->nf], e->tok,
				 e->kind == GE_INT ? "an integer" : "a number");

		if (num && n > 0 && (size_t)n < len)	/* 2.5 in an i64 column */
			snprintf(m + n, len - (size_t)n,
				 " (declare the column's type with --schema %s:f64)", q->need_name[e->nf]);
		break;
	}
	case GE_LONG:
		snprintf(m, len, "%s: line %" PRIu64 ": a record longer than 64 MiB (a quote not closed?)",
			 in, line);
		break;
	default:
		snprintf(m, len, "%s: byte %" PRIu64 ": a quoted field with a newline spans the boundary of two VPs' slices; run again with --procs 1",
			 in, line);
		break;
	}
}

/* the first slice boundary where VP i-1's end is not VP i's start */
static unsigned bad_boundary(const struct gb_vpinfo *all, unsigned v)
{
	unsigned i;

	for (i = 1; i < v; i++)
		if (all[i].start != all[i - 1].end && all[i].start < GB.size)
			return i;
	return 0;
}

static void skipped_text(const struct gb_vpinfo *all, unsigned v)
{
	struct pems_csv_groupby_job *job = GB.job;
	uint64_t line = GB.hdr_lines;
	size_t n = 0;
	unsigned i, j, shown = 0;

	job->skipmsg[0] = '\0';
	for (i = 0; i < v && shown < GB_NERR; i++) {
		for (j = 0; j < all[i].nerr && j < GB_NERR && shown < GB_NERR; j++, shown++) {
			char m[400];

			describe(m, sizeof(m), &all[i].err[j], line + all[i].err[j].line);
			n += (size_t)snprintf(job->skipmsg + n, n < sizeof(job->skipmsg) ?
					      sizeof(job->skipmsg) - n : 0, "%s%s", n ? "\n" : "", m);
			if (n >= sizeof(job->skipmsg))
				n = sizeof(job->skipmsg) - 1;
		}
		line += all[i].nlines;
	}
}

bool gb_report(const struct gb_vpinfo *all, unsigned v)
{
	struct pems_csv_groupby_job *job = GB.job;
	uint64_t line = GB.hdr_lines, rows = 0, groups = 0, skipped = 0;
	unsigned i, b = bad_boundary(all, v);
	bool failed = false;

	for (i = 0; i < v; i++) {
		rows += all[i].rows;
		groups += all[i].groups;
		skipped += all[i].skipped;
		if (!job->skip_errors && all[i].nerr && !failed) {
			failed = true;
			if (!b || b > i) {
				if (!atomic_exchange(&GB.failed, 1))
					describe(job->errmsg, sizeof(job->errmsg), &all[i].err[0],
						 line + all[i].err[0].line);
			}
		}
		line += all[i].nlines;
	}
	if (b && (!failed || !job->errmsg[0])) {
		struct gb_errinfo e = { .kind = GE_BOUNDARY };

		failed = true;
		if (!atomic_exchange(&GB.failed, 1))
			describe(job->errmsg, sizeof(job->errmsg), &e, all[b].start);
	}
	if (bsp_pid() == 0) {
		job->rows = rows;
		job->groups = groups;
		job->skipped = skipped;
		if (skipped && job->skip_errors)
			skipped_text(all, v);
	}
	return failed;
}

/* ---- the head of the file: header, types, sizes ---- */

struct head {
	char *buf;
	size_t got;
	size_t at;		/* parse position */
	bool all;		/* buf holds the whole file */
	struct pems_csv_field f[GB_MAX_COLS];
	char *scratch;
	char (*names)[GB_NAME];
};

static int head_err(const char *fmt, const char *a)
{
	snprintf(GB.job->errmsg, sizeof(GB.job->errmsg), fmt, GB.name, a);
	return -EINVAL;
}

static int read_head(struct head *h)
{
	int fd = open(GB.job->in, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	h->buf = malloc(HEAD + 1);
	h->scratch = malloc(HEAD + 1);
	h->names = calloc(GB_MAX_COLS, GB_NAME);
	if (!h->buf || !h->scratch || !h->names) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, h->buf, HEAD, 0);
	close(fd);
	if (n < 0)
		return -errno;
	h->got = (size_t)n;
	h->all = h->got == GB.size;
	h->at = h->got >= 3 && !memcmp(h->buf, "\xef\xbb\xbf", 3) ? 3 : 0;
	return 0;
}

/* the header record (or with no_header the first record, for its width) */
static int header(struct head *h)
{
	unsigned nf = 0, lines = 0, bad = 0, i;
	enum pems_csv_rec_err re;
	long r;

	GB.data = h->at;
	if (h->at == h->got)	/* empty */
		return 0;
	r = pems_csv_record(h->buf + h->at, h->got - h->at, h->all, GB.delim, h->f, GB_MAX_COLS, &nf,
		      h->scratch, &lines, &re, &bad);
	if (r == 0)
		return head_err("%s: line 1: the first record is longer than 1 MiB%s", "");
	if (r < 0)
		return head_err("%s: line 1: malformed quoted field in the %s", GB.job->no_header ?
				"first record" : "header");
	if (nf > GB_MAX_COLS)
		return head_err("%s: line 1: more than 1024 columns%s", "");
	GB.q.ncols = nf;
	for (i = 0; i < nf; i++) {
		size_t len = h->f[i].len < GB_NAME - 1 ? h->f[i].len : GB_NAME - 1;

		if (GB.job->no_header) {
			snprintf(h->names[i], GB_NAME, "c%u", i + 1);
		} else {
			memcpy(h->names[i], h->f[i].p, len);
			h->names[i][len] = '\0';
		}
	}
	if (!GB.job->no_header) {
		h->at += (size_t)r;
		GB.data = h->at;
		GB.hdr_lines = lines + 1;
	}
	return 0;
}

static bool numeric_use(unsigned col)
{
	unsigned i;

	for (i = 0; i < GB.q.naggs; i++) {
		const struct gb_agg *a = &GB.q.agg[i];

		if ((a->col == (int)col || a->col2 == (int)col) && a->fn != F_COUNT &&
		    a->fn != F_COUNT_STAR && a->fn != F_DISTINCT && a->fn != F_MIN && a->fn != F_MAX)
			return true;
	}
	return false;
}

/* Types of the needed columns from up to INFER_ROWS records; sizes. */
static void infer(struct head *h)
{
	struct gb_query *q = &GB.q;
	enum gb_type t[GB_MAX_KEYS + 2 * GB_MAX_AGGS];
	bool seen[GB_MAX_KEYS + 2 * GB_MAX_AGGS] = { false };
	uint64_t rows = 0, kb = 0, at = h->at;
	uint64_t *set = calloc(SEEN_SLOTS, 8);
	unsigned i;

	for (i = 0; i < q->nneed; i++)
		t[i] = GB_I64;
	while (rows < INFER_ROWS && at < h->got) {
		unsigned nf, lines, bad;
		enum pems_csv_rec_err re;
		long r = pems_csv_record(h->buf + at, h->got - at, h->all, GB.delim, h->f, GB_MAX_COLS, &nf,
				   h->scratch, &lines, &re, &bad);

		if (r <= 0)
			break;
		at += (size_t)r;
		sample.quoted_nl |= lines > 0;
		if (nf != q->ncols)
			continue;
		rows++;
		for (i = 0; i < q->nneed; i++) {
			const struct pems_csv_field *f = &h->f[q->need_col[i]];
			enum gb_type g;

			if (!f->len || (GB.null_tok && f->len == GB.null_len &&
					!memcmp(f->p, GB.null_tok, f->len)))
				continue;
			g = gb_guess(f->p, f->len);
			seen[i] = true;
			if (g == GB_STR || (g == GB_F64 && t[i] == GB_I64))
				t[i] = g;
		}
		for (i = 0; i < q->nkeys; i++)
			kb += 2 + h->f[q->need_col[q->key[i]]].len;
		if (set)
			seen_key(set, h->f);
	}
	free(set);
	sample.rows = rows;
	for (i = 0; i < q->nneed; i++) {
		if (q->type_given[i])
			continue;
		q->need_type[i] = seen[i] ? t[i] : numeric_use(i) ? GB_F64 : GB_STR;
	}
	sample.rec_bytes = rows ? (at - h->at) / rows + 1 : 64;
	sample.key_bytes = rows ? kb / rows + 8 : 16;
}

static int prepare(void)
{
	struct head h = { 0 };
	int rc = read_head(&h);

	if (!rc)
		rc = header(&h);
	if (!rc && GB.q.ncols == 0) {	/* empty file: the query's names, no rows */
		unsigned i;

		GB.q.ncols = GB.q.nneed;
		for (i = 0; i < GB.q.nneed; i++)
			memcpy(h.names[i], GB.q.need_name[i], GB_NAME);
	}
	if (!rc && gb_query_resolve(&GB.q, h.names, GB.q.ncols))
		rc = head_err("%s: %s", GB.q.errmsg);
	if (!rc) {
		infer(&h);
		if (gb_query_types(&GB.q))
			rc = head_err("%s: %s", GB.q.errmsg);
	}
	free(h.buf);
	free(h.scratch);
	free(h.names);
	return rc;
}

/* ---- memory plan ---- */

/*
 * Per VP, for R rows of its slice (every row its own group in the worst
 * case), with T bytes of table per group and W bytes per group on the
 * wire:
 *   scan + send: reader and scratch (4 PIECE), table R*T, send R*W
 *   owner: received 1.3 R*W, its table 1.3 R*T, its text 1.3 R*O
 * plus the per-VP tables of the splitters and reports, and VP 0's
 * gathered samples.
 */
/* Distinct keys D of the file, from d distinct in n sampled rows: n
 * uniform draws from D values show D (1 - e^(-n/D)) of them; solved for
 * D by bisection (infinite, UINT64_MAX, when every sampled key was new). */
static double key_domain(void)
{
	double n = (double)sample.rows, d = (double)sample.distinct, lo = d, hi = 1e18;
	int i;

	if (sample.distinct >= sample.rows)
		return 1e18;
	for (i = 0; i < 200 && hi - lo > 0.5; i++) {
		double mid = (lo + hi) / 2;

		if (mid * -expm1(-n / mid) < d)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* groups a VP's scan meets in @rows rows: D (1 - e^(-rows/D)) */
static uint64_t scan_groups(uint64_t rows)
{
	double dom, g;

	if (!sample.rows)
		return rows < 1024 ? rows : 1024;
	dom = key_domain();
	g = dom >= 1e18 ? (double)rows : dom * -expm1(-(double)rows / dom);
	g = g * 1.1 + 64;	/* margin: the sample's estimate is rough */
	return g < (double)rows ? (uint64_t)g : rows;
}

static uint64_t mu_for(uint64_t bytes, unsigned v)
{
	const struct gb_query *q = &GB.q;
	uint64_t rows = bytes / sample.rec_bytes / v + 1, groups = scan_groups(rows);
	uint64_t tab = 40 + q->state_size + sample.key_bytes + 24 * q->nlists;
	uint64_t wire = 8 + q->state_size + sample.key_bytes + 16 * q->nlists;
	uint64_t text = 2 * sample.key_bytes + 24 * q->nout + 8, scan, own;
	uint64_t item = 0, item_wire = 0;	/* per row: median, count(distinct) */
	unsigned i;

	for (i = 0; i < q->naggs; i++) {
		const struct gb_agg *a = &q->agg[i];
		bool str = a->list >= 0 && q->need_type[a->col] == GB_STR;

		if (a->list < 0)
			continue;
		if (a->fn == F_SMIN || a->fn == F_SMAX) {	/* one string per group */
			tab += sample.rec_bytes;
			wire += sample.rec_bytes;
			continue;
		}
		item += 2 * sizeof(struct gb_item) + (str ? sample.rec_bytes : 0);
		item_wire += 12 + (str ? sample.rec_bytes : 0);
	}
	/* the scan's table may double once past its estimate, its lists
	 * grow by doubling; the text buffer too */
	scan = 4 * (uint64_t)gb_piece(bytes / v) + groups * (3 * tab + wire) +
	       rows * (item + item_wire);
	own = groups * 13 / 10 * (wire + tab + 3 * text) + rows * 13 / 10 * (item + item_wire);
	return (scan > own ? scan : own) + (1u << 20) +
	       (uint64_t)v * (2 * (64 * GB_SPLIT + 8) + GB_SPLIT + sizeof(struct gb_vpinfo));
}

static int plan(struct pems_config *cfg)
{
	struct pems_plan_env env = pems_plan_here(false);
	uint64_t bytes = GB.size - GB.data;
	unsigned user_v = cfg->procs, k;
	int rc = pems_plan_for(cfg, bytes, "groupby", mu_for, &env);

	if (rc)
		return rc;
	k = cfg->threads;
	if (!user_v && bytes / sample.rec_bytes < cfg->procs)	/* tiny input: fewer VPs */
		cfg->procs = bytes / sample.rec_bytes > k ? (unsigned)(bytes / sample.rec_bytes) : k;
	/* newlines inside quotes: a slice may start inside a field, so one
	 * VP reads it all when that fits (a tenth of the budget) */
	if (!user_v && sample.quoted_nl && k * mu_for(bytes, 1) < cfg->mem / 10)
		cfg->procs = 1;
	if (!cfg->mu)
		cfg->mu = mu_for(bytes, cfg->procs);
	GB.piece = gb_piece(bytes / cfg->procs);
	GB.scan_groups = scan_groups(bytes / sample.rec_bytes / cfg->procs + 1);
	GB.scan_keys = GB.scan_groups * sample.key_bytes;
	cfg->mu = (cfg->mu + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
	return 0;
}

size_t gb_piece(uint64_t slice)
{
	uint64_t p = 64u << 10;

	while (p < slice && p < (4u << 20))
		p *= 2;
	return (size_t)p;
}

/* ---- run ---- */

/* pems_job_poll_fn: data bytes of the input */
static bool gb_poll(void *state, bool final, char *phase, size_t len, uint64_t *done,
		    uint64_t *total)
{
	(void)state;
	if (final)
		return false;
	snprintf(phase, len, "groupby");
	*done = atomic_load(&GB.done);
	*total = GB.size - GB.data;
	return true;
}

int pems_csv_groupby_check(struct pems_csv_groupby_job *job)
{
	struct gb_query *q = malloc(sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	job->errmsg[0] = '\0';
	rc = gb_query_parse(q, job->by, job->agg, job->as, job->schema);
	if (rc)
		snprintf(job->errmsg, sizeof(job->errmsg), "%s", q->errmsg);
	free(q);
	return rc;
}

static int setup(struct pems_csv_groupby_job *job)
{
	struct stat st;
	int rc;

	memset(&GB, 0, sizeof(GB));
	GB.job = job;
	GB.name = display_name ? display_name : job->in;
	job->errmsg[0] = job->skipmsg[0] = '\0';
	job->rows = job->groups = job->skipped = 0;
	GB.delim = job->delim ? job->delim : ',';
	GB.null_tok = job->null_token && *job->null_token ? job->null_token : NULL;
	GB.null_len = GB.null_tok ? strlen(GB.null_tok) : 0;
	if (gb_query_parse(&GB.q, job->by, job->agg, job->as, job->schema)) {
		snprintf(job->errmsg, sizeof(job->errmsg), "%s", GB.q.errmsg);
		return -EINVAL;
	}
	if (stat(job->in, &st))
		return -errno;
	GB.size = (uint64_t)st.st_size;
	rc = prepare();
	if (rc)
		return rc;
	GB.hdr = malloc((GB.q.nkeys + GB.q.nout) * (2 * GB_NAME + 3) + 2);
	if (!GB.hdr)
		return -ENOMEM;
	GB.hdr_len = gb_header_text(&GB.q, GB.hdr, GB.delim);
	return 0;
}

static int groupby_files(struct pems_csv_groupby_job *job);

/* "-" as IN or OUT: through files in the scratch directory */
int pems_csv_groupby(struct pems_csv_groupby_job *job)
{
	struct pems_csv_groupby_job j = *job;
	const struct pems_config *cfg = job->cfg ? job->cfg : pems_current_config();
	char in[4096], out[4096];
	bool sin = !strcmp(job->in, "-"), sout = !strcmp(job->out, "-") && pems_rank() == 0;
	int rc = 0;

	if (sin && pems_rank() == 0 && (rc = gb_spool_stdin(cfg, in, sizeof(in))))
		fprintf(stderr, "pems: error: groupby: copying standard input to %s: %s\n", in, strerror(-rc));
	if (!rc && sout && (rc = gb_spool_path(cfg, "out", out, sizeof(out))))
		fprintf(stderr, "pems: error: groupby: %s: %s\n", out, strerror(-rc));
	if (rc)
		return rc;
	if (sin)
		j.in = in;
	if (sout) {
		unlink(out);	/* the run creates it */
		j.out = out;
	}
	display_name = sin ? "standard input" : job->in;
	rc = groupby_files(&j);
	if (!rc && sout && (rc = gb_cat_stdout(out)))
		fprintf(stderr, "pems: error: groupby: writing standard output: %s\n", strerror(-rc));
	if (sout)
		unlink(out);
	if (sin)
		unlink(in);
	memcpy(job->errmsg, j.errmsg, sizeof(j.errmsg));
	memcpy(job->skipmsg, j.skipmsg, sizeof(j.skipmsg));
	job->rows = j.rows;
	job->groups = j.groups;
	job->skipped = j.skipped;
	return rc;
}

static int groupby_files(struct pems_csv_groupby_job *job)
{
	struct pems_job j;
	int rc;

	pems_job_init(&j, "groupby", job->cfg, job->progress, job->progress_arg, gb_poll, NULL);
	j.own_errors = true;	/* bad data: job->errmsg says why */
	rc = pems_job_lock(&j, job->out);	/* before any work */
	if (rc)
		return pems_job_end(&j, rc, false, 0);
	rc = setup(job);
	if (!rc)
		rc = plan(&j.cfg);
	if (rc) {
		if (rc != -EINVAL && rc != -PEMS_E_BUDGET && !job->errmsg[0])
			fprintf(stderr, "pems: error: groupby: %s: %s\n", job->in, pems_strerror(rc));
		free(GB.hdr);
		pems_job_end(&j, rc, false, 0);
		return rc == -PEMS_E_BUDGET ? rc : (job->errmsg[0] ? -EINVAL : rc);
	}
	GB.v = j.cfg.procs;
	rc = pems_job_input(&j, job->in);
	if (!rc)
		rc = pems_job_output(&j, job->out, false, 0);
	if (!rc) {
		GB.in = j.in;
		GB.out = j.out_handle;
		rc = pems_job_run(&j, gb_spmd, NULL);
		if (!rc && atomic_load(&GB.failed))
			rc = -EINVAL;
	}
	rc = pems_job_end(&j, rc, false, 0);
	free(GB.hdr);
	return rc;
}
