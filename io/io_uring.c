/*
 * io_uring.c - io_uring backend (liburing).
 *
 * Every prepared sqe is submitted at once, so the submission queue never
 * holds more than the piece being queued.  The ring has qdepth sq
 * entries and (liburing's default) twice that many cq entries, so with
 * at most qdepth pieces in flight the completion queue cannot overflow.
 *
 * If the kernel refuses to take an sqe (-EAGAIN/-EBUSY) for good, that
 * sqe is still in the ring and would be submitted by the next
 * io_uring_submit(); it is turned into a NOP without user data (a
 * "ghost") so that the request, no longer owned by the engine, is never
 * touched again.  Ghost completions are dropped in harvest.
 */
#include <errno.h>
#include <liburing.h>
#include <stdlib.h>

#include "io_internal.h"

#define URING_SUBMIT_TRIES 1000

struct uring {
	struct io_uring ring;
};

static int uring_harvest(struct pems_io *io, bool wait);

static int uring_init(struct pems_io *io)
{
	struct uring *u;
	int ret;

	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	ret = io_uring_queue_init(io->qdepth, &u->ring, 0);
	if (ret < 0) {
		free(u);
		return ret;	/* -ENOSYS, -EPERM (disabled), -ENOMEM ... */
	}
	io->priv = u;
	return 0;
}

static void uring_fini(struct pems_io *io)
{
	struct uring *u = io->priv;

	io_uring_queue_exit(&u->ring);
	free(u);
	io->priv = NULL;
}

/* Submit until the kernel took every prepared sqe, riding out EINTR and
 * short-lived shortages; returns 0 or the last -errno. */
static int uring_flush(struct pems_io *io)
{
	struct uring *u = io->priv;
	int ret = 0, tries = 0;

	while (io_uring_sq_ready(&u->ring)) {
		ret = io_uring_submit(&u->ring);
		if (ret > 0 || ret == -EINTR)
			continue;
		if (ret == 0)
			ret = -EAGAIN;
		if ((ret != -EAGAIN && ret != -EBUSY) ||
		    ++tries >= URING_SUBMIT_TRIES)
			return ret;
		/* Completions free kernel resources (and cq room for EBUSY):
		 * wait for one of ours if any other is in flight. */
		if (io->kernel > 1)
			uring_harvest(io, true);
		else
			pems_io__backoff();
	}
	return 0;
}

static int uring_queue(struct pems_io *io, struct pems_io_req *req)
{
	struct uring *u = io->priv;
	struct io_uring_sqe *sqe;
	int ret;

	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe) {
		/* Only ghosts can fill the queue: push them out. */
		ret = uring_flush(io);
		if (ret < 0)
			return ret;
		sqe = io_uring_get_sqe(&u->ring);
		if (!sqe)
			return -EBUSY;
	}
	if (req->op == PEMS_IO_READ)
		io_uring_prep_read(sqe, req->fd, pems_io__piece_buf(req),
				   (unsigned)pems_io__piece_len(req),
				   pems_io__piece_off(req));
	else
		io_uring_prep_write(sqe, req->fd, pems_io__piece_buf(req),
				    (unsigned)pems_io__piece_len(req),
				    pems_io__piece_off(req));
	io_uring_sqe_set_data(sqe, req);
	ret = uring_flush(io);
	/* Ours is the newest sqe: if any is left unsubmitted, it is. */
	if (ret < 0 && io_uring_sq_ready(&u->ring)) {
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data(sqe, NULL);
		return ret;
	}
	return 0;
}

static int uring_harvest(struct pems_io *io, bool wait)
{
	struct uring *u = io->priv;
	struct io_uring_cqe *cqe;
	struct pems_io_req *req;
	ssize_t res;
	int got = 0, ret;

	for (;;) {
		if (wait && !got && io->kernel > 0)
			ret = io_uring_wait_cqe(&u->ring, &cqe);
		else
			ret = io_uring_peek_cqe(&u->ring, &cqe);
		if (ret == -EINTR)
			continue;
		if (ret == -EAGAIN)
			break;		/* nothing ready */
		if (ret < 0)
			return got ? got : ret;
		req = io_uring_cqe_get_data(cqe);
		res = cqe->res;
		io_uring_cqe_seen(&u->ring, cqe);
		if (!req)
			continue;	/* a ghost */
		pems_io__complete(io, req, res);
		got++;
	}
	return got;
}

const struct pems_io_ops pems_io_uring_ops = {
	.init = uring_init,
	.fini = uring_fini,
	.queue = uring_queue,
	.harvest = uring_harvest,
};
