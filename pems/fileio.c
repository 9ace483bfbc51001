/*
 * fileio.c - the runtime's file service behind pems_file_* (bsp/file.c):
 * parallel file I/O straight into and out of context memory.
 *
 * A handle has two descriptors on the same file: one opened O_DIRECT for
 * the page-aligned interior of each transfer, one buffered for the
 * unaligned head and tail (so that VPs writing neighbouring byte ranges
 * never read-modify-write each other's blocks).  Interiors go through the
 * calling worker's I/O engine with several 1 MiB requests in flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "ctx.h"
#include "ckpt.h"

#define MAXF 256
#define INFLIGHT 8

struct pfile {
	int dfd, bfd;
	bool used, direct;
};

static struct pfile files[MAXF];
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;

int pems_fio_open(const char *path, int flags, int mode)
{
	int i, dfd, bfd;
	bool direct;
	struct stat st;

	/* a FIFO nobody writes to must not hang the open; it cannot be
	 * read at offsets anyway */
	bfd = open(path, flags | O_NONBLOCK, mode);
	if (bfd < 0)
		return -errno;
	if (fstat(bfd, &st) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
		close(bfd);
		return -ESPIPE;
	}
	fcntl(bfd, F_SETFL, fcntl(bfd, F_GETFL) & ~O_NONBLOCK);
	/* the buffered twin serves small pieces: no readahead behind them */
	posix_fadvise(bfd, 0, 0, POSIX_FADV_RANDOM);
	dfd = pems_io_open(path, flags & ~(O_CREAT | O_TRUNC | O_EXCL), 0, &direct);
	if (dfd < 0) {
		close(bfd);
		return dfd;
	}
	pthread_mutex_lock(&files_lock);
	for (i = 0; i < MAXF && files[i].used; i++)
		;
	if (i == MAXF) {
		pthread_mutex_unlock(&files_lock);
		close(bfd);
		close(dfd);
		return -EMFILE;
	}
	files[i] = (struct pfile){ .dfd = dfd, .bfd = bfd, .used = true, .direct = direct };
	pems_ckpt_file_note(i, path, flags, dfd, bfd, direct);
	pthread_mutex_unlock(&files_lock);
	return i;
}

int pems_fio_close(int h)
{
	int rc = 0;

	if (h < 0 || h >= MAXF || !files[h].used)
		return -EBADF;
	if (close(files[h].dfd))
		rc = -errno;
	if (close(files[h].bfd))
		rc = -errno;
	pthread_mutex_lock(&files_lock);	/* the slot may be taken at once */
	pems_ckpt_file_forget(h);
	files[h].used = false;
	pthread_mutex_unlock(&files_lock);
	return rc;
}

/* Resume (checkpoint.c): handle @h is open again at its old descriptors. */
int pems_fio_restore(int h, int dfd, int bfd, bool direct)
{
	if (h < 0 || h >= MAXF || files[h].used)
		return -EBUSY;
	files[h] = (struct pfile){ .dfd = dfd, .bfd = bfd, .used = true, .direct = direct };
	return 0;
}

static long long buffered(int fd, enum pems_io_op op, char *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = op == PEMS_IO_READ ?
			    pems_io_pread(fd, buf + done, len - done, off + done) :
			    pems_io_pwrite(fd, buf + done, len - done, off + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0 && op == PEMS_IO_WRITE)
			return -EIO;	/* no progress: as the engine says (io.c) */
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (long long)done;
}

struct xfer {
	int pending;
	long long err;
	uint64_t eof_at;	/* file offset where a read hit EOF */
};

struct fop {
	struct pems_ioop op;	/* first: completions find us through it */
	struct xfer *x;
	bool busy;
};

static void fop_done(struct pems_worker *w, struct pems_ioop *op)
{
	struct fop *f = (struct fop *)op;
	struct xfer *x = f->x;

	(void)w;
	f->busy = false;
	x->pending--;
	if (op->req.res < 0) {
		if (!x->err)
			x->err = op->req.res;
	} else if ((size_t)op->req.res < op->req.len) {
		uint64_t end = op->req.off + (uint64_t)op->req.res;

		if (end < x->eof_at)
			x->eof_at = end;
	}
}

/* Aligned interior through the engine, INFLIGHT requests at a time. */
static long long direct(struct pems_worker *w, int fd, enum pems_io_op op, char *buf,
			size_t len, uint64_t off)
{
	struct fop ops[INFLIGHT];
	struct xfer x = { .eof_at = PEMS_NONE };
	size_t done = 0;
	int i, rc;

	memset(ops, 0, sizeof(ops));
	while (done < len && !x.err && x.eof_at == PEMS_NONE) {
		size_t n = len - done < PEMS_IO_REQ_SIZE ? len - done : PEMS_IO_REQ_SIZE;

		for (i = 0; i < INFLIGHT && ops[i].busy; i++)
			;
		if (i == INFLIGHT) {
			pems_worker_reap(w, 1);
			continue;
		}
		ops[i] = (struct fop){ .x = &x, .busy = true };
		ops[i].op.req = (struct pems_io_req){ .fd = fd, .op = op, .buf = buf + done,
						      .len = n, .off = off + done,
						      .user = &ops[i].op };
		ops[i].op.done = fop_done;
		x.pending++;
		rc = pems_io_submit(w->io, &ops[i].op.req);
		if (rc) {
			x.pending--;
			ops[i].busy = false;
			x.err = rc;
			break;
		}
		done += n;
	}
	while (x.pending)
		pems_worker_reap(w, 1);
	if (x.err)
		return x.err;
	return x.eof_at != PEMS_NONE ? (long long)(x.eof_at - off) : (long long)len;
}

static struct pfile *lookup(int h)
{
	return h >= 0 && h < MAXF && files[h].used ? &files[h] : NULL;
}

/*
 * Split [off, off+len) into an unaligned head, an aligned interior and an
 * unaligned tail; the interior goes direct when the buffer is aligned the
 * same way as the file offset, else everything goes buffered (a bounce
 * copy would cost the same memory bandwidth as the page cache).
 */
static long long transfer(int h, enum pems_io_op op, char *buf, size_t len, uint64_t off)
{
	struct pfile *f = lookup(h);
	struct pems_worker *w = pems_self_worker();
	uint64_t a, b;
	long long n, total = 0;

	if (!f)
		return -EBADF;
	a = (off + PEMS_PAGE - 1) & ~(uint64_t)(PEMS_PAGE - 1);
	b = (off + len) & ~(uint64_t)(PEMS_PAGE - 1);
	if (!w || !f->direct || b <= a ||
	    ((uintptr_t)buf - off) % PEMS_PAGE)
		return buffered(f->bfd, op, buf, len, off);
	if (a > off) {
		n = buffered(f->bfd, op, buf, a - off, off);
		if (n < 0 || n < (long long)(a - off))
			return n;
		total += n;
	}
	n = direct(w, f->dfd, op, buf + (a - off), b - a, a);
	if (n < 0)
		return n;
	total += n;
	if (n < (long long)(b - a))
		return total;
	if (off + len > b) {
		n = buffered(f->bfd, op, buf + (b - off), off + len - b, b);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

long long pems_fio_rw(int h, bool write, void *buf, size_t len, uint64_t off)
{
	long long n = transfer(h, write ? PEMS_IO_WRITE : PEMS_IO_READ, buf, len, off);
	struct pems_worker *w = pems_self_worker();

	if (n > 0 && w) {
		if (write)
			w->file_written += (uint64_t)n;
		else
			w->file_read += (uint64_t)n;
	}
	return n;
}

/*
 * Asynchronous transfers.  The head and tail (unaligned, buffered) are
 * done at start; the aligned interior is submitted whole, one request
 * per PEMS_IO_REQ_SIZE, and completes while the VP computes (the
 * completions are reaped by whatever waits on this worker next).  The
 * state lives outside context memory (malloc), so a VP's context never
 * holds pointers the engine writes through.  w->file_aio counts the
 * transfers not yet waited for: sched.c refuses a sync with any left.
 */
struct aio_state {
	struct pems_worker *w;
	enum pems_io_op op;
	struct xfer x;
	long long sync_rc;	/* whole transfer done synchronously: its result */
	bool is_sync;
	uint64_t off, a, b;	/* the transfer, its aligned interior [a, b) */
	size_t len;
	long long head, tail;	/* bytes done by the buffered head and tail */
	size_t nops;
	struct fop ops[];
};

static void aio_submit(struct aio_state *st, int fd, char *buf)
{
	size_t i, n;
	int rc;

	for (i = 0; i < st->nops; i++) {
		uint64_t o = st->a + (uint64_t)i * PEMS_IO_REQ_SIZE;

		n = st->b - o < PEMS_IO_REQ_SIZE ? (size_t)(st->b - o) : PEMS_IO_REQ_SIZE;
		st->ops[i] = (struct fop){ .x = &st->x, .busy = true };
		st->ops[i].op.req = (struct pems_io_req){ .fd = fd, .op = st->op,
							  .buf = buf + (o - st->off), .len = n,
							  .off = o, .user = &st->ops[i].op };
		st->ops[i].op.done = fop_done;
		st->x.pending++;
		rc = pems_io_submit(st->w->io, &st->ops[i].op.req);
		if (rc) {
			st->x.pending--;
			st->ops[i].busy = false;
			st->x.err = rc;
			return;
		}
	}
}

int pems_fio_start(int h, bool write, void *buf, size_t len, uint64_t off,
		   struct pems_file_aio *aio)
{
	struct pfile *f = lookup(h);
	struct pems_worker *w = pems_self_worker();
	enum pems_io_op op = write ? PEMS_IO_WRITE : PEMS_IO_READ;
	struct aio_state *st;
	uint64_t a, b;
	size_t nops;

	aio->state = NULL;
	if (!f)
		return -EBADF;
	a = (off + PEMS_PAGE - 1) & ~(uint64_t)(PEMS_PAGE - 1);
	b = (off + len) & ~(uint64_t)(PEMS_PAGE - 1);
	nops = b > a ? (size_t)((b - a + PEMS_IO_REQ_SIZE - 1) / PEMS_IO_REQ_SIZE) : 0;
	st = calloc(1, sizeof(*st) + nops * sizeof(st->ops[0]));
	if (!st)
		return -ENOMEM;
	*st = (struct aio_state){ .w = w, .op = op, .x = { .eof_at = PEMS_NONE },
				  .off = off, .a = a, .b = b, .len = len, .nops = nops };
	aio->state = st;
	if (!w || !f->direct || b <= a || ((uintptr_t)buf - off) % PEMS_PAGE) {
		/* nothing to overlap: as pems_file_read/write, now */
		st->is_sync = true;
		st->sync_rc = transfer(h, op, buf, len, off);
		return 0;
	}
	if (a > off) {
		st->head = buffered(f->bfd, op, buf, a - off, off);
		if (st->head < (long long)(a - off)) {
			st->is_sync = true;	/* error or EOF before the interior */
			st->sync_rc = st->head;
			return 0;
		}
	}
	w->file_aio++;
	aio_submit(st, f->dfd, buf);
	if (off + len > b)
		st->tail = buffered(f->bfd, op, (char *)buf + (b - off), off + len - b, b);
	return 0;
}

bool pems_fio_foreign(const struct pems_file_aio *aio)
{
	const struct aio_state *st = aio->state;

	return st && !st->is_sync && st->w != pems_self_worker();
}

static long long aio_result(struct aio_state *st)
{
	if (st->is_sync)
		return st->sync_rc;
	if (st->x.err)
		return st->x.err;
	if (st->x.eof_at != PEMS_NONE)
		return st->head + (long long)(st->x.eof_at - st->a);
	if (st->tail < 0)
		return st->tail;
	return st->head + (long long)(st->b - st->a) + st->tail;
}

long long pems_fio_wait(struct pems_file_aio *aio)
{
	struct aio_state *st = aio->state;
	struct pems_worker *w;
	long long n;

	if (!st)
		return -EINVAL;
	w = st->w;
	if (!st->is_sync) {
		while (st->x.pending)
			pems_worker_reap(w, 1);
		w->file_aio--;
	}
	n = aio_result(st);
	if (n > 0 && w) {
		if (st->op == PEMS_IO_READ)
			w->file_read += (uint64_t)n;
		else
			w->file_written += (uint64_t)n;
	}
	free(st);
	aio->state = NULL;
	return n;
}

/* Read @n pieces of @len (<= 4096) bytes at @offs into @out, one after
 * the other, with up to INFLIGHT*4 small direct reads in flight: random
 * sampling costs one round of the disk's IOPS, not n round trips. */
long long pems_fio_read_pieces(int h, void *out, const uint64_t *offs, size_t n, size_t len)
{
	enum { BATCH = 4 * INFLIGHT, BLK = 2 * PEMS_PAGE };
	struct pfile *f = lookup(h);
	struct pems_worker *w = pems_self_worker();
	struct fop ops[BATCH];
	char *bounce;
	size_t i, j;

	if (!f || len > PEMS_PAGE)
		return -EINVAL;
	if (!w || !f->direct) {
		for (i = 0; i < n; i++) {
			long long r = buffered(f->bfd, PEMS_IO_READ, (char *)out + i * len, len, offs[i]);

			if (r != (long long)len)
				return r < 0 ? r : -EIO;
		}
		return (long long)(n * len);
	}
	bounce = pems_io_alloc((size_t)BATCH * BLK);
	if (!bounce)
		return -ENOMEM;
	for (i = 0; i < n; i += BATCH) {
		struct xfer x = { .eof_at = PEMS_NONE };
		size_t m = n - i < BATCH ? n - i : BATCH;

		for (j = 0; j < m; j++) {
			uint64_t a = offs[i + j] & ~(uint64_t)(PEMS_PAGE - 1);
			size_t blk = offs[i + j] - a + len > PEMS_PAGE ? BLK : PEMS_PAGE;

			ops[j] = (struct fop){ .x = &x, .busy = true };
			ops[j].op.req = (struct pems_io_req){ .fd = f->dfd, .op = PEMS_IO_READ,
							      .buf = bounce + j * BLK, .len = blk,
							      .off = a, .user = &ops[j].op };
			ops[j].op.done = fop_done;
			x.pending++;
			if (pems_io_submit(w->io, &ops[j].op.req)) {
				x.pending--;
				x.err = -EIO;
				break;
			}
		}
		while (x.pending)
			pems_worker_reap(w, 1);
		if (x.err) {
			pems_io_free(bounce, (size_t)BATCH * BLK);
			return x.err;
		}
		for (j = 0; j < m; j++) {
			uint64_t o = offs[i + j], a = o & ~(uint64_t)(PEMS_PAGE - 1);

			/* a piece at the very end may come back short: EOF */
			if ((uint64_t)ops[j].op.req.res < o - a + len) {
				pems_io_free(bounce, (size_t)BATCH * BLK);
				return -EIO;
			}
			memcpy((char *)out + (i + j) * len, bounce + j * BLK + (o - a), len);
			w->file_read += ops[j].op.req.len;
		}
	}
	pems_io_free(bounce, (size_t)BATCH * BLK);
	return (long long)(n * len);
}
