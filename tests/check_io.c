/*
 * check_io.c - tests of the asynchronous block I/O engine (io/).
 *
 * Every behaviour is checked on every backend (loop tests over
 * enum pems_io_backend).  A backend this machine lacks is skipped with a
 * line "SKIP <backend>: <reason>" on stdout.  Scratch files go to a
 * fresh directory under $PEMS_TEST_TMP (default ./build/test-tmp); it
 * must be on a filesystem that takes O_DIRECT, and it is removed after
 * each test case, even a failing one (unchecked fixture).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "pems_io.h"

#define BLK PEMS_IO_ALIGN
#define REQ (64u * 1024)	/* request size in the pattern tests */
#define NREQ 128u

static char scratch[2048];	/* this run's directory */
static int nfile;

/* ---- scratch directory (unchecked fixture: runs in the parent) ---- */

static void mkdir_p(const char *path)
{
	char buf[4096], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

static void scratch_setup(void)
{
	const char *base = getenv("PEMS_TEST_TMP");

	if (!base || !*base)
		base = "build/test-tmp";
	mkdir_p(base);
	snprintf(scratch, sizeof(scratch), "%s/check_io.%d", base,
		 (int)getpid());
	if (mkdir(scratch, 0755) && errno != EEXIST) {
		fprintf(stderr, "check_io: cannot create %s: %s\n", scratch,
			strerror(errno));
		exit(1);
	}
}

static void scratch_teardown(void)
{
	char path[8192];
	struct dirent *de;
	DIR *d = opendir(scratch);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", scratch, de->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(scratch);
}

/* ---- helpers ---- */

static const char *bname(int b)
{
	return pems_io_backend_name((enum pems_io_backend)b);
}

/* Create an engine, or print why the backend is skipped and return NULL. */
static struct pems_io *engine(int b, unsigned qdepth)
{
	struct pems_io *io = NULL;
	int ret = pems_io_create(&io, (enum pems_io_backend)b, qdepth);

	if (ret == -ENOSYS || ret == -EPERM ||
	    (b == PEMS_IO_AIO && ret == -EAGAIN)) {
		printf("SKIP %s: backend unavailable on this machine: %s\n",
		       bname(b), strerror(-ret));
		fflush(stdout);
		return NULL;
	}
	ck_assert_msg(ret == 0, "pems_io_create(%s, %u): %s", bname(b),
		      qdepth, strerror(-ret));
	return io;
}

/* Open a new scratch file with O_DIRECT; it must really be direct. */
static int scratch_open(char *path, size_t size)
{
	bool direct = false;
	int fd;

	snprintf(path, size, "%s/f%d.%d", scratch, (int)getpid(), nfile++);
	fd = pems_io_open(path, O_RDWR | O_CREAT | O_TRUNC, 0644, &direct);
	ck_assert_msg(fd >= 0, "pems_io_open(%s): %s", path, strerror(-fd));
	ck_assert_msg(direct, "%s does not take O_DIRECT; set PEMS_TEST_TMP",
		      scratch);
	return fd;
}

static uint64_t word(uint64_t off, unsigned seed)
{
	return (off * 0x9e3779b97f4a7c15ull) ^ seed;
}

static void fill(void *buf, size_t len, uint64_t off, unsigned seed)
{
	uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		w[i] = word(off + i * 8, seed);
}

static bool matches(const void *buf, size_t len, uint64_t off, unsigned seed)
{
	const uint64_t *w = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (w[i] != word(off + i * 8, seed))
			return false;
	return true;
}

/* Reap until @n requests came back; each must have moved @len bytes. */
static void reap_all(struct pems_io *io, unsigned n, size_t len)
{
	struct pems_io_req *out[16];
	unsigned got = 0;
	int i, r;

	while (got < n) {
		r = pems_io_reap(io, out, 1, 16);
		ck_assert_msg(r > 0, "reap: %d", r);
		for (i = 0; i < r; i++)
			ck_assert_msg(out[i]->res == (ssize_t)len,
				      "req at %llu: res %zd",
				      (unsigned long long)out[i]->off,
				      out[i]->res);
		got += (unsigned)r;
	}
	ck_assert_uint_eq(pems_io_inflight(io), 0);
}

/* Submit NREQ requests of REQ bytes, letting submit throttle at qdepth;
 * checks that the engine keeps (not loses) what completes meanwhile. */
static void submit_all(struct pems_io *io, struct pems_io_req *reqs,
		       enum pems_io_op op, int fd, char *bufs)
{
	unsigned i;

	for (i = 0; i < NREQ; i++) {
		reqs[i] = (struct pems_io_req){
			.fd = fd, .op = op, .buf = bufs + (size_t)i * REQ,
			.len = REQ, .off = (uint64_t)i * REQ,
		};
		ck_assert_int_eq(pems_io_submit(io, &reqs[i]), 0);
		ck_assert_uint_eq(pems_io_inflight(io), i + 1);
	}
}

/* ---- roundtrip: write then read back at several queue depths ---- */

static void roundtrip(int b, unsigned qd)
{
	struct pems_io_req *reqs = calloc(NREQ, sizeof(*reqs));
	char *bufs = pems_io_alloc((size_t)NREQ * REQ);
	struct pems_io *io = engine(b, qd);
	char path[4096];
	unsigned i;
	int fd;

	ck_assert_ptr_nonnull(bufs);
	if (!io)
		goto out;
	fd = scratch_open(path, sizeof(path));
	for (i = 0; i < NREQ; i++)
		fill(bufs + (size_t)i * REQ, REQ, (uint64_t)i * REQ, qd);
	submit_all(io, reqs, PEMS_IO_WRITE, fd, bufs);
	reap_all(io, NREQ, REQ);

	memset(bufs, 0, (size_t)NREQ * REQ);
	submit_all(io, reqs, PEMS_IO_READ, fd, bufs);
	reap_all(io, NREQ, REQ);
	for (i = 0; i < NREQ; i++)
		ck_assert_msg(matches(bufs + (size_t)i * REQ, REQ,
				      (uint64_t)i * REQ, qd),
			      "%s qd %u: block %u differs", bname(b), qd, i);
	close(fd);
	unlink(path);
	pems_io_destroy(io);
out:
	pems_io_free(bufs, (size_t)NREQ * REQ);
	free(reqs);
}

START_TEST(test_roundtrip_qd1) { roundtrip(_i, 1); } END_TEST
START_TEST(test_roundtrip_qd4) { roundtrip(_i, 4); } END_TEST
START_TEST(test_roundtrip_qd16) { roundtrip(_i, 16); } END_TEST
START_TEST(test_roundtrip_qd64) { roundtrip(_i, 64); } END_TEST

/* 64 requests in flight at once: none completes before all are queued. */
START_TEST(test_inflight_kept)
{
	struct pems_io_req reqs[64], *out[64];
	struct pems_io *io = engine(_i, 64);
	char *buf = pems_io_alloc(64 * BLK), path[4096];
	int fd, n, i;

	if (!io)
		goto out;
	fd = scratch_open(path, sizeof(path));
	for (i = 0; i < 64; i++) {
		fill(buf + i * BLK, BLK, (uint64_t)i * BLK, 7);
		reqs[i] = (struct pems_io_req){
			.fd = fd, .op = PEMS_IO_WRITE, .buf = buf + i * BLK,
			.len = BLK, .off = (uint64_t)i * BLK, .user = &reqs[i],
		};
		ck_assert_int_eq(pems_io_submit(io, &reqs[i]), 0);
	}
	ck_assert_uint_eq(pems_io_inflight(io), 64);
	n = pems_io_reap(io, out, 64, 64);
	ck_assert_int_eq(n, 64);
	for (i = 0; i < n; i++) {
		ck_assert_ptr_eq(out[i]->user, out[i]);
		ck_assert_int_eq(out[i]->res, BLK);
	}
	close(fd);
	unlink(path);
	pems_io_destroy(io);
out:
	pems_io_free(buf, 64 * BLK);
}
END_TEST

/* ---- end of file ---- */

static ssize_t read_at(struct pems_io *io, int fd, void *buf, size_t len,
		       uint64_t off)
{
	struct pems_io_req req = {
		.fd = fd, .op = PEMS_IO_READ, .buf = buf, .len = len,
		.off = off,
	}, *out;

	ck_assert_int_eq(pems_io_submit(io, &req), 0);
	ck_assert_int_eq(pems_io_reap(io, &out, 1, 1), 1);
	ck_assert_ptr_eq(out, &req);
	return req.res;
}

START_TEST(test_eof_short_read)
{
	const size_t size = 3 * BLK + 100;	/* not a multiple of BLK */
	struct pems_io *io = engine(_i, 4);
	char *buf = pems_io_alloc(8 * BLK), path[4096];
	int fd;

	if (!io)
		goto out;
	fd = scratch_open(path, sizeof(path));
	fill(buf, 4 * BLK, 0, 3);
	ck_assert_int_eq(pems_io_rw(io, PEMS_IO_WRITE, fd, buf, 4 * BLK, 0),
			 4 * BLK);
	ck_assert_int_eq(ftruncate(fd, (off_t)size), 0);

	memset(buf, 0, 8 * BLK);
	ck_assert_int_eq(read_at(io, fd, buf, 8 * BLK, 0), size);
	ck_assert(matches(buf, size & ~7ul, 0, 3));
	ck_assert_int_eq(read_at(io, fd, buf, 2 * BLK, 2 * BLK),
			 size - 2 * BLK);
	ck_assert(matches(buf, BLK, 2 * BLK, 3));
	ck_assert_int_eq(read_at(io, fd, buf, BLK, 4 * BLK), 0);
	ck_assert_int_eq(read_at(io, fd, buf, BLK, 1000 * BLK), 0);
	ck_assert_int_eq(pems_io_rw(io, PEMS_IO_READ, fd, buf, 8 * BLK, 0),
			 size);
	close(fd);

	/* the same through a buffered descriptor */
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read_at(io, fd, buf, 8 * BLK, 10), size - 10);
	close(fd);
	unlink(path);
	pems_io_destroy(io);
out:
	pems_io_free(buf, 8 * BLK);
}
END_TEST

