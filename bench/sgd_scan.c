/*
 * sgd_scan.c - the sequential-scan peer of `pems-run sgd`: one pass of
 * mini-batch SGD over a dense training file, in one plain C loop.
 *
 *   sgd_scan [--model linear|logistic] [--batch B] [--lr R] [--dim D] FILE
 *
 * A reader thread streams FILE with O_DIRECT in 8 MiB blocks into two
 * buffers (double buffering) while the main thread runs the same update
 * as pems' sgd on each batch of B rows in file order: w -= R * mean of the
 * gradient over the batch, bias included, loss measured on the batch
 * before its step.  This is the least a single-pass SGD epoch can cost on
 * this machine: one sequential read overlapped with one thread of
 * arithmetic, no runtime, no shards, no averaging.  Prints one line:
 *   algo=sgd-scan impl=scan-c bytes=… rows=… dim=… secs=… mbps=… loss=…
 * (mbps = 10^6 bytes of FILE per second; loss = mean train loss over the
 * pass: squared error for linear, log loss for logistic).  Exit 0, 1 on an
 * I/O or format error, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BLOCK (8u << 20)	/* bytes per read; a multiple of 4096 */

struct reader {			/* one buffer handed between the threads */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int fd;
	char *buf[2];
	ssize_t len[2];		/* bytes in buf[i]; -1: empty; -errno: error */
	int eof;
};

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	unsigned i;

	for (i = 0;; i ^= 1) {
		ssize_t n;

		pthread_mutex_lock(&r->lock);
		while (r->len[i] != -1)		/* wait until the consumer is done */
			pthread_cond_wait(&r->cond, &r->lock);
		pthread_mutex_unlock(&r->lock);
		n = read(r->fd, r->buf[i], BLOCK);
		if (n < 0)
			n = -errno;
		pthread_mutex_lock(&r->lock);
		r->len[i] = n;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
		if (n <= 0)
			return NULL;
	}
}

struct model {
	const char *kind;	/* "linear" or "logistic" */
	unsigned dim, batch;
	double lr, *w, *g, bias, gbias, loss;
	uint64_t rows, in_batch;
};

static void step(struct model *m)
{
	unsigned j;
	double s = m->lr / (double)m->in_batch;

	for (j = 0; j < m->dim; j++) {
		m->w[j] -= s * m->g[j];
		m->g[j] = 0;
	}
	m->bias -= s * m->gbias;
	m->gbias = 0;
	m->in_batch = 0;
}

static void row(struct model *m, const float *r)
{
	double z = m->bias, y = r[0], e;
	unsigned j;

	for (j = 0; j < m->dim; j++)
		z += m->w[j] * r[1 + j];
	if (m->kind[1] == 'i') {		/* linear: squared error */
		e = z - y;
		m->loss += e * e;
	} else {				/* logistic: labels > 0 positive */
		double p = 1 / (1 + exp(-z)), t = y > 0;

		e = p - t;
		m->loss -= t ? log(fmax(p, 1e-15)) : log(fmax(1 - p, 1e-15));
	}
	for (j = 0; j < m->dim; j++)
		m->g[j] += e * r[1 + j];
	m->gbias += e;
	m->rows++;
	if (++m->in_batch == m->batch)
		step(m);
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: sgd_scan [--model linear|logistic] [--batch B] [--lr R] [--dim D] FILE\n");
	return 2;
}

