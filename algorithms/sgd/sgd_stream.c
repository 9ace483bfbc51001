/*
 * sgd_stream.c - the rows of one shard of the training or test data, as
 * a VP reads them (sgd.c design (5)): blocks of up to 4 MiB into a
 * buffer at the top of the VP's heap; dense rows of 1 + d float32,
 * LIBSVM lines parsed by the formats module; data errors recorded, the
 * first by (file, offset) reported.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sgd/sgd_internal.h"
#include "formats/pems_formats.h"

/* ---- errors found by one VP: the first by (file, offset) wins ---- */

void sgd_data_error(bool test, uint64_t off, uint64_t row, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&sgd_g.err_mu);
	if (!sgd_g.err_set || (test < sgd_g.err_test) ||
	    (test == sgd_g.err_test && off < sgd_g.err_off)) {
		sgd_g.err_set = true;
		sgd_g.err_test = test;
		sgd_g.err_off = off;
		sgd_g.err_row = row;
		va_start(ap, fmt);
		vsnprintf(sgd_g.err_msg, sizeof(sgd_g.err_msg), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&sgd_g.err_mu);
}

/* ---- row streams over one shard ---- */


void sgd_stream_open(struct stream *s, const struct dfile *f, bool test,
		     uint64_t pos, uint64_t end, uint8_t *raw, size_t cap,
		     uint32_t *idx, double *val, double *avg_line, uint64_t budget)
{
	memset(s, 0, sizeof(*s));
	s->budget = budget;
	s->f = f;
	s->test = test;
	s->pos = pos;
	s->end = end;
	s->raw = raw;
	s->buf = (uint8_t *)(((uintptr_t)raw + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	s->cap = cap;
	s->idx = idx;
	s->val = val;
	s->avg_line = avg_line;
}

/* read file bytes [off, off+len) so that buf+head holds them; the read
 * starts at the page below off so that its interior goes O_DIRECT */
static int fill(struct stream *s, uint64_t off, size_t len)
{
	uint64_t a0 = off & ~(uint64_t)(PAGE - 1);
	size_t head = (size_t)(off - a0);
	long long rc;

	rc = pems_file_read(s->f->fd, s->buf, head + len, a0);
	if (rc != (long long)(head + len)) {
		sgd_data_error(s->test, off, UINT64_MAX, "cannot read %s at byte %llu: %s",
			   s->f->path, (unsigned long long)off,
			   rc < 0 ? strerror((int)-rc) : "short read (file changed?)");
		return -1;
	}
	s->boff = a0;
	s->have = head + len;
	s->cur = head;
	return 0;
}

/* dense: the next row, reading at most @rows_left rows ahead */
static int next_dense(struct stream *s, struct row *r, uint64_t rows_left)
{
	uint32_t d = sgd_g.d, j;
	const float *p;
	uint64_t row;

	if (s->pos >= s->end || !rows_left)
		return 0;
	if (s->cur + sgd_g.rowb > s->have) {
		uint64_t n = (s->cap - PAGE) / sgd_g.rowb;

		if (n > rows_left)
			n = rows_left;
		if (n > s->end - s->pos)
			n = s->end - s->pos;
		if (fill(s, s->f->off0 + s->pos * sgd_g.rowb, n * sgd_g.rowb))
			return -1;
	}
	row = s->pos;
	p = (const float *)(const void *)(s->buf + s->cur);
	s->cur += sgd_g.rowb;
	s->pos++;
	r->y = p[0];
	r->x = p + 1;
	if (!isfinite(p[0])) {
		sgd_data_error(s->test, s->f->off0 + row * sgd_g.rowb, row,
			   "%s: row %llu: the label is %s", s->f->path,
			   (unsigned long long)row, isnan(p[0]) ? "NaN" : "infinite");
		return -1;
	}
	for (j = 0; j < d; j++)
		if (!isfinite(p[1 + j])) {
			sgd_data_error(s->test, s->f->off0 + row * sgd_g.rowb, row,
				   "%s: row %llu: feature %u is %s", s->f->path,
				   (unsigned long long)row, j + 1,
				   isnan(p[1 + j]) ? "NaN" : "infinite");
			return -1;
		}
	return 1;
}

/* parse one LIBSVM line [p, e) starting at file byte @off */
static int parse_line(struct stream *s, const char *p, const char *e,
		      uint64_t off, struct row *r)
{
	struct pems_libsvm_row lr = { .idx = s->idx, .val = s->val };
	char err[sizeof(sgd_g.err_msg)];
	int rc = pems_libsvm_parse(p, e, sgd_g.d, &lr, err, sizeof(err));

	r->x = NULL;
	r->idx = s->idx;
	r->val = s->val;
	r->nnz = rc > 0 ? lr.nnz : 0;
	r->y = lr.y;
	if (rc < 0)
		sgd_data_error(s->test, off, UINT64_MAX, "%s", err);
	return rc;
}

/* libsvm: the next non-blank line */
static int next_libsvm(struct stream *s, struct row *r)
{
	for (;;) {
		const char *p, *nl;
		uint64_t off;
		size_t avail;
		int rc;

		if (s->pos >= s->end)
			return 0;
		avail = s->have - s->cur;
		p = (const char *)s->buf + s->cur;
		nl = s->have > s->cur ? memchr(p, '\n', avail) : NULL;
		if (!nl && !(s->have > s->cur && s->boff + s->have == s->end)) {
			/* refill from this line's start */
			uint64_t want = s->want ? s->want : 1;
			double est = *s->avg_line > 0 ? *s->avg_line : 256;
			size_t len = (size_t)fmin((double)(s->cap - PAGE),
						  want * est * 1.05 + 4096);

			if (s->have > s->cur && avail >= len) {
				len = avail * 2;	/* a line longer than the guess */
				if (len > s->cap - PAGE) {
					sgd_data_error(s->test, s->pos, UINT64_MAX,
						   "line longer than %zu MiB", MAX_LINE >> 20);
					return -1;
				}
			}
			if (len > s->end - s->pos)
				len = (size_t)(s->end - s->pos);
			if (fill(s, s->pos, len))
				return -1;
			continue;
		}
		off = s->pos;
		if (!nl)
			nl = (const char *)s->buf + s->have;	/* last line of the file */
		rc = parse_line(s, p, nl, off, r);
		s->cur = (size_t)((const uint8_t *)nl - s->buf) + 1;
		if (s->cur > s->have)
			s->cur = s->have;
		s->pos = s->boff + s->cur;
		atomic_fetch_add(&sgd_g.done, s->test ? 0 : s->pos - off);
		s->lines++;
		s->lbytes += s->pos - off;
		if (rc)
			return rc;
	}
}

/* the next row of the stream; reads ahead at most s->budget rows */
int sgd_next_row(struct stream *s, struct row *r)
{
	int rc;

	if (!s->budget)
		return 0;
	if (sgd_g.job->format == PEMS_SGD_DENSE) {
		rc = next_dense(s, r, s->budget);
		if (rc > 0 && !s->test)
			atomic_fetch_add(&sgd_g.done, sgd_g.rowb);
	} else {
		s->want = s->budget;
		rc = next_libsvm(s, r);
	}
	if (rc > 0)
		s->budget--;
	return rc;
}

void sgd_stream_close(struct stream *s)
{
	if (s->lines && s->avg_line) {
		double a = (double)s->lbytes / s->lines;

		*s->avg_line = *s->avg_line > 0 ? 0.5 * (*s->avg_line + a) : a;
	}
}

/* ---- setup: LIBSVM line starts ---- */

/* first line start >= off (offset 0, or just after a '\n') */
static uint64_t line_start(const struct dfile *f, uint64_t off, uint8_t *raw,
			   int64_t *errs)
{
	uint8_t *buf = (uint8_t *)(((uintptr_t)raw + PAGE - 1) & ~(uintptr_t)(PAGE - 1));
	uint64_t at = off - 1;

	if (off == 0 || off >= f->size)
		return off >= f->size ? f->size : 0;
	while (at < f->size) {
		size_t len = 65536;
		long long rc;
		uint8_t *nl;

		if (len > f->size - at)
			len = (size_t)(f->size - at);
		rc = pems_file_read(f->fd, buf, len, at);
		if (rc != (long long)len) {
			sgd_data_error(false, at, UINT64_MAX, "cannot read %s: %s", f->path,
				   rc < 0 ? strerror((int)-rc) : "short read");
			(*errs)++;
			return f->size;
		}
		nl = memchr(buf, '\n', len);
		if (nl)
			return at + (uint64_t)(nl - buf) + 1;
		at += len;
	}
	return f->size;
}

void sgd_shard_ranges(const struct dfile *f, unsigned j, uint64_t *lo,
		      uint64_t *hi, uint8_t *raw, int64_t *errs)
{
	uint64_t n = sgd_g.job->format == PEMS_SGD_DENSE ? f->rows : f->size;
	uint64_t a = n * j / sgd_g.S, b = n * (j + 1) / sgd_g.S;

	if (sgd_g.job->format == PEMS_SGD_DENSE) {
		*lo = a;
		*hi = b;
		return;
	}
	*lo = line_start(f, a, raw, errs);
	*hi = line_start(f, b, raw, errs);
}
