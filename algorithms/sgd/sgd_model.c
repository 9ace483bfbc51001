/*
 * sgd_model.c - the sgd model file (pems_algorithms.h): text, written
 * by `sgd --out` and by `gen --format dense|libsvm` as OUT.weights.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pems_algorithms.h"

/* The text is formatted in memory and written with pems_file_write, so
 * that a failing disk (and PEMS_IO_FAULT in tests) reaches it like any
 * other output of the runtime. */
int pems_sgd_model_write(const char *path, enum pems_sgd_model model,
			 uint32_t dim, const double *w)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	long long n;
	uint32_t j;
	int h, fd, rc = 0;

	if (!f)
		return -errno;
	fprintf(f, "pems-sgd-model 1\nmodel %s\ndim %u\nbias %.17g\n",
		model == PEMS_SGD_LOGISTIC ? "logistic" : "linear", dim, w[dim]);
	for (j = 0; j < dim; j++)
		fprintf(f, "%u %.17g\n", j + 1, w[j]);
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	h = pems_file_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (h < 0) {
		free(text);
		return h;
	}
	n = pems_file_write(h, text, len, 0);
	free(text);
	if (n < 0)
		rc = (int)n;
	else if ((size_t)n != len)
		rc = -EIO;	/* the disk stopped taking bytes */
	if (pems_file_close(h) && !rc)
		rc = -EIO;
	/* fsync applies to the file, whichever descriptor asks */
	fd = rc ? -1 : open(path, O_WRONLY | O_CLOEXEC);
	if (!rc && (fd < 0 || fsync(fd)))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	return rc;
}

int pems_sgd_model_read(const char *path, enum pems_sgd_model *model,
			uint32_t *dim, double **w)
{
	FILE *f = fopen(path, "r");
	char name[32];
	unsigned ver, d, j, ix;
	double b, x;
	double *m;

	if (!f)
		return -errno;
	if (fscanf(f, "pems-sgd-model %u model %31s dim %u bias %lf", &ver, name, &d, &b) != 4 ||
	    ver != 1 || d > (1u << 30)) {
		fclose(f);
		return -EINVAL;
	}
	/* each weight takes a line of at least 4 bytes ("j w\n"): a header
	 * promising more than the file holds must not allocate it
	 * (found by tests/fuzz/fuzz_records.c) */
	{
		struct stat st;

		if (fstat(fileno(f), &st) || (uint64_t)d > (uint64_t)st.st_size / 4) {
			fclose(f);
			return -EINVAL;
		}
	}
	m = calloc((size_t)d + 1, sizeof(*m));
	if (!m) {
		fclose(f);
		return -ENOMEM;
	}
	for (j = 0; j < d; j++) {
		if (fscanf(f, "%u %lf", &ix, &x) != 2 || ix != j + 1) {
			free(m);
			fclose(f);
			return -EINVAL;
		}
		m[j] = x;
	}
	m[d] = b;
	fclose(f);
	*model = strcmp(name, "logistic") ? PEMS_SGD_LINEAR : PEMS_SGD_LOGISTIC;
	*dim = d;
	*w = m;
	return 0;
}
