/*
 * io_sync.c - reference backend: pread/pwrite performed inside submit.
 *
 * Each piece is finished before queue() returns, so nothing is ever in
 * the kernel between calls and harvest has nothing to do; completions
 * wait on the common done list for the next reap.
 */
#include <errno.h>
#include <unistd.h>

#include "io_internal.h"

static int sync_init(struct pems_io *io)
{
	io->priv = NULL;
	return 0;
}

static void sync_fini(struct pems_io *io)
{
	(void)io;
}

static int sync_queue(struct pems_io *io, struct pems_io_req *req)
{
	ssize_t n;

	do {
		if (req->op == PEMS_IO_READ)
			n = pread(req->fd, pems_io__piece_buf(req),
				  pems_io__piece_len(req),
				  (off_t)pems_io__piece_off(req));
		else
			n = pwrite(req->fd, pems_io__piece_buf(req),
				   pems_io__piece_len(req),
				   (off_t)pems_io__piece_off(req));
	} while (n < 0 && errno == EINTR);
	pems_io__complete(io, req, n < 0 ? -errno : n);
	return 0;
}

static int sync_harvest(struct pems_io *io, bool wait)
{
	(void)io;
	(void)wait;
	return 0;
}

const struct pems_io_ops pems_io_sync_ops = {
	.init = sync_init,
	.fini = sync_fini,
	.queue = sync_queue,
	.harvest = sync_harvest,
};