/* scan: consume the blocks in order; rows may straddle blocks (carry). */
static int scan(struct reader *r, struct model *m, uint64_t *bytes)
{
	size_t rs = (1 + (size_t)m->dim) * sizeof(float), have = 0, skip = *bytes;
	char *carry = malloc(rs);
	unsigned i;
	int err = 0;

	if (!carry)
		return -ENOMEM;
	*bytes = 0;
	for (i = 0;; i ^= 1) {
		ssize_t n;
		size_t off;

		pthread_mutex_lock(&r->lock);
		while (r->len[i] == -1)
			pthread_cond_wait(&r->cond, &r->lock);
		n = r->len[i];
		pthread_mutex_unlock(&r->lock);
		if (n <= 0) {
			err = (int)n;
			break;
		}
		*bytes += (uint64_t)n;
		off = skip < (size_t)n ? skip : (size_t)n;	/* the header */
		skip -= off;
		while (off < (size_t)n) {
			size_t take = rs - have < (size_t)n - off ? rs - have : (size_t)n - off;

			if (have == 0 && take == rs) {	/* whole row in place; */
				row(m, (const float *)(r->buf[i] + off));	/* offsets are x4 */
			} else {
				memcpy(carry + have, r->buf[i] + off, take);
				have += take;
				if (have == rs) {
					row(m, (const float *)carry);
					have = 0;
				}
			}
			off += take;
		}
		pthread_mutex_lock(&r->lock);
		r->len[i] = -1;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
	if (m->in_batch)
		step(m);
	if (!err && have)
		err = -EINVAL;		/* a partial row at the end */
	free(carry);
	return err;
}

int main(int argc, char **argv)
{
	struct model m = { .kind = "linear", .batch = 64, .lr = 0.05 };
	struct reader r = { .lock = PTHREAD_MUTEX_INITIALIZER,
			    .cond = PTHREAD_COND_INITIALIZER, .len = { -1, -1 } };
	const char *file = NULL;
	char head[16];
	uint64_t bytes;
	pthread_t th;
	double t0, secs;
	int i, err;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--model") && i + 1 < argc)
			m.kind = argv[++i];
		else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
			m.batch = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--lr") && i + 1 < argc)
			m.lr = strtod(argv[++i], NULL);
		else if (!strcmp(argv[i], "--dim") && i + 1 < argc)
			m.dim = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (argv[i][0] != '-' && !file)
			file = argv[i];
		else
			return usage();
	}
	if (!file || !m.batch || m.lr <= 0 ||
	    (strcmp(m.kind, "linear") && strcmp(m.kind, "logistic")))
		return usage();
	r.fd = open(file, O_RDONLY);
	if (r.fd < 0 || pread(r.fd, head, sizeof(head), 0) != (ssize_t)sizeof(head)) {
		fprintf(stderr, "sgd_scan: error: %s: %s\n", file, strerror(errno ? errno : EINVAL));
		return 1;
	}
	bytes = 0;				/* bytes of header to skip */
	if (!memcmp(head, "PEMSDENS", 8)) {
		memcpy(&m.dim, head + 8, 4);
		bytes = 16;
	}
	if (m.dim == 0 || m.dim > 4096) {
		fprintf(stderr, "sgd_scan: error: %s: no dense header; give --dim (1..4096)\n", file);
		return 1;
	}
	close(r.fd);
	r.fd = open(file, O_RDONLY | O_DIRECT);	/* like pems: no page cache */
	if (r.fd < 0)
		r.fd = open(file, O_RDONLY);
	m.w = calloc(m.dim, sizeof(double));
	m.g = calloc(m.dim, sizeof(double));
	if (r.fd < 0 || !m.w || !m.g || posix_memalign((void **)&r.buf[0], 4096, BLOCK) ||
	    posix_memalign((void **)&r.buf[1], 4096, BLOCK)) {
		fprintf(stderr, "sgd_scan: error: %s: cannot open or allocate\n", file);
		return 1;
	}
	t0 = now();
	if (pthread_create(&th, NULL, read_loop, &r)) {
		fprintf(stderr, "sgd_scan: error: cannot start the reader thread\n");
		return 1;
	}
	err = scan(&r, &m, &bytes);
	pthread_join(th, NULL);
	secs = now() - t0;
	close(r.fd);
	free(r.buf[0]);
	free(r.buf[1]);
	free(m.g);
	if (err) {
		free(m.w);
		fprintf(stderr, "sgd_scan: error: %s: %s\n", file,
			err == -EINVAL ? "partial row at the end (wrong --dim?)" : strerror(-err));
		return 1;
	}
	printf("algo=sgd-scan impl=scan-c bytes=%llu rows=%llu dim=%u secs=%.3f mbps=%.1f loss=%.6f\n",
	       (unsigned long long)bytes, (unsigned long long)m.rows, m.dim, secs,
	       secs > 0 ? bytes / secs / 1e6 : 0, m.rows ? m.loss / m.rows : 0);
	free(m.w);
	return 0;
}
