/*
 * gen_internal.h - the block writer every generator of gen/ uses.
 */
#ifndef PEMS_GEN_INTERNAL_H
#define PEMS_GEN_INTERNAL_H

#include "pems_gen.h"

#define GEN_BLOCK ((size_t)8 << 20)	/* bytes a thread makes at once */

/* A file of @count items of @item bytes from offset @off0 (a header of
 * @off0 bytes, @head, goes first), made @per_block items at a time by
 * @fill(@g, first, n, buf) (0 or -errno) on up to 8 threads. */
struct gen_file {
	uint64_t count;
	size_t item, per_block;
	const void *head;
	size_t off0;
	int (*fill)(const void *g, uint64_t first, size_t n, uint8_t *buf);
	const void *g;
	pems_gen_progress *progress;
	void *arg;
};

/* Write @f to <out>.tmp.<pid>, then rename it to @out.  0 or -errno. */
int gen_write(const struct gen_file *f, const char *out);

/* write(2) all of @p to @fd; 0 or -errno */
int gen_write_all(int fd, const void *p, size_t n);
/* @body(fd, @arg) writing <out>.tmp.<pid>, renamed to @out when it
 * returns 0, removed otherwise */
int gen_to_file(const char *out, int (*body)(int fd, void *arg), void *arg);

static inline uint64_t gen_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif
