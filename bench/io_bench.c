/*
 * io_bench.c - sequential throughput of the pems I/O engine.
 *
 *   io_bench [options] FILE
 *     -e, --engine uring|aio|sync   backend (default uring)
 *     -q, --qd N                    requests in flight (default 16)
 *     -o, --op write|read|mixed     (default read)
 *     -s, --size BYTES              bytes of FILE to cover (default 4G)
 *     -b, --bs BYTES                request size (default 1M)
 *
 * write: FILE[0, size) sequentially, O_DIRECT (created if missing).
 * read:  the same range back; FILE must be at least size bytes.
 * mixed: reads FILE[0, size/2) while writing FILE[size/2, size), with
 *        half of the qd slots given to each stream (the pattern of a
 *        context swap: one VP read in while another is written back).
 * Sizes take K/M/G suffixes (binary).  Prints one line per run:
 *   bench=io engine=pems-uring qd=16 op=read bytes=… secs=… mbps=…
 * (mbps = 10^6 bytes per second; mixed adds read_mbps= and write_mbps=).
 * Exit 0 on success, 1 on an I/O failure, 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pems_io.h"

enum mode { MODE_READ, MODE_WRITE, MODE_MIXED };

struct stream {
	enum pems_io_op op;
	uint64_t next;		/* offset of the next request */
	uint64_t end;
	uint64_t bytes;		/* completed */
	unsigned inflight;
};

struct bench {
	enum pems_io_backend backend;
	unsigned qd;
	enum mode mode;
	uint64_t size;
	size_t bs;
	const char *path;
	int fd;
	struct pems_io *io;
	struct pems_io_req *reqs;
	char *bufs;
	struct stream st[2];
	unsigned nst;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: io_bench [-e uring|aio|sync] [-q QD] [-o write|read|mixed]\n"
		   "                [-s SIZE] [-b BS] FILE\n");
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	case 'T': case 't': v <<= 40; end++; break;
	}
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "engine", required_argument, NULL, 'e' },
		{ "qd", required_argument, NULL, 'q' },
		{ "op", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 's' },
		{ "bs", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "e:q:o:s:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			if (pems_io_backend_parse(optarg, &b->backend))
				goto bad;
			break;
		case 'q':
			if (parse_size(optarg, &v) || v < 1 || v > 4096)
				goto bad;
			b->qd = (unsigned)v;
			break;
		case 'o':
			if (!strcmp(optarg, "read"))
				b->mode = MODE_READ;
			else if (!strcmp(optarg, "write"))
				b->mode = MODE_WRITE;
			else if (!strcmp(optarg, "mixed"))
				b->mode = MODE_MIXED;
			else
				goto bad;
			break;
		case 's':
			if (parse_size(optarg, &b->size))
				goto bad;
			break;
		case 'b':
			if (parse_size(optarg, &v) || !v || v % PEMS_IO_ALIGN ||
			    v > (1u << 30))
				goto bad;
			b->bs = (size_t)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return -EINVAL;
	}
	b->path = argv[optind];
	return 0;
bad:
	fprintf(stderr, "io_bench: error: bad value '%s' for -%c\n", optarg, c);
	return -EINVAL;
}

/* Split [0, size) into the streams of the mode, in whole requests. */
static int plan(struct bench *b)
{
	uint64_t nreq = b->size / b->bs, half;

	if (nreq == 0 || (b->mode == MODE_MIXED && nreq < 2)) {
		fprintf(stderr, "io_bench: error: size must be at least %s bs\n",
			b->mode == MODE_MIXED ? "2 x" : "1 x");
		return -EINVAL;
	}
	if (b->mode == MODE_MIXED && b->qd < 2) {
		fprintf(stderr, "io_bench: error: mixed needs qd >= 2\n");
		return -EINVAL;
	}
	memset(b->st, 0, sizeof(b->st));
	if (b->mode != MODE_MIXED) {
		b->nst = 1;
		b->st[0].op = b->mode == MODE_READ ? PEMS_IO_READ : PEMS_IO_WRITE;
		b->st[0].end = nreq * b->bs;
		return 0;
	}
	half = nreq / 2 * b->bs;
	b->nst = 2;
	b->st[0] = (struct stream){ .op = PEMS_IO_READ, .next = 0, .end = half };
	b->st[1] = (struct stream){ .op = PEMS_IO_WRITE, .next = half,
				    .end = 2 * half };
	return 0;
}

static int open_file(struct bench *b)
{
	bool direct = false;
	struct stat st;
	int flags = b->mode == MODE_READ ? O_RDONLY : O_RDWR | O_CREAT;

	b->fd = pems_io_open(b->path, flags, 0644, &direct);
	if (b->fd < 0) {
		fprintf(stderr, "io_bench: error: open %s: %s\n", b->path,
			strerror(-b->fd));
		return b->fd;
	}
	if (b->mode != MODE_WRITE &&
	    (fstat(b->fd, &st) || (uint64_t)st.st_size < b->st[0].end)) {
		fprintf(stderr, "io_bench: error: %s is smaller than the %llu bytes to read; write it first\n",
			b->path, (unsigned long long)b->st[0].end);
		return -EINVAL;
	}
	return 0;
}

