/*
 * output.c - the output file of a job, written by every rank at offsets.
 *
 * All ranks write into <out>.pems-tmp and rank 0 renames it to <out> only
 * when every rank's part is on disk, so no failure leaves a partial file
 * under the final name (pems_remove_on_abort covers fatal errors and
 * signals).  Shared by every bundled algorithm.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pems_algorithms.h"

int pems_output_create(const char *who, const char *out, bool sized, uint64_t size,
		       char *tmp, size_t tmplen, int *handle)
{
	int fd, rc;

	snprintf(tmp, tmplen, "%s.pems-tmp", out);
	if (pems_rank() == 0 && !pems_resuming())
		unlink(tmp);	/* a stale one from a killed run (kept on resume:
				 * it holds what the run wrote before its checkpoint) */
	pems_rank_barrier();
	/* the same name on every rank; each sizes it (idempotent), so no
	 * rank needs to wait for another */
	fd = open(tmp, O_WRONLY | O_CREAT, 0644);
	if (fd < 0 || (sized && ftruncate(fd, (off_t)size))) {
		rc = -errno;
		fprintf(stderr, "pems: error: %s: cannot create %s: %s\n", who, tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		unlink(tmp);
		return rc;
	}
	close(fd);
	pems_remove_on_abort(tmp);
	*handle = pems_file_open(tmp, O_RDWR, 0);
	if (*handle < 0) {
		rc = *handle;
		unlink(tmp);
		pems_remove_on_abort(NULL);
		return rc;
	}
	return 0;
}

int pems_output_commit(const char *out, const char *tmp, int handle, int rc,
		       bool truncate, uint64_t size)
{
	int fd;

	pems_file_close(handle);
	if (!rc) {
		fd = open(tmp, O_RDWR);
		if (fd < 0 || (truncate && pems_rank() == 0 && ftruncate(fd, (off_t)size)) ||
		    fsync(fd))
			rc = -errno;
		if (fd >= 0)
			close(fd);
	}
	pems_rank_barrier();	/* every rank's part is on disk */
	if (!rc && pems_rank() == 0 && rename(tmp, out))
		rc = -errno;
	pems_rank_barrier();
	if (rc)
		unlink(tmp);
	pems_remove_on_abort(NULL);
	return rc;
}
