/* fuzz_util.c - helpers of fuzz.h, linked into every target. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

int fuzz_argv(const uint8_t *data, size_t size, const char *prog, char **argv,
	      char **storage)
{
	char *s = malloc(size + 1), *p, *end;
	int argc = 0;

	*storage = s;
	argv[argc++] = (char *)prog;
	if (!s) {
		argv[argc] = NULL;
		return argc;
	}
	memcpy(s, data, size);
	s[size] = '\0';
	end = s + size;
	for (p = s; p < end && argc < FUZZ_MAX_ARGS - 1; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	return argc;
}

int fuzz_memfd(const uint8_t *data, size_t size, char *path)
{
	int fd = memfd_create("pems-fuzz", MFD_CLOEXEC);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	snprintf(path, 32, "/proc/self/fd/%d", fd);
	return fd;
}