/* ---- errors pass through in req->res ---- */

START_TEST(test_errors_pass_through)
{
	struct pems_io *io = engine(_i, 4);
	char *buf = pems_io_alloc(2 * BLK), path[4096];
	int fd, closed;

	if (!io)
		goto out;
	fd = scratch_open(path, sizeof(path));
	ck_assert_int_eq(pems_io_rw(io, PEMS_IO_WRITE, fd, buf, 2 * BLK, 0),
			 2 * BLK);
	closed = dup(fd);
	close(closed);

	ck_assert_int_eq(read_at(io, -1, buf, BLK, 0), -EBADF);
	ck_assert_int_eq(read_at(io, closed, buf, BLK, 0), -EBADF);
	ck_assert_int_eq(pems_io_rw(io, PEMS_IO_WRITE, closed, buf, BLK, 0),
			 -EBADF);
	/* O_DIRECT refuses a misaligned buffer, offset or length */
	ck_assert_int_eq(read_at(io, fd, buf + 1, BLK, 0), -EINVAL);
	ck_assert_int_eq(read_at(io, fd, buf, BLK, 1), -EINVAL);
	ck_assert_int_eq(pems_io_rw(io, PEMS_IO_WRITE, fd, buf + 1, BLK, 0),
			 -EINVAL);
	ck_assert_int_eq(pems_io_rw(io, PEMS_IO_WRITE, fd, buf, 1, 0),
			 -EINVAL);
	ck_assert_uint_eq(pems_io_inflight(io), 0);
	/* and the engine still works afterwards */
	ck_assert_int_eq(pems_io_rw(io, PEMS_IO_READ, fd, buf, BLK, BLK), BLK);
	close(fd);
	unlink(path);
	pems_io_destroy(io);
out:
	pems_io_free(buf, 2 * BLK);
}
END_TEST

