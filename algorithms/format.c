/*
 * format.c - record formats understood by the bundled algorithms.
 */
#include <errno.h>
#include <string.h>
#include "pems_algorithms.h"

static const struct {
	const char *name;
	enum pems_format fmt;
	size_t size;
} formats[] = {
	{ "u64", PEMS_FMT_U64, 8 },
	{ "rec100", PEMS_FMT_REC100, 100 },
	{ "ascii100", PEMS_FMT_ASCII100, 100 },
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

size_t pems_format_size(enum pems_format fmt)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++)
		if (formats[i].fmt == fmt)
			return formats[i].size;
	return 0;
}

int pems_format_parse(const char *name, enum pems_format *out)
{
	size_t i;

	if (!name)
		return -EINVAL;
	for (i = 0; i < NFORMATS; i++) {
		if (strcmp(formats[i].name, name) == 0) {
			*out = formats[i].fmt;
			return 0;
		}
	}
	return -EINVAL;
}
