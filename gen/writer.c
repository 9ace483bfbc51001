/*
 * writer.c - the generators' block writer: threads take the next block
 * number from a shared counter, make it and pwrite it at its offset, so
 * the file does not depend on which thread made which block.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "gen_internal.h"

#define GEN_THREADS 8

struct run {
	const struct gen_file *f;
	int fd;
	uint64_t nblocks;
	atomic_uint_fast64_t next;	/* next block to make */
	atomic_uint_fast64_t done;	/* bytes written */
	atomic_int err;			/* first -errno */
};

/* all of @n bytes at @off (pwrite), or at the file position when @off < 0 */
static int io_all(int fd, const void *p, size_t n, int64_t off)
{
	const char *c = p;

	while (n) {
		ssize_t w = off < 0 ? write(fd, c, n) : pwrite(fd, c, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		c += w;
		n -= (size_t)w;
		off += off < 0 ? 0 : w;
	}
	return 0;
}

int gen_write_all(int fd, const void *p, size_t n)
{
	return io_all(fd, p, n, -1);
}

int gen_to_file(const char *out, int (*body)(int fd, void *arg), void *arg)
{
	char tmp[4096];
	int fd, rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = body(fd, arg);
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, out))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/* Make and write blocks until none is left; @draw: report progress. */
static void blocks(struct run *r, uint8_t *buf, bool draw)
{
	const struct gen_file *f = r->f;
	uint64_t b, first, total = f->count * f->item;
	size_t n;
	int rc;

	while (!atomic_load(&r->err)) {
		b = atomic_fetch_add(&r->next, 1);
		if (b >= r->nblocks)
			break;
		first = b * f->per_block;
		n = f->count - first < f->per_block ? f->count - first : f->per_block;
		rc = f->fill(f->g, first, n, buf);
		if (!rc)
			rc = io_all(r->fd, buf, n * f->item, (int64_t)(f->off0 + first * f->item));
		if (rc) {
			atomic_store(&r->err, rc);
			break;
		}
		atomic_fetch_add(&r->done, n * f->item);
		if (draw && f->progress)
			f->progress("writing", atomic_load(&r->done), total, f->arg);
	}
}

static void *thread_main(void *arg)
{
	struct run *r = arg;
	uint8_t *buf = malloc(r->f->per_block * r->f->item);

	if (!buf)
		atomic_store(&r->err, -ENOMEM);
	else
		blocks(r, buf, false);
	free(buf);
	return NULL;
}

/* the threads, the caller one of them */
static int run_threads(struct run *r)
{
	pthread_t tid[GEN_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t nt = cpus > 0 ? (uint64_t)cpus : 1;
	unsigned i, started = 0;
	uint8_t *buf = malloc(r->f->per_block * r->f->item);

	if (!buf)
		return -ENOMEM;
	if (nt > GEN_THREADS)
		nt = GEN_THREADS;
	if (nt > r->nblocks)
		nt = r->nblocks ? r->nblocks : 1;
	for (i = 1; i < nt; i++)
		if (!pthread_create(&tid[started], NULL, thread_main, r))
			started++;
	blocks(r, buf, true);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	free(buf);
	return atomic_load(&r->err);
}

int gen_write(const struct gen_file *f, const char *out)
{
	struct run r = { .f = f };
	char tmp[4096];
	int rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	r.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (r.fd < 0)
		return -errno;
	r.nblocks = (f->count + f->per_block - 1) / f->per_block;
	if (f->off0)
		rc = io_all(r.fd, f->head, f->off0, 0);
	if (!rc)
		rc = run_threads(&r);
	if (!rc && ftruncate(r.fd, (off_t)(f->off0 + f->count * f->item)))
		rc = -errno;
	if (close(r.fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, out))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}
