/*
 * replay.c - run a fuzz target over stored inputs without libFuzzer.
 *
 *   replay-TARGET DIR|FILE...
 *
 * Feeds every regular file (a directory's files in name order) to
 * LLVMFuzzerTestOneInput, the same entry libFuzzer calls, so the corpus
 * of tests/fuzz/corpus/TARGET/, crash reproducers included, is rerun by
 * `make check` with any compiler and sanitizer.  Exit status 0 after
 * "replay: N inputs" on stdout; 1 if an argument cannot be read or no
 * input was found (a missing corpus must not pass as an empty one).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0, n;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 4096);

			if (!nb) {
				fclose(f);
				free(buf);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	/* libFuzzer hands over a buffer of exactly the input's size */
	{
		uint8_t *exact = malloc(len ? len : 1);

		if (!exact) {
			free(buf);
			return -1;
		}
		memcpy(exact, buf, len);
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, unsigned long *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*names));

			if (!nn) {
				rc = -1;
				break;
			}
			names = nn;
		}
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!rc && !stat(path, &st) && S_ISREG(st.st_mode)) {
			if (run_file(path))
				rc = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	int i;

	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : run_file(argv[i]))
			return 1;
		if (!S_ISDIR(st.st_mode))
			count++;
	}
	if (!count) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	printf("replay: %lu inputs\n", count);
	return 0;
}
