/*
 * file.c - parallel file I/O straight into and out of context memory
 * (include/pems.h): the API over the runtime's file service
 * (pems/fileio.c), which owns the handles and drives the worker's I/O
 * engine.
 */
#include <errno.h>

#include "pems_rt.h"

PEMS_API int pems_file_open(const char *path, int flags, int mode)
{
	return pems_fio_open(path, flags, mode);
}

PEMS_API int pems_file_close(int h)
{
	return pems_fio_close(h);
}

PEMS_API long long pems_file_read(int h, void *buf, size_t len, uint64_t off)
{
	return pems_fio_rw(h, false, buf, len, off);
}

PEMS_API long long pems_file_write(int h, const void *buf, size_t len, uint64_t off)
{
	return pems_fio_rw(h, true, (void *)buf, len, off);
}

PEMS_API int pems_file_start(int h, bool write, void *buf, size_t len, uint64_t off,
			     struct pems_file_aio *aio)
{
	return pems_fio_start(h, write, buf, len, off, aio);
}

PEMS_API long long pems_file_wait(struct pems_file_aio *aio)
{
	if (!aio->state)
		return -EINVAL;
	if (pems_fio_foreign(aio))
		bsp_abort("pems_file_wait: the transfer was started on another worker (waited for after a bsp_sync?)");
	return pems_fio_wait(aio);
}

PEMS_API long long pems_file_read_pieces(int h, void *out, const uint64_t *offs, size_t n,
					 size_t len)
{
	return pems_fio_read_pieces(h, out, offs, n, len);
}
