/*
 * io_fault.c - fault injection for tests: fail the n-th I/O request.
 *
 *   PEMS_IO_FAULT=OP:KIND:N[+][:PATH]
 *
 *   OP    read | write | any       which requests are counted
 *   KIND  eio                      the request fails with EIO
 *         enospc                   the request fails with ENOSPC
 *         short                    the request transfers only part of its
 *                                  bytes (half, rounded down to 4 KiB),
 *                                  then makes no more progress: the rest
 *                                  of it transfers 0 bytes (a write that
 *                                  stalls, a read that ends early)
 *   N     1-based: the N-th counted request is hit; with '+' every
 *         counted request from the N-th on is
 *   PATH  count only requests on files whose path contains PATH
 *         (scratch files are unlinked at once: their path reads
 *         ".../pems-PID-ctx (deleted)", ".../pems-PID-msg0 ...")
 *
 * e.g. PEMS_IO_FAULT=write:enospc:17, PEMS_IO_FAULT=read:eio:1+:ctx.
 * A process that exits normally prints "pems: PEMS_IO_FAULT: C requests
 * counted (R reads, W writes)" on stderr (R and W: all requests on
 * matching paths), so a test can learn them with a large N first.
 *
 * Counted requests, one counter per process shared by all threads:
 *  - every request submitted to an engine (pems_io_submit/pems_io_rw),
 *    counted once, when its first piece is issued;
 *  - every call of pems_io_pread/pems_io_pwrite/pems_io_fallocate, which
 *    the runtime uses for the I/O it does outside an engine (gets served
 *    from context files, the buffered heads and tails of pems_file_*,
 *    message-log preallocation).  fallocate counts as a write for eio and
 *    enospc and is not counted for short (it has no short form).
 *
 * Invariants:
 *  (1) with PEMS_IO_FAULT unset nothing here runs on the engine path
 *      (pems_io__fault_wrap leaves the backend's ops in place) and the
 *      syscall wrappers cost one pthread_once and one test;
 *  (2) a faulted engine request is completed through pems_io__complete
 *      from queue(), as the sync backend does (io_internal.h (3)): the
 *      engine's own error handling sees exactly what a kernel error
 *      would give it;
 *  (3) a malformed PEMS_IO_FAULT is reported once on stderr and makes
 *      every engine creation and wrapped call fail with EINVAL: a test
 *      with a typo must not pass by injecting nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_internal.h"

enum fault_kind { FAULT_EIO, FAULT_ENOSPC, FAULT_SHORT };

static struct {
	bool on;		/* PEMS_IO_FAULT set and valid */
	bool bad;		/* set but malformed (invariant 3) */
	bool match_read, match_write;
	enum fault_kind kind;
	unsigned long nth;
	bool sticky;		/* '+': the nth and every later one */
	char path[256];		/* "" = every file */
	atomic_ulong seen;	/* counted requests so far */
	atomic_ulong ops[2];	/* requests on matching paths, by op */
} F;

static pthread_once_t parse_once = PTHREAD_ONCE_INIT;

/* After a short transfer done by a wrapped syscall, the next call on the
 * same descriptor at the offset where it stopped makes no progress. */
static __thread int short_fd = -1;
static __thread uint64_t short_end;

static int parse_spec(const char *s)
{
	char op[8], kind[8], plus[2] = "";
	unsigned long n;
	int used = 0;

	if (sscanf(s, "%7[a-z]:%7[a-z]:%lu%n", op, kind, &n, &used) != 3 || n == 0)
		return -1;
	s += used;
	if (*s == '+') {
		plus[0] = '+';
		s++;
	}
	if (*s == ':') {
		if (strlen(s + 1) == 0 || strlen(s + 1) >= sizeof(F.path))
			return -1;
		strcpy(F.path, s + 1);
	} else if (*s) {
		return -1;
	}
	F.match_read = !strcmp(op, "read") || !strcmp(op, "any");
	F.match_write = !strcmp(op, "write") || !strcmp(op, "any");
	if (!F.match_read && !F.match_write)
		return -1;
	if (!strcmp(kind, "eio"))
		F.kind = FAULT_EIO;
	else if (!strcmp(kind, "enospc"))
		F.kind = FAULT_ENOSPC;
	else if (!strcmp(kind, "short"))
		F.kind = FAULT_SHORT;
	else
		return -1;
	F.nth = n;
	F.sticky = plus[0] == '+';
	return 0;
}

/* At a normal exit, say how many requests were counted: a test runs
 * once with a large N to learn where the faults can go. */
static void report_count(void)
{
	fprintf(stderr, "pems: PEMS_IO_FAULT: %lu requests counted (%lu reads, %lu writes)\n",
		(unsigned long)atomic_load(&F.seen),
		(unsigned long)atomic_load(&F.ops[PEMS_IO_READ]),
		(unsigned long)atomic_load(&F.ops[PEMS_IO_WRITE]));
}

static void parse_env(void)
{
	const char *s = getenv("PEMS_IO_FAULT");

	if (!s || !*s)
		return;
	if (parse_spec(s)) {
		fprintf(stderr, "pems: error: PEMS_IO_FAULT=%s: expected OP:KIND:N[+][:PATH] with OP read|write|any, KIND eio|enospc|short, N >= 1\n",
			s);
		F.bad = true;
		return;
	}
	F.on = true;
	atexit(report_count);
}