/* Next request for slot @i: from stream @s if it has work left, else
 * from any stream that has.  Returns 0, 1 if nothing is left, -errno. */
static int refill(struct bench *b, unsigned i, unsigned s)
{
	struct pems_io_req *req = &b->reqs[i];
	struct stream *st;
	unsigned k;
	int ret;

	for (k = 0; k < b->nst; k++) {
		st = &b->st[(s + k) % b->nst];
		if (st->next < st->end)
			break;
	}
	if (k == b->nst)
		return 1;
	*req = (struct pems_io_req){
		.fd = b->fd, .op = st->op, .buf = b->bufs + (size_t)i * b->bs,
		.len = b->bs, .off = st->next, .user = st,
	};
	ret = pems_io_submit(b->io, req);
	if (ret < 0)
		return ret;
	st->next += b->bs;
	st->inflight++;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int complete(struct bench *b, struct pems_io_req *req)
{
	struct stream *st = req->user;

	if (req->res != (ssize_t)req->len) {
		fprintf(stderr, "io_bench: error: %s at %llu of %s: %s\n",
			st->op == PEMS_IO_READ ? "read" : "write",
			(unsigned long long)req->off, b->path,
			req->res < 0 ? strerror((int)-req->res) : "short transfer");
		return -EIO;
	}
	st->inflight--;
	st->bytes += req->len;
	return refill(b, (unsigned)(req - b->reqs), (unsigned)(st - b->st));
}

static int run(struct bench *b, double *secs)
{
	struct pems_io_req **out = calloc(b->qd, sizeof(*out));
	double t0;
	unsigned i;
	int n, ret = 0;

	if (!out)
		return -ENOMEM;
	t0 = now();
	for (i = 0; i < b->qd; i++) {
		ret = refill(b, i, i % b->nst);	/* mixed: alternate streams */
		if (ret)
			break;
	}
	if (ret < 0)
		goto out;
	while (pems_io_inflight(b->io) > 0) {
		n = pems_io_reap(b->io, out, 1, b->qd);
		if (n < 0) {
			ret = n;
			goto out;
		}
		for (i = 0; i < (unsigned)n; i++) {
			ret = complete(b, out[i]);
			if (ret < 0)
				goto out;
		}
	}
	ret = 0;
	*secs = now() - t0;
out:
	free(out);
	return ret;
}

static void report(const struct bench *b, double secs)
{
	static const char *const ops[] = { "read", "write", "mixed" };
	uint64_t bytes = b->st[0].bytes + b->st[1].bytes;

	printf("bench=io engine=pems-%s qd=%u op=%s bytes=%llu secs=%.3f mbps=%.1f",
	       pems_io_backend_name(b->backend), b->qd, ops[b->mode],
	       (unsigned long long)bytes, secs, bytes / secs / 1e6);
	if (b->mode == MODE_MIXED)
		printf(" read_mbps=%.1f write_mbps=%.1f",
		       b->st[0].bytes / secs / 1e6, b->st[1].bytes / secs / 1e6);
	printf("\n");
}

static int setup(struct bench *b)
{
	int ret = pems_io_create(&b->io, b->backend, b->qd);

	if (ret < 0) {
		fprintf(stderr, "io_bench: error: %s engine: %s\n",
			pems_io_backend_name(b->backend), strerror(-ret));
		return ret;
	}
	b->reqs = calloc(b->qd, sizeof(*b->reqs));
	b->bufs = pems_io_alloc((size_t)b->qd * b->bs);
	if (!b->reqs || !b->bufs) {
		fprintf(stderr, "io_bench: error: out of memory for %u x %zu bytes\n",
			b->qd, b->bs);
		return -ENOMEM;
	}
	/* something other than zeros to write */
	memset(b->bufs, 0xa5, (size_t)b->qd * b->bs);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = {
		.backend = PEMS_IO_URING, .qd = 16, .mode = MODE_READ,
		.size = 4ull << 30, .bs = PEMS_IO_REQ_SIZE, .fd = -1,
	};
	double secs = 0;
	int ret;

	if (parse_args(&b, argc, argv) || plan(&b))
		return 2;
	ret = open_file(&b);
	if (!ret)
		ret = setup(&b);
	if (!ret) {
		ret = run(&b, &secs);
		if (ret < 0 && ret != -EIO)
			fprintf(stderr, "io_bench: error: %s: %s\n", b.path,
				strerror(-ret));
	}
	if (!ret)
		report(&b, secs);
	pems_io_destroy(b.io);
	free(b.reqs);
	pems_io_free(b.bufs, (size_t)b.qd * b.bs);
	if (b.fd >= 0)
		close(b.fd);
	return ret ? 1 : 0;
}
