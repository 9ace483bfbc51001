/*
 * fuzz_records.c - fuzz target: record files as pems-run reads them
 * back: the record scanner of `verify` (pems_record_scan, the formats
 * module) over u64, rec100 and ascii100 data, and the sgd model file
 * written by `gen --format dense|libsvm` and `sgd --out`
 * (pems_sgd_model_read, from a memfd like a real file).
 *
 * Input: byte 0 picks the reader (and, for records, where the bytes
 * are cut in two feeds, so a record split across reads is exercised);
 * the rest is the file.
 */
#include <stdlib.h>
#include <unistd.h>
#include "pems_algorithms.h"
#include "fuzz.h"

static void scan(enum pems_format fmt, const uint8_t *data, size_t size, size_t cut)
{
	struct pems_record_scan s;
	long first, rest;

	pems_record_scan_init(&s, pems_format_get(fmt), true);
	if (cut > size)
		cut = size;
	first = pems_record_scan(&s, data, cut);
	if (first >= 0) {
		if ((size_t)first > cut)
			abort();
		rest = pems_record_scan(&s, data + first, size - (size_t)first);
		/* whole records taken, every one counted */
		if (rest >= 0 && s.records * s.f->size != (uint64_t)(first + rest))
			abort();
	}
	pems_record_scan_free(&s);
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
	if (data[0] % 4 < 3) {
		scan(fmts[data[0] % 4], data + 1, size - 1, (size_t)(data[0] / 4) * 7);
		return 0;
	}
	fd = fuzz_memfd(data + 1, size - 1, path);
	if (fd < 0)
		return 0;
	{
		enum pems_sgd_model model;
		uint32_t dim;
		double *w = NULL;

		if (pems_sgd_model_read(path, &model, &dim, &w) == 0)
			free(w);
	}
	close(fd);
	return 0;
}
