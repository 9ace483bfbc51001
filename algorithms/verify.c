/*
 * verify.c - the check behind `pems-run verify`: a file is sorted and,
 * with an input, holds the same records (count and an order-independent
 * checksum: sum and xor of a 64-bit hash per record, like valsort).
 * Streams in VERIFY_BLOCK buffers; the input is scanned by a second
 * thread at the same time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pems_algorithms.h"

#define VERIFY_BLOCK ((size_t)8 << 20)


static int read_full(int fd, uint8_t *buf, size_t len, size_t *got)
{
	ssize_t n;

	*got = 0;
	while (*got < len) {
		n = read(fd, buf + *got, len - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		*got += (size_t)n;
	}
	return 0;
}

static int scan_fd(struct pems_verify *s, int fd, uint8_t *buf)
{
	size_t per = VERIFY_BLOCK / s->rsz, got;
	long taken;
	int rc;

	for (;;) {
		rc = read_full(fd, buf, per * s->rsz, &got);
		if (rc)
			return rc;
		if (got % s->rsz) {	/* the file grew or shrank meanwhile */
			s->bad_size = true;
			return 0;
		}
		taken = pems_record_scan(&s->rs, buf, got);
		if (taken == -ENOMEM)
			return -ENOMEM;
		if (taken < 0 || got < per * s->rsz)
			return 0;
		if (atomic_load(s->stop))
			return 0;
		if (s->progress)
			s->progress("reading", s->rs.records * s->rsz, s->size, s->progress_arg);
	}
}

/* Scan s->path; failures are recorded in *s, reported by report_scan. */
static void scan_file(struct pems_verify *s)
{
	struct stat st;
	uint8_t *buf;
	int fd;

	fd = open(s->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);	/* a FIFO must not hang */
	if (fd < 0) {
		s->err = -errno;
		return;
	}
	if (fstat(fd, &st)) {
		s->err = -errno;
		goto out_close;
	}
	s->kind = pems_input_kind(st.st_mode);
	if (s->kind)
		goto out_close;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	s->size = (uint64_t)st.st_size;
	if (s->size % s->rsz) {
		s->bad_size = true;
		goto out_close;
	}
	buf = malloc(VERIFY_BLOCK);
	if (!buf) {
		s->err = -ENOMEM;
		goto out_close;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	s->err = scan_fd(s, fd, buf);
	free(buf);
out_close:
	close(fd);
}

static void *scan_thread(void *arg)
{
	scan_file(arg);
	return NULL;
}

/* Message for a failed scan; returns true when there was one. */
static bool report_scan(pems_say_fn say, const struct pems_verify *s)
{
	if (s->kind)
		say("verify: %s is %s; verify reads a regular file: save the data to a file first",
			  s->path, s->kind);
	else if (s->err)
		say("verify: %s: %s", s->path, strerror(-s->err));
	else if (s->bad_size)
		say("verify: %s: size %llu bytes is not a multiple of the %zu-byte %s record",
			  s->path, (unsigned long long)s->size, s->rsz, s->f->name);
	else if (s->rs.malformed)
		say("verify: %s: record %llu is not a 100-byte line (byte 99 is not a newline)",
			  s->path, (unsigned long long)s->rs.bad);
	else if (s->rs.unsorted)
		say("verify: %s: not sorted: record %llu is smaller than record %llu",
			  s->path, (unsigned long long)s->rs.bad,
			  (unsigned long long)s->rs.bad - 1);
	else
		return false;
	return true;
}

/* Compare FILE's records with INPUT's; 0 or -EINVAL (said). */
static int compare(pems_say_fn say, const struct pems_verify *f, const struct pems_verify *in)
{
	if (f->rs.records != in->rs.records) {
		say("verify: %s: %llu records but input %s has %llu",
			  f->path, (unsigned long long)f->rs.records, in->path,
			  (unsigned long long)in->rs.records);
		return -EINVAL;
	}
	if (f->rs.sum != in->rs.sum || f->rs.xor != in->rs.xor) {
		say("verify: %s: checksum 0x%016llx%016llx differs from input %s's 0x%016llx%016llx (records lost, duplicated or changed)",
			  f->path, (unsigned long long)f->rs.sum,
			  (unsigned long long)f->rs.xor, in->path,
			  (unsigned long long)in->rs.sum,
			  (unsigned long long)in->rs.xor);
		return -EINVAL;
	}
	return 0;
}

int pems_verify(pems_say_fn say, struct pems_verify *f, struct pems_verify *in)
{
	pthread_t tid;
	bool threaded = false;
	int rc = 0;

	if (in->path) {
		threaded = !pthread_create(&tid, NULL, scan_thread, in);
		if (!threaded)
			scan_file(in);
	}
	scan_file(f);
	if (f->progress_end)
		f->progress_end(f->progress_arg);
	if (report_scan(say, f)) {
		atomic_store(f->stop, true);
		rc = -EINVAL;
	}
	if (threaded)
		pthread_join(tid, NULL);
	if (rc)
		return rc;
	if (in->path && report_scan(say, in))
		return -EINVAL;
	if (in->path)
		rc = compare(say, f, in);
	return rc;
}
