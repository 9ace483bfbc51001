/*
 * io_internal.h - what io.c shares with its backends (private to io/).
 *
 * A request is cut into pieces: the backend is handed one piece at a
 * time (the part from req->done_ on, at most PEMS_IO_PIECE_MAX bytes) and
 * reports each piece's result through pems_io__complete().  The common
 * code decides whether the request is finished or needs another piece.
 *
 * Invariants (io.c relies on them; backends must keep them):
 *  (1) io->kernel counts pieces handed to the backend and not yet passed
 *      to pems_io__complete(); io->kernel <= io->qdepth.
 *  (2) Every request owned by the engine is in exactly one place: in the
 *      backend (counted by io->kernel), on the retry list, on the done
 *      list, or, for pems_io_rw()'s request, marked by io->rw_done.
 *  (3) ops->queue() either hands the piece over (returns 0; the backend
 *      may complete it at once, as sync does) or returns -errno and does
 *      not keep or complete the request.
 *  (4) Backends never reissue a piece themselves: pems_io__complete()
 *      only puts unfinished requests on the retry list, and io.c issues
 *      them again outside of the backend, so there is no recursion.
 */
#ifndef PEMS_IO_INTERNAL_H
#define PEMS_IO_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "pems_io.h"

/* Largest piece handed to a backend at once: io_uring takes an unsigned
 * length and the kernel caps one transfer near 2 GiB anyway. */
#define PEMS_IO_PIECE_MAX (1u << 30)

struct pems_io;

struct pems_io_ops {
	int (*init)(struct pems_io *io);
	void (*fini)(struct pems_io *io);
	/* Hand the next piece of @req to the kernel (see invariant 3). */
	int (*queue)(struct pems_io *io, struct pems_io_req *req);
	/* Pass finished pieces to pems_io__complete(); with @wait, block
	 * until at least one (only called with io->kernel > 0).  Returns
	 * the number passed or -errno. */
	int (*harvest)(struct pems_io *io, bool wait);
};

struct pems_io {
	const struct pems_io_ops *ops;
	enum pems_io_backend backend;
	unsigned qdepth;
	unsigned owned;			/* submitted, not yet reaped */
	unsigned kernel;		/* pieces in the backend */
	unsigned ndone;
	struct pems_io_req *done_head;	/* FIFO of finished requests */
	struct pems_io_req *done_tail;
	struct pems_io_req *retry;	/* unfinished, waiting for a piece */
	struct pems_io_req *rw_req;	/* pems_io_rw()'s, kept off done */
	bool rw_done;
	void *priv;			/* backend state */
	/* PEMS_IO_FAULT only (io_fault.c): the wrapped backend, and the
	 * request cut short whose rest makes no progress */
	const struct pems_io_ops *fault_inner;
	struct pems_io_req *fault_short;
};

extern const struct pems_io_ops pems_io_uring_ops;
extern const struct pems_io_ops pems_io_aio_ops;
extern const struct pems_io_ops pems_io_sync_ops;

/* With PEMS_IO_FAULT set, wrap io->ops in the fault injector
 * (io_fault.c); otherwise leave them.  Returns 0, or -EINVAL if the
 * variable is malformed. */
int pems_io__fault_wrap(struct pems_io *io);

/* Called by a backend for every finished piece; @res is the kernel's
 * result (bytes or -errno), passed through unchanged. */
void pems_io__complete(struct pems_io *io, struct pems_io_req *req,
		       ssize_t res);

/* Length, buffer and offset of the next piece of @req. */
static inline size_t pems_io__piece_len(const struct pems_io_req *req)
{
	size_t left = req->len - req->done_;

	return left < PEMS_IO_PIECE_MAX ? left : PEMS_IO_PIECE_MAX;
}

static inline void *pems_io__piece_buf(const struct pems_io_req *req)
{
	return (char *)req->buf + req->done_;
}

static inline uint64_t pems_io__piece_off(const struct pems_io_req *req)
{
	return req->off + req->done_;
}

/* Sleep about a millisecond: the back-off when the kernel is short of
 * resources and nothing of ours is in flight to wait for. */
void pems_io__backoff(void);

#endif
