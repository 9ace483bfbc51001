/*
 * pems_io.h - asynchronous block I/O engine (layer io/).
 *
 * One engine per thread: an engine is not thread-safe, but engines on
 * different threads may use the same file descriptors.  Requests are
 * described by caller-owned struct pems_io_req; the engine never copies
 * or frees them.  A request stays owned by the engine from a successful
 * pems_io_submit() until pems_io_reap() hands it back.
 *
 * Buffers, offsets and lengths of requests on a file opened with
 * O_DIRECT must be multiples of PEMS_IO_ALIGN.  This layer depends on
 * nothing else in pems.
 */
#ifndef PEMS_IO_H
#define PEMS_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>	/* ssize_t */

#define PEMS_IO_ALIGN 4096u		/* O_DIRECT alignment, bytes */
#define PEMS_IO_REQ_SIZE (1u << 20)	/* advised request size, bytes */

enum pems_io_backend {
	PEMS_IO_URING = 0,	/* io_uring via liburing (default) */
	PEMS_IO_AIO = 1,	/* Linux native AIO via libaio */
	PEMS_IO_SYNC = 2,	/* pread/pwrite; performed inside submit */
};

enum pems_io_op { PEMS_IO_READ = 0, PEMS_IO_WRITE = 1 };

struct pems_io_req {
	/* filled by the caller */
	int fd;
	enum pems_io_op op;
	void *buf;
	size_t len;		/* bytes */
	uint64_t off;		/* bytes from the start of the file */
	void *user;		/* opaque to the engine */
	/* filled by the engine on completion */
	ssize_t res;		/* bytes transferred, or -errno */
	/* private to the engine */
	size_t done_;		/* bytes completed so far (short I/O is resubmitted) */
	struct pems_io_req *next_;
};

struct pems_io;	/* opaque */

/* Create an engine with room for @qdepth requests in flight (1..4096).
 * Returns 0 and sets *io, or -errno (-ENOSYS when the backend is not
 * available on this kernel, e.g. io_uring disabled; otherwise the
 * kernel's own error, e.g. -EPERM, -ENOMEM, -EAGAIN for aio-max-nr).
 * PEMS_IO_NO_URING set in the environment makes PEMS_IO_URING fail with
 * -ENOSYS, to test callers' fall-back.  PEMS_IO_FAULT set wraps the
 * backend in the fault injector of io_fault.c (-EINVAL if malformed). */
int pems_io_create(struct pems_io **io, enum pems_io_backend backend,
		   unsigned qdepth);
/* Wait for requests in flight, then free the engine.  NULL is a no-op. */
void pems_io_destroy(struct pems_io *io);

/* Queue @req and hand it to the kernel.  If @qdepth requests are already
 * in flight, first waits for one to complete (it is kept for the next
 * reap).  Returns 0 or -errno (the request is then not owned by the
 * engine).  Short reads/writes are resubmitted for the rest internally;
 * a read that hits end of file completes with res = bytes read.
 * Errors of the I/O itself (-EBADF, -EINVAL for misaligned O_DIRECT,
 * -EIO, -ENOSPC ...) are not returned here on any backend: submit
 * returns 0 and the request completes with res = -errno, as io_uring's
 * cqe->res would say.  -EINTR/-EAGAIN results are retried internally. */
int pems_io_submit(struct pems_io *io, struct pems_io_req *req);

/* Return up to @max completed requests in @out, waiting until at least
 * @min are available (min = 0: do not block; fewer than @min only when
 * fewer are owned by the engine).  Returns the number returned, in
 * completion order, or -errno (-EINVAL if min > max).  Each returned
 * request has res set. */
int pems_io_reap(struct pems_io *io, struct pems_io_req **out, unsigned min,
		 unsigned max);

/* Number of requests submitted and not yet reaped. */
unsigned pems_io_inflight(const struct pems_io *io);

/* Synchronous convenience: submit one request and wait for it (other
 * completions that arrive meanwhile are kept for the next reap).
 * Returns bytes transferred (== len unless a read hit EOF) or -errno.
 * Uses one of the @qdepth slots while it runs. */
ssize_t pems_io_rw(struct pems_io *io, enum pems_io_op op, int fd, void *buf,
		   size_t len, uint64_t off);

/* open(2) with O_DIRECT added; if the filesystem refuses O_DIRECT
 * (EINVAL, e.g. tmpfs before Linux 6.6, ramfs, /dev/null) opens without
 * it and prints one warning per process on stderr (O_CREAT | O_EXCL
 * still works: the refused first attempt has created the file).
 * *direct (may be NULL) tells which happened.  Returns the fd or -errno. */
int pems_io_open(const char *path, int flags, int mode, bool *direct);

/* Parse "uring", "aio" or "sync"; returns 0 or -EINVAL. */
int pems_io_backend_parse(const char *name, enum pems_io_backend *out);
const char *pems_io_backend_name(enum pems_io_backend backend);

/* Allocate a buffer for direct I/O of @len bytes, aligned to
 * PEMS_IO_ALIGN.  Buffers of PEMS_IO_REQ_SIZE or more are mapped on their
 * own, 2 MiB-aligned and rounded up to whole 2 MiB pages, with a
 * transparent-huge-page hint (not with PEMS_NO_THP set in the
 * environment), so that a request is one physically contiguous DMA
 * segment instead of one per 4 KiB page (see io.c).  Returns NULL on
 * failure.  Free with pems_io_free() and the same @len. */
void *pems_io_alloc(size_t len);
/* Bytes pems_io_alloc(@len) really takes (what a memory budget must
 * count); 0 if @len is too large. */
size_t pems_io_alloc_size(size_t len);
/* Free a buffer of pems_io_alloc(@len).  NULL is a no-op. */
void pems_io_free(void *buf, size_t len);

/* pread(2), pwrite(2) and fallocate(2) for the I/O the runtime does
 * outside an engine, with PEMS_IO_FAULT applied (io_fault.c; for tests).
 * Same returns and errno as the system calls; without PEMS_IO_FAULT they
 * are the system calls. */
ssize_t pems_io_pread(int fd, void *buf, size_t len, uint64_t off);
ssize_t pems_io_pwrite(int fd, const void *buf, size_t len, uint64_t off);
int pems_io_fallocate(int fd, int mode, uint64_t off, uint64_t len);

#endif