START_TEST(test_bad_arguments)
{
	struct pems_io *io = NULL;
	struct pems_io_req req = { .fd = 0, .op = (enum pems_io_op)7 };
	struct pems_io_req *out;
	enum pems_io_backend be;

	ck_assert_int_eq(pems_io_create(&io, (enum pems_io_backend)_i, 0),
			 -EINVAL);
	ck_assert_int_eq(pems_io_create(&io, (enum pems_io_backend)_i, 4097),
			 -EINVAL);
	ck_assert_int_eq(pems_io_create(&io, (enum pems_io_backend)9, 4),
			 -EINVAL);
	io = engine(_i, 1);
	if (!io)
		return;
	ck_assert_int_eq(pems_io_submit(io, &req), -EINVAL);
	ck_assert_int_eq(pems_io_submit(io, NULL), -EINVAL);
	ck_assert_int_eq(pems_io_reap(io, &out, 2, 1), -EINVAL);
	ck_assert_int_eq(pems_io_reap(io, NULL, 0, 0), 0);
	ck_assert_uint_eq(pems_io_inflight(io), 0);
	pems_io_destroy(io);
	pems_io_destroy(NULL);

	ck_assert_int_eq(pems_io_backend_parse(bname(_i), &be), 0);
	ck_assert_int_eq(be, _i);
	ck_assert_int_eq(pems_io_backend_parse("io_uring", &be), -EINVAL);
	ck_assert_str_eq(pems_io_backend_name((enum pems_io_backend)9),
			 "unknown");
}
END_TEST

