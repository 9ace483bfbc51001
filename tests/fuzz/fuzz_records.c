/*
 * fuzz_records.c - fuzz target: record files as pems-run reads them
 * back: `verify` (cli/verify.c, included for its static scanner) over
 * u64, rec100 and ascii100 data, and the sgd model file written by
 * `gen --format dense|libsvm` and `sgd --out` (pems_sgd_model_read).
 *
 * Input: byte 0 picks the reader; the rest is the file, read from a
 * memfd through the same code as a real file.
 */
#include "../../cli/verify.c"
#include "fuzz.h"

static void scan(enum pems_format fmt, int fd)
{
	struct scan s = { 0 };
	atomic_bool stop = false;
	uint8_t *buf = malloc(CLI_IO_BLOCK);

	if (!buf)
		return;
	s.fmt = fmt;
	s.rsz = pems_format_size(fmt);
	s.check_order = true;
	s.stop = &stop;
	scan_fd(&s, fd, buf);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum pems_format fmts[] = {
		PEMS_FMT_U64, PEMS_FMT_REC100, PEMS_FMT_ASCII100,
	};
	char path[32];
	int fd;

	if (size < 1)
		return 0;
	fd = fuzz_memfd(data + 1, size - 1, path);
	if (fd < 0)
		return 0;
	if (data[0] % 4 < 3) {
		scan(fmts[data[0] % 4], fd);
	} else {
		enum pems_sgd_model model;
		uint32_t dim;
		double *w = NULL;

		if (pems_sgd_model_read(path, &model, &dim, &w) == 0)
			free(w);
	}
	close(fd);
	return 0;
}
