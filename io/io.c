/*
 * io.c - the backend-independent part of the I/O engine: open with
 * O_DIRECT, aligned buffers, request bookkeeping (pieces, retries, the
 * done list) and dispatch to a backend through struct pems_io_ops.
 * See io_internal.h for the invariants the code below keeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "io_internal.h"

#define PEMS_IO_QDEPTH_MAX 4096u
/* Bounded patience when the backend keeps failing while requests are
 * still in flight: about a second of 1 ms back-offs. */
#define PEMS_IO_DRAIN_TRIES 1000

static const struct pems_io_ops *const backend_ops[] = {
	[PEMS_IO_URING] = &pems_io_uring_ops,
	[PEMS_IO_AIO] = &pems_io_aio_ops,
	[PEMS_IO_SYNC] = &pems_io_sync_ops,
};

static const char *const backend_names[] = {
	[PEMS_IO_URING] = "uring",
	[PEMS_IO_AIO] = "aio",
	[PEMS_IO_SYNC] = "sync",
};

#define NBACKENDS (sizeof(backend_names) / sizeof(backend_names[0]))

void pems_io__backoff(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 1000000 };

	nanosleep(&ts, NULL);
}

int pems_io_backend_parse(const char *name, enum pems_io_backend *out)
{
	size_t i;

	if (!name || !out)
		return -EINVAL;
	for (i = 0; i < NBACKENDS; i++) {
		if (strcmp(name, backend_names[i]) == 0) {
			*out = (enum pems_io_backend)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *pems_io_backend_name(enum pems_io_backend backend)
{
	if ((unsigned)backend >= NBACKENDS)
		return "unknown";
	return backend_names[backend];
}

/*
 * Request-sized buffers live on transparent huge pages.  A direct
 * transfer is handed to the device as one DMA segment per physically
 * contiguous run of the buffer; 4 KiB pages from malloc are scattered, so
 * a 1 MiB request needs about 256 segments.  A virtio disk without
 * indirect descriptors (this project's VM: a 256-entry ring, so
 * max_segments = 254) then holds one such request at a time and splits a
 * 1 MiB one in two, the second half waiting for the first: reads ran at
 * half of fio's speed whatever the queue depth (bench/README.md).  On a
 * 2 MiB huge page a 1 MiB request is one segment.
 */
#define HUGE_PAGE (2u << 20)

static size_t round_up(size_t x, size_t to)
{
	return (x + to - 1) & ~(to - 1);
}

size_t pems_io_alloc_size(size_t len)
{
	size_t size;

	if (len > SIZE_MAX - HUGE_PAGE)
		return 0;
	/* Round up so a direct transfer of the whole buffer is legal. */
	size = len ? round_up(len, PEMS_IO_ALIGN) : PEMS_IO_ALIGN;
	/* whole huge pages, or the tail would be 4 KiB pages again */
	if (size >= PEMS_IO_REQ_SIZE)
		size = round_up(size, HUGE_PAGE);
	return size;
}

/* @size bytes at a 2 MiB boundary, hinted to be backed by huge pages
 * (unless PEMS_NO_THP is set; without THP they are just 4 KiB pages). */
static void *map_huge(size_t size)
{
	size_t span = size + HUGE_PAGE, head;
	char *base, *p;

	base = mmap(NULL, span, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)base + HUGE_PAGE - 1) &
		     ~(uintptr_t)(HUGE_PAGE - 1));
	head = (size_t)(p - base);
	if (head)
		munmap(base, head);
	munmap(p + size, span - head - size);
	if (!getenv("PEMS_NO_THP"))
		madvise(p, size, MADV_HUGEPAGE);	/* a hint: errors are harmless */
	return p;
}

void *pems_io_alloc(size_t len)
{
	size_t size = pems_io_alloc_size(len);
	void *p;

	if (!size)
		return NULL;
	if (size >= PEMS_IO_REQ_SIZE)
		return map_huge(size);
	if (posix_memalign(&p, PEMS_IO_ALIGN, size))
		return NULL;
	return p;
}

void pems_io_free(void *buf, size_t len)
{
	size_t size = pems_io_alloc_size(len);

	if (!buf)
		return;
	if (size >= PEMS_IO_REQ_SIZE)
		munmap(buf, size);
	else
		free(buf);
}

static void warn_buffered_once(const char *path)
{
	static atomic_flag warned = ATOMIC_FLAG_INIT;

	if (!atomic_flag_test_and_set(&warned))
		fprintf(stderr,
			"pems: warning: O_DIRECT refused on %s; using buffered I/O (slower)\n",
			path);
}

int pems_io_open(const char *path, int flags, int mode, bool *direct)
{
	int fd;

	fd = open(path, flags | O_DIRECT, (mode_t)mode);
	if (fd >= 0)
		goto out;
	if (errno != EINVAL)
		return -errno;
	/*
	 * The kernel refuses O_DIRECT only after creating the file, so a
	 * retry with O_EXCL would fail with EEXIST.  Dropping it is safe:
	 * had the file existed before, the first open would have failed
	 * with EEXIST instead of EINVAL.
	 */
	if (flags & O_CREAT)
		flags &= ~O_EXCL;
	fd = open(path, flags & ~O_DIRECT, (mode_t)mode);
	if (fd < 0)
		return -errno;
	warn_buffered_once(path);
out:
	if (direct)
		*direct = fcntl(fd, F_GETFL) & O_DIRECT;
	return fd;
}

static void done_push(struct pems_io *io, struct pems_io_req *req)
{
	if (req == io->rw_req) {
		io->rw_done = true;
		return;
	}
	req->next_ = NULL;
	if (io->done_tail)
		io->done_tail->next_ = req;
	else
		io->done_head = req;
	io->done_tail = req;
	io->ndone++;
}

static struct pems_io_req *done_pop(struct pems_io *io)
{
	struct pems_io_req *req = io->done_head;

	io->done_head = req->next_;
	if (!io->done_head)
		io->done_tail = NULL;
	io->ndone--;
	req->next_ = NULL;
	return req;
}

/* A read stopped short: is it because the file ends there? */
static bool read_at_eof(const struct pems_io_req *req)
{
	struct stat st;

	if (fstat(req->fd, &st) || !S_ISREG(st.st_mode))
		return false;	/* unknown: the next piece will tell */
	return pems_io__piece_off(req) >= (uint64_t)st.st_size;
}

/*
 * Account one finished piece.  Returns true when the whole request is
 * finished (req->res set), false when another piece must be issued.
 */
static bool piece_finishes(struct pems_io_req *req, ssize_t res)
{
	size_t asked = pems_io__piece_len(req);

	/* transient: issue the piece again.  -ECANCELED: io_uring's worker
	 * thread was interrupted (seen under a storm of signals); the engine
	 * never cancels a request itself, so retrying is right. */
	if (res == -EINTR || res == -EAGAIN || res == -ECANCELED)
		return false;
	if (res < 0) {
		/*
		 * A direct read that ended short left a misaligned rest,
		 * which the kernel refuses; it only ends short at EOF.
		 */
		if (res == -EINVAL && req->op == PEMS_IO_READ &&
		    req->done_ % PEMS_IO_ALIGN)
			goto finished;
		req->res = res;
		return true;
	}
	if ((size_t)res > asked) {
		req->res = -EIO;	/* the kernel did more than asked */
		return true;
	}
	req->done_ += (size_t)res;
	if (req->done_ == req->len)
		goto finished;
	if (res == 0) {
		if (req->op == PEMS_IO_READ)
			goto finished;	/* end of file */
		req->res = -EIO;	/* a write making no progress never ends */
		return true;
	}
	if ((size_t)res < asked && req->op == PEMS_IO_READ &&
	    read_at_eof(req))
		goto finished;
	return false;
finished:
	req->res = (ssize_t)req->done_;
	return true;
}

void pems_io__complete(struct pems_io *io, struct pems_io_req *req,
		       ssize_t res)
{
	io->kernel--;
	if (piece_finishes(req, res)) {
		done_push(io, req);
		return;
	}
	req->next_ = io->retry;
	io->retry = req;
}

static int issue(struct pems_io *io, struct pems_io_req *req)
{
	int ret;

	io->kernel++;
	ret = io->ops->queue(io, req);
	if (ret < 0)
		io->kernel--;
	return ret;
}

/* Issue the next piece of every request on the retry list.  A request
 * whose piece cannot be issued finishes with that error. */
static void reissue_all(struct pems_io *io)
{
	struct pems_io_req *req;
	int ret;

	while (io->retry) {
		req = io->retry;
		io->retry = req->next_;
		ret = issue(io, req);
		if (ret < 0) {
			req->res = ret;
			done_push(io, req);
		}
	}
}

/* Let the backend report finished pieces (blocking for one if @wait),
 * then reissue unfinished requests.  With nothing in the backend there
 * is nothing to report, and waiting would never end. */
static int collect(struct pems_io *io, bool wait)
{
	int ret = 0;

	if (io->kernel > 0)
		ret = io->ops->harvest(io, wait);
	reissue_all(io);
	return ret;
}

/* Wait until nothing is in the backend.  Gives up after repeated
 * backend failures rather than spin forever. */
static int drain(struct pems_io *io)
{
	int tries = 0, ret = 0;

	while (io->kernel > 0 || io->retry) {
		ret = collect(io, true);
		if (ret >= 0)
			continue;
		if (++tries >= PEMS_IO_DRAIN_TRIES)
			return ret;
		pems_io__backoff();
	}
	return 0;
}

int pems_io_create(struct pems_io **iop, enum pems_io_backend backend,
		   unsigned qdepth)
{
	struct pems_io *io;
	int ret;

	if (!iop || (unsigned)backend >= NBACKENDS || qdepth < 1 ||
	    qdepth > PEMS_IO_QDEPTH_MAX)
		return -EINVAL;
	/* Lets callers test their fall-back on machines with io_uring. */
	if (backend == PEMS_IO_URING && getenv("PEMS_IO_NO_URING"))
		return -ENOSYS;
	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->ops = backend_ops[backend];
	io->backend = backend;
	io->qdepth = qdepth;
	ret = pems_io__fault_wrap(io);	/* tests only: PEMS_IO_FAULT */
	if (ret < 0)
		goto out_free;
	ret = io->ops->init(io);
	if (ret < 0)
		goto out_free;
	*iop = io;
	return 0;
out_free:
	free(io);
	return ret;
}

void pems_io_destroy(struct pems_io *io)
{
	if (!io)
		return;
	drain(io);
	io->ops->fini(io);
	free(io);
}

int pems_io_submit(struct pems_io *io, struct pems_io_req *req)
{
	int ret;

	if (!io || !req ||
	    (req->op != PEMS_IO_READ && req->op != PEMS_IO_WRITE))
		return -EINVAL;
	while (io->kernel >= io->qdepth) {
		ret = collect(io, true);
		if (ret < 0)
			return ret;
	}
	req->res = 0;
	req->done_ = 0;
	req->next_ = NULL;
	ret = issue(io, req);
	if (ret < 0)
		return ret;
	io->owned++;
	/* The backend may have left unfinished pieces while making room. */
	reissue_all(io);
	return 0;
}

int pems_io_reap(struct pems_io *io, struct pems_io_req **out, unsigned min,
		 unsigned max)
{
	unsigned n = 0;
	int ret;

	if (!io || (max && !out) || min > max)
		return -EINVAL;
	ret = collect(io, false);
	if (ret < 0)
		return ret;
	/* Stop early if what is asked for can never arrive. */
	while (io->ndone < min && (io->kernel > 0 || io->retry)) {
		ret = collect(io, true);
		if (ret < 0)
			return ret;
	}
	while (n < max && io->done_head)
		out[n++] = done_pop(io);
	io->owned -= n;
	return (int)n;
}

unsigned pems_io_inflight(const struct pems_io *io)
{
	return io ? io->owned : 0;
}

/* The backend cannot wait any more, yet the kernel may still write into
 * the caller's buffer through a request on pems_io_rw()'s stack frame:
 * returning would let it corrupt memory, so stop here, loudly. */
static void rw_give_up(int err)
{
	fprintf(stderr, "pems: fatal: I/O engine cannot wait for a request: %s\n",
		strerror(-err));
	abort();
}

ssize_t pems_io_rw(struct pems_io *io, enum pems_io_op op, int fd, void *buf,
		   size_t len, uint64_t off)
{
	struct pems_io_req req = {
		.fd = fd, .op = op, .buf = buf, .len = len, .off = off,
	};
	int ret, tries = 0;

	if (!io)
		return -EINVAL;
	if (io->rw_req)
		return -EBUSY;	/* not reentrant: one engine per thread */
	io->rw_req = &req;
	io->rw_done = false;
	ret = pems_io_submit(io, &req);
	if (ret < 0)
		goto out;
	/* req lives on this stack: never return while it is in flight. */
	while (!io->rw_done) {
		ret = collect(io, true);
		if (ret < 0 && ++tries < PEMS_IO_DRAIN_TRIES)
			pems_io__backoff();
		else if (ret < 0)
			rw_give_up(ret);
	}
	io->owned--;
	ret = 0;
out:
	io->rw_req = NULL;
	return ret < 0 ? ret : req.res;
}