/* ---- reap ---- */

START_TEST(test_reap_nonblocking)
{
	struct pems_io_req reqs[16], *out[16];
	struct pems_io *io = engine(_i, 16);
	char *buf = pems_io_alloc(16 * REQ), path[4096];
	unsigned got = 0, polls = 0, i;
	int fd, n;

	if (!io)
		goto out;
	ck_assert_int_eq(pems_io_reap(io, out, 0, 16), 0);	/* empty */
	fd = scratch_open(path, sizeof(path));
	ck_assert_int_eq(pems_io_rw(io, PEMS_IO_WRITE, fd, buf, 16 * REQ, 0),
			 16 * REQ);
	for (i = 0; i < 16; i++) {
		reqs[i] = (struct pems_io_req){
			.fd = fd, .op = PEMS_IO_READ, .buf = buf + i * REQ,
			.len = REQ, .off = (uint64_t)i * REQ,
		};
		ck_assert_int_eq(pems_io_submit(io, &reqs[i]), 0);
	}
	/* only min = 0: must never block, must eventually see them all */
	while (got < 16) {
		n = pems_io_reap(io, out, 0, 16);
		ck_assert_int_ge(n, 0);
		got += (unsigned)n;
		ck_assert_uint_lt(++polls, 10u * 1000 * 1000);
		if (!n)
			usleep(10);
	}
	ck_assert_int_eq(pems_io_reap(io, out, 0, 16), 0);
	/* asking for more than was submitted returns what there is */
	ck_assert_int_eq(pems_io_submit(io, &reqs[0]), 0);
	ck_assert_int_eq(pems_io_reap(io, out, 4, 16), 1);
	ck_assert_int_eq(out[0]->res, REQ);
	close(fd);
	unlink(path);
	pems_io_destroy(io);
out:
	pems_io_free(buf, 16 * REQ);
}
END_TEST

/* ---- pems_io_rw between async requests ---- */

START_TEST(test_rw_keeps_completions)
{
	enum { QD = 8, NASYNC = 24 };
	struct pems_io_req reqs[NASYNC], *out[NASYNC];
	struct pems_io *io = engine(_i, QD);
	char *buf = pems_io_alloc((NASYNC + 1) * REQ), path[4096];
	char *mine = buf + NASYNC * REQ;
	bool seen[NASYNC] = { false };
	unsigned got = 0;
	int fd, n, i;

	if (!io)
		goto out;
	fd = scratch_open(path, sizeof(path));
	for (i = 0; i < NASYNC + 4; i++) {
		fill(mine, REQ, (uint64_t)i * REQ, 11);
		ck_assert_int_eq(pems_io_rw(io, PEMS_IO_WRITE, fd, mine, REQ,
					    (uint64_t)i * REQ), REQ);
	}
	for (i = 0; i < NASYNC; i++) {
		reqs[i] = (struct pems_io_req){
			.fd = fd, .op = PEMS_IO_READ, .buf = buf + i * REQ,
			.len = REQ, .off = (uint64_t)i * REQ, .user = &seen[i],
		};
		ck_assert_int_eq(pems_io_submit(io, &reqs[i]), 0);
		/* a synchronous read between every async one, also when the
		 * engine is full (i >= QD) */
		ck_assert_int_eq(pems_io_rw(io, PEMS_IO_READ, fd, mine, REQ,
					    (uint64_t)(NASYNC + i % 4) * REQ),
				 REQ);
		ck_assert(matches(mine, REQ, (uint64_t)(NASYNC + i % 4) * REQ,
				  11));
		ck_assert_uint_eq(pems_io_inflight(io), (unsigned)i + 1);
	}
	while (got < NASYNC) {
		n = pems_io_reap(io, out, 1, NASYNC);
		ck_assert_int_gt(n, 0);
		for (i = 0; i < n; i++) {
			bool *s = out[i]->user;

			ck_assert(!*s);
			*s = true;
			ck_assert_int_eq(out[i]->res, REQ);
			ck_assert(matches(out[i]->buf, REQ, out[i]->off, 11));
		}
		got += (unsigned)n;
	}
	for (i = 0; i < NASYNC; i++)
		ck_assert(seen[i]);
	ck_assert_uint_eq(pems_io_inflight(io), 0);
	close(fd);
	unlink(path);
	pems_io_destroy(io);
out:
	pems_io_free(buf, (NASYNC + 1) * REQ);
}
END_TEST

