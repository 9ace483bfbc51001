/*
 * io_aio.c - Linux native AIO backend (libaio).
 *
 * The kernel needs an iocb per piece in flight; the caller's request has
 * no room for one, so the backend keeps a pool of qdepth iocbs and a
 * stack of the free ones.  io_submit() reports some errors of the
 * request itself (bad fd, bad buffer) at submission where io_uring would
 * report them in the completion; they are turned into completions so
 * that every backend reports them the same way, in req->res.
 */
#include <errno.h>
#include <libaio.h>
#include <stdlib.h>
#include <time.h>

#include "io_internal.h"

#define AIO_SUBMIT_TRIES 1000

struct aio {
	io_context_t ctx;
	struct iocb *cbs;	/* qdepth control blocks */
	struct iocb **free;	/* stack of unused ones */
	unsigned nfree;
	struct io_event *events;	/* qdepth */
};

static int aio_harvest(struct pems_io *io, bool wait);

static void aio_free(struct aio *a)
{
	free(a->cbs);
	free(a->free);
	free(a->events);
	free(a);
}

static int aio_init(struct pems_io *io)
{
	struct aio *a;
	unsigned i;
	int ret;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->cbs = calloc(io->qdepth, sizeof(*a->cbs));
	a->free = calloc(io->qdepth, sizeof(*a->free));
	a->events = calloc(io->qdepth, sizeof(*a->events));
	ret = -ENOMEM;
	if (!a->cbs || !a->free || !a->events)
		goto out_free;
	for (i = 0; i < io->qdepth; i++)
		a->free[i] = &a->cbs[i];
	a->nfree = io->qdepth;
	/* libaio returns -errno; -EAGAIN means fs.aio-max-nr is reached. */
	ret = io_setup((int)io->qdepth, &a->ctx);
	if (ret < 0)
		goto out_free;
	io->priv = a;
	return 0;
out_free:
	aio_free(a);
	return ret;
}

static void aio_fini(struct pems_io *io)
{
	struct aio *a = io->priv;

	io_destroy(a->ctx);
	aio_free(a);
	io->priv = NULL;
}

/* Errors io_submit() reports about the engine rather than the request. */
static bool engine_error(int err)
{
	return err == -EAGAIN || err == -ENOMEM || err == -ENOSYS;
}

static int submit_one(struct pems_io *io, struct iocb *cb)
{
	struct aio *a = io->priv;
	int ret, tries = 0;

	for (;;) {
		ret = io_submit(a->ctx, 1, &cb);
		if (ret == 1)
			return 0;
		if (ret == -EINTR)
			continue;
		if (ret == 0)
			ret = -EAGAIN;
		if (ret != -EAGAIN || ++tries >= AIO_SUBMIT_TRIES)
			return ret;
		/* Out of kernel resources: a completion of ours frees some. */
		if (io->kernel > 1)
			aio_harvest(io, true);
		else
			pems_io__backoff();
	}
}

static int aio_queue(struct pems_io *io, struct pems_io_req *req)
{
	struct aio *a = io->priv;
	struct iocb *cb;
	int ret;

	if (!a->nfree)
		return -EBUSY;	/* cannot happen: io->kernel <= qdepth */
	cb = a->free[--a->nfree];
	if (req->op == PEMS_IO_READ)
		io_prep_pread(cb, req->fd, pems_io__piece_buf(req),
			      pems_io__piece_len(req),
			      (long long)pems_io__piece_off(req));
	else
		io_prep_pwrite(cb, req->fd, pems_io__piece_buf(req),
			       pems_io__piece_len(req),
			       (long long)pems_io__piece_off(req));
	cb->data = req;
	ret = submit_one(io, cb);
	if (!ret)
		return 0;
	a->free[a->nfree++] = cb;
	if (engine_error(ret))
		return ret;
	pems_io__complete(io, req, ret);
	return 0;
}

static int aio_harvest(struct pems_io *io, bool wait)
{
	struct aio *a = io->priv;
	struct timespec zero = { 0, 0 };
	struct iocb *cb;
	int i, ret;

	do {
		if (wait && io->kernel > 0)
			ret = io_getevents(a->ctx, 1, (long)io->qdepth,
					   a->events, NULL);
		else
			ret = io_getevents(a->ctx, 0, (long)io->qdepth,
					   a->events, &zero);
	} while (ret == -EINTR);
	if (ret < 0)
		return ret;
	for (i = 0; i < ret; i++) {
		cb = a->events[i].obj;
		a->free[a->nfree++] = cb;
		/* res is unsigned long in the ABI; errors are -errno. */
		pems_io__complete(io, cb->data, (long)a->events[i].res);
	}
	return ret;
}

const struct pems_io_ops pems_io_aio_ops = {
	.init = aio_init,
	.fini = aio_fini,
	.queue = aio_queue,
	.harvest = aio_harvest,
};