static bool path_matches(int fd)
{
	char link[64], path[4096];
	ssize_t n;

	if (!F.path[0])
		return true;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return false;
	path[n] = 0;
	return strstr(path, F.path) != NULL;
}

/* Count a request; true when it is to be hit. */
static bool hit(enum pems_io_op op, int fd)
{
	unsigned long k;

	if (!path_matches(fd))
		return false;
	atomic_fetch_add(&F.ops[op], 1);
	if (!(op == PEMS_IO_READ ? F.match_read : F.match_write))
		return false;
	k = atomic_fetch_add(&F.seen, 1) + 1;
	return k == F.nth || (F.sticky && k > F.nth);
}

static int fault_errno(void)
{
	return F.kind == FAULT_ENOSPC ? -ENOSPC : -EIO;
}

/* Half of @len, rounded down to PEMS_IO_ALIGN so O_DIRECT accepts it. */
static size_t short_len(size_t len)
{
	return (len / 2) & ~(size_t)(PEMS_IO_ALIGN - 1);
}

/* ---- engine requests: a wrapper around the chosen backend ---- */

static int fault_init(struct pems_io *io)
{
	return io->fault_inner->init(io);
}

static void fault_fini(struct pems_io *io)
{
	io->fault_inner->fini(io);
}

static int fault_harvest(struct pems_io *io, bool wait)
{
	return io->fault_inner->harvest(io, wait);
}

/* The hit piece of a short request: transfer part of it synchronously. */
static ssize_t short_piece(struct pems_io_req *req)
{
	size_t n = short_len(pems_io__piece_len(req));
	ssize_t r;

	if (n == 0)
		return 0;
	if (req->op == PEMS_IO_READ)
		r = pread(req->fd, pems_io__piece_buf(req), n, (off_t)pems_io__piece_off(req));
	else
		r = pwrite(req->fd, pems_io__piece_buf(req), n, (off_t)pems_io__piece_off(req));
	return r < 0 ? -errno : r;
}

static int fault_queue(struct pems_io *io, struct pems_io_req *req)
{
	/* the rest of a request cut short: no progress (invariant 2) */
	if (req->done_ > 0 && req == io->fault_short) {
		pems_io__complete(io, req, 0);
		return 0;
	}
	if (req->done_ > 0 || !hit(req->op, req->fd))
		return io->fault_inner->queue(io, req);
	if (F.kind != FAULT_SHORT) {
		pems_io__complete(io, req, fault_errno());
		return 0;
	}
	io->fault_short = req;
	pems_io__complete(io, req, short_piece(req));
	return 0;
}

static const struct pems_io_ops fault_ops = {
	.init = fault_init,
	.fini = fault_fini,
	.queue = fault_queue,
	.harvest = fault_harvest,
};

int pems_io__fault_wrap(struct pems_io *io)
{
	pthread_once(&parse_once, parse_env);
	if (F.bad)
		return -EINVAL;
	if (!F.on)
		return 0;
	io->fault_inner = io->ops;
	io->ops = &fault_ops;
	return 0;
}

/* ---- system calls made outside an engine ---- */

/* 0: perform the call with *len bytes (possibly cut short); 1: return 0
 * bytes; -errno: fail with it. */
static int sys_fault(enum pems_io_op op, int fd, size_t *len, uint64_t off)
{
	pthread_once(&parse_once, parse_env);
	if (__builtin_expect(!F.on && !F.bad, 1))
		return 0;
	if (F.bad)
		return -EINVAL;
	if (fd == short_fd && off == short_end) {
		short_fd = -1;
		return 1;
	}
	if (!hit(op, fd))
		return 0;
	if (F.kind != FAULT_SHORT)
		return fault_errno();
	*len = short_len(*len);
	short_fd = fd;
	short_end = off + *len;
	return *len ? 0 : 1;
}

ssize_t pems_io_pread(int fd, void *buf, size_t len, uint64_t off)
{
	int f = sys_fault(PEMS_IO_READ, fd, &len, off);

	if (f < 0) {
		errno = -f;
		return -1;
	}
	return f ? 0 : pread(fd, buf, len, (off_t)off);
}

ssize_t pems_io_pwrite(int fd, const void *buf, size_t len, uint64_t off)
{
	int f = sys_fault(PEMS_IO_WRITE, fd, &len, off);

	if (f < 0) {
		errno = -f;
		return -1;
	}
	return f ? 0 : pwrite(fd, buf, len, (off_t)off);
}

int pems_io_fallocate(int fd, int mode, uint64_t off, uint64_t len)
{
	pthread_once(&parse_once, parse_env);
	if (__builtin_expect(F.on || F.bad, 0)) {
		if (F.bad) {
			errno = EINVAL;
			return -1;
		}
		if (F.kind != FAULT_SHORT && hit(PEMS_IO_WRITE, fd)) {
			errno = -fault_errno();
			return -1;
		}
	}
	return fallocate(fd, mode, (off_t)off, (off_t)len);
}