/* ---- destroy with requests in flight, and EINTR ---- */

START_TEST(test_destroy_waits)
{
	struct pems_io_req reqs[32];
	struct pems_io *io = engine(_i, 32);
	char *buf = pems_io_alloc(32 * REQ), path[4096];
	int fd, i;

	if (!io)
		goto out;
	fd = scratch_open(path, sizeof(path));
	for (i = 0; i < 32; i++) {
		reqs[i] = (struct pems_io_req){
			.fd = fd, .op = PEMS_IO_WRITE, .buf = buf + i * REQ,
			.len = REQ, .off = (uint64_t)i * REQ,
		};
		ck_assert_int_eq(pems_io_submit(io, &reqs[i]), 0);
	}
	pems_io_destroy(io);	/* must wait: buf is freed right after */
	close(fd);
	unlink(path);
out:
	pems_io_free(buf, 32 * REQ);
}
END_TEST

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal every 200 us, handler without SA_RESTART: waits and syscalls
 * see EINTR, and nothing may be lost or fail because of it. */
START_TEST(test_signals_eintr)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = {
		.it_interval = { 0, 200 }, .it_value = { 0, 200 },
	};
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGALRM, &sa, NULL), 0);
	ck_assert_int_eq(setitimer(ITIMER_REAL, &it, NULL), 0);
	roundtrip(_i, 16);
	roundtrip(_i, 1);
	setitimer(ITIMER_REAL, &off, NULL);
}
END_TEST

/* ---- fallback to buffered I/O where O_DIRECT is refused ----
 * The warning is once per process, so this test runs once (not per
 * backend) and then drives every backend over the fall-back fd. */

/* Run @fn with stderr captured; returns what it printed (malloc'd). */
static char *capture_stderr(void (*fn)(void *), void *arg)
{
	char path[4096], *text;
	int saved, tmp;
	long len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stderr.%d", scratch, (int)getpid());
	tmp = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(tmp, 0);
	fflush(stderr);
	saved = dup(2);
	dup2(tmp, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(tmp);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + 1);
	ck_assert_uint_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	unlink(path);
	return text;
}

struct fallback {
	const char *path;
	int flags;		/* of the first open; the second drops O_EXCL */
	bool direct[2];
	int fd[2];
};

static void open_twice(void *arg)
{
	struct fallback *fb = arg;

	fb->fd[0] = pems_io_open(fb->path, fb->flags, 0644, &fb->direct[0]);
	fb->fd[1] = pems_io_open(fb->path, fb->flags & ~O_EXCL, 0644,
				 &fb->direct[1]);
}

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	while ((hay = strstr(hay, needle))) {
		n++;
		hay += strlen(needle);
	}
	return n;
}

/* Every backend must work on a buffered fd from the fall-back too. */
static void use_fallback_fd(int fd, bool is_null)
{
	char *buf = pems_io_alloc(BLK);
	struct pems_io *io;
	int b;

	for (b = PEMS_IO_URING; b <= PEMS_IO_SYNC; b++) {
		io = engine(b, 4);
		if (!io)
			continue;
		fill(buf, BLK, 0, 5);
		ck_assert_int_eq(pems_io_rw(io, PEMS_IO_WRITE, fd, buf, BLK, 0),
				 BLK);
		memset(buf, 0, BLK);
		ck_assert_int_eq(pems_io_rw(io, PEMS_IO_READ, fd, buf, BLK, 0),
				 is_null ? 0 : BLK);
		ck_assert(is_null || matches(buf, BLK, 0, 5));
		pems_io_destroy(io);
	}
	pems_io_free(buf, BLK);
}

/* Open @fb->path twice with stderr captured; returns how many warnings
 * were printed and copies stderr to @got. */
static unsigned open_captured(struct fallback *fb, char *got, size_t size)
{
	char *err = capture_stderr(open_twice, fb);
	unsigned n = count(err, "pems: warning:");
	int i;

	snprintf(got, size, "%s", err);
	free(err);
	for (i = 0; i < 2; i++)
		ck_assert_msg(fb->fd[i] >= 0, "open %s: %s", fb->path,
			      strerror(-fb->fd[i]));
	return n;
}

static void expect_fallback(struct fallback *fb, const char *got,
			    unsigned nwarn, bool is_null)
{
	char want[4200];

	snprintf(want, sizeof(want),
		 "pems: warning: O_DIRECT refused on %s; using buffered I/O (slower)\n",
		 fb->path);
	ck_assert(!fb->direct[0] && !fb->direct[1]);
	ck_assert_msg(nwarn == 1, "want one warning, stderr was: '%s'", got);
	ck_assert_str_eq(got, want);
	use_fallback_fd(fb->fd[0], is_null);
	close(fb->fd[0]);
	close(fb->fd[1]);
}

/*
 * tmpfs (or $PEMS_TEST_NODIRECT_DIR, any directory whose filesystem
 * refuses O_DIRECT) with O_CREAT | O_EXCL: the refused first open has
 * already created the file, and the retry must still succeed.  Linux
 * >= 6.6 gives tmpfs O_DIRECT; then /dev/null, which still refuses it,
 * exercises the fall-back instead.
 */
START_TEST(test_tmpfs_fallback)
{
	const char *dir = getenv("PEMS_TEST_NODIRECT_DIR");
	char path[2048], got[4200];
	struct fallback fb = { .path = path,
			       .flags = O_RDWR | O_CREAT | O_EXCL };
	struct fallback null = { .path = "/dev/null", .flags = O_RDWR };
	unsigned nwarn;

	if (!dir || !*dir)
		dir = "/dev/shm";
	snprintf(path, sizeof(path), "%s/check_io.%d", dir, (int)getpid());
	nwarn = open_captured(&fb, got, sizeof(got));
	if (!fb.direct[0]) {
		expect_fallback(&fb, got, nwarn, false);
		unlink(path);
		return;
	}
	ck_assert_msg(nwarn == 0, "warned although O_DIRECT worked: '%s'", got);
	close(fb.fd[0]);
	close(fb.fd[1]);
	unlink(path);
	printf("NOTE %s takes O_DIRECT on this kernel; fall-back tested on /dev/null\n",
	       dir);
	fflush(stdout);
	nwarn = open_captured(&null, got, sizeof(got));
	expect_fallback(&null, got, nwarn, true);
}
END_TEST

/* ---- buffers ---- */

/* Does the mapping holding @p carry the huge-page hint?  (VmFlags "hg"
 * in /proc/self/smaps: set by MADV_HUGEPAGE whatever memory is free, so
 * the check does not depend on huge pages being available.) */
static bool hinted_huge(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long lo, hi;
	bool in = false, hg = false;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (unsigned long)p >= lo && (unsigned long)p < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			hg = strstr(line, " hg") != NULL;
	}
	fclose(f);
	return hg;
}

