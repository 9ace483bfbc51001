/*
 * fuzz_csv.c - fuzz target: the CSV input of `pems-run aggregate`
 * (algorithms/aggregate/aggregate.c, included for its static parser).
 *
 * Input: byte 0 picks --key/--value (defaults, column numbers, names,
 * out-of-range numbers); the rest is the file.  The header is read with
 * read_header() from a memfd, exactly as the job reads it, then every
 * following line goes through parse_row() as load_csv() hands them over
 * (empty lines and lone "\r" skipped).
 */
#include "../../algorithms/aggregate/aggregate.c"
#include "fuzz.h"

static const char *const key_sel[] = { NULL, "1", "2", "k", "300", "0" };
static const char *const val_sel[] = { NULL, "2", "1", "v", "x", "18446744073709551617" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pems_aggregate_job job;
	char path[32];
	const char *p, *end, *nl;
	int fd;

	if (size < 1)
		return 0;
	memset(&job, 0, sizeof(job));
	job.in_fmt = PEMS_AGG_IN_CSV;
	job.key_col = key_sel[data[0] % 6];
	job.value_col = val_sel[(data[0] / 6) % 6];
	fd = fuzz_memfd(data + 1, size - 1, path);
	if (fd < 0)
		return 0;
	job.in = path;
	memset(&S, 0, sizeof(S));
	S.job = &job;
	if (read_header() == 0) {
		p = (const char *)data + 1 + S.hdr_end;
		end = (const char *)data + size;
		for (; p < end; p = nl + 1) {
			struct agg_pair row;
			struct field tok = { NULL, 0 };
			unsigned col = 0, nf = 0;

			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl)
				nl = end;
			if (nl == p || (nl == p + 1 && *p == '\r'))
				continue;
			parse_row(p, (size_t)(nl - p), &row, &col, &nf, &tok);
		}
	}
	close(fd);
	return 0;
}