START_TEST(test_alloc_sizes)
{
	const size_t mib = 1u << 20;

	ck_assert_uint_eq(pems_io_alloc_size(0), BLK);
	ck_assert_uint_eq(pems_io_alloc_size(1), BLK);
	ck_assert_uint_eq(pems_io_alloc_size(BLK + 1), 2 * BLK);
	ck_assert_uint_eq(pems_io_alloc_size(mib - BLK), mib - BLK);
	/* from a request's size up: whole 2 MiB huge pages */
	ck_assert_uint_eq(pems_io_alloc_size(mib), 2 * mib);
	ck_assert_uint_eq(pems_io_alloc_size(2 * mib), 2 * mib);
	ck_assert_uint_eq(pems_io_alloc_size(3 * mib + 1), 4 * mib);
	ck_assert_uint_eq(pems_io_alloc_size(SIZE_MAX), 0);
	ck_assert_ptr_null(pems_io_alloc(SIZE_MAX));
	pems_io_free(NULL, mib);
}
END_TEST

/* Request-sized buffers start on a huge page and carry the hint (a
 * 1 MiB request is then one DMA segment); small ones are plain aligned
 * heap memory; PEMS_NO_THP drops the hint. */
START_TEST(test_alloc_huge)
{
	const size_t mib = 1u << 20;
	bool thp = access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
	char *small = pems_io_alloc(BLK), *big = pems_io_alloc(mib);
	char *odd = pems_io_alloc(3 * mib);

	ck_assert_ptr_nonnull(small);
	ck_assert_ptr_nonnull(big);
	ck_assert_ptr_nonnull(odd);
	ck_assert_uint_eq((uintptr_t)small % BLK, 0);
	ck_assert_uint_eq((uintptr_t)big % (2 * mib), 0);
	ck_assert_uint_eq((uintptr_t)odd % (2 * mib), 0);
	memset(big, 1, 2 * mib);	/* all of pems_io_alloc_size() is usable */
	memset(odd, 2, 4 * mib);
	if (thp) {
		ck_assert(hinted_huge(big));
		ck_assert(hinted_huge(odd + 4 * mib - 1));
		ck_assert(!hinted_huge(small));
	} else {
		printf("NOTE no transparent huge pages on this kernel; hint not checked\n");
		fflush(stdout);
	}
	pems_io_free(small, BLK);
	pems_io_free(big, mib);
	pems_io_free(odd, 3 * mib);

	setenv("PEMS_NO_THP", "1", 1);
	big = pems_io_alloc(mib);
	unsetenv("PEMS_NO_THP");
	ck_assert_ptr_nonnull(big);
	ck_assert_uint_eq((uintptr_t)big % (2 * mib), 0);
	ck_assert(!hinted_huge(big));
	pems_io_free(big, mib);
}
END_TEST

/* ---- suite ---- */

static TCase *tcase(const char *name, const TTest *t, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_add_loop_test(tc, t, PEMS_IO_URING, PEMS_IO_SYNC + 1);
	tcase_set_timeout(tc, timeout);
	return tc;
}

static Suite *io_suite(void)
{
	Suite *s = suite_create("io");
	TCase *tc = tcase("write_then_read_back", test_roundtrip_qd1, 60);

	tcase_add_loop_test(tc, test_roundtrip_qd4, 0, 3);
	tcase_add_loop_test(tc, test_roundtrip_qd16, 0, 3);
	tcase_add_loop_test(tc, test_roundtrip_qd64, 0, 3);
	tcase_add_loop_test(tc, test_inflight_kept, 0, 3);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tcase("read_at_eof_is_short",
				 test_eof_short_read, 60));
	tc = tcase("errors_pass_through", test_errors_pass_through, 60);
	tcase_add_loop_test(tc, test_bad_arguments, 0, 3);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tcase("reap_min0_does_not_block",
				 test_reap_nonblocking, 60));
	suite_add_tcase(s, tcase("rw_keeps_other_completions",
				 test_rw_keeps_completions, 60));
	tc = tcase("destroy_and_signals", test_destroy_waits, 60);
	tcase_add_loop_test(tc, test_signals_eintr, 0, 3);
	suite_add_tcase(s, tc);
	tc = tcase_create("buffers_on_huge_pages");
	tcase_add_test(tc, test_alloc_sizes);
	tcase_add_test(tc, test_alloc_huge);
	suite_add_tcase(s, tc);
	tc = tcase_create("fallback_to_buffered_once");
	tcase_add_unchecked_fixture(tc, scratch_setup, scratch_teardown);
	tcase_add_test(tc, test_tmpfs_fallback);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(io_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
