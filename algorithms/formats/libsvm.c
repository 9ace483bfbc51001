/*
 * libsvm.c - one LIBSVM line: "label idx:val idx:val ... [# comment]",
 * fields separated by blanks (space, tab, '\r'), indices 1-based,
 * "qid:N" fields skipped.  Tokens are copied into a small buffer for
 * strtod/strtoull (the line is not NUL-terminated).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/pems_formats.h"

#define TOKEN_MAX 64

static bool is_blank(int c) { return c == ' ' || c == '\t' || c == '\r'; }

static int parse_label(const char *tmp, struct pems_libsvm_row *r, char *err, size_t errlen)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(tmp, &end);
	if (end == tmp || *end || errno == ERANGE) {
		snprintf(err, errlen, "bad label '%s'", tmp);
		return -1;
	}
	if (!isfinite(v)) {
		snprintf(err, errlen, "the label is %s", tmp);
		return -1;
	}
	r->y = v;
	return 0;
}

/* "idx:val" (NUL-terminated in @tmp) as feature r->nnz */
static int parse_feature(const char *tmp, uint32_t dim, struct pems_libsvm_row *r,
			 char *err, size_t errlen)
{
	unsigned long long ix;
	const char *t;
	char *end;
	double v;

	errno = 0;
	ix = strtoull(tmp, &end, 10);
	if (end == tmp || *end != ':' || errno || tmp[0] == '-') {
		snprintf(err, errlen, "bad feature '%s' (expected index:value)", tmp);
		return -1;
	}
	if (ix < 1 || ix > dim) {
		snprintf(err, errlen, "feature index %llu is out of range 1..%u; raise --dim",
			 ix, dim);
		return -1;
	}
	t = end + 1;
	errno = 0;
	v = strtod(t, &end);
	if (end == t || *end) {
		snprintf(err, errlen, "bad value in '%s'", tmp);
		return -1;
	}
	if (!isfinite(v)) {
		snprintf(err, errlen, "feature %llu is %s", ix, t);
		return -1;
	}
	if (r->nnz >= dim) {
		snprintf(err, errlen, "more than --dim %u features on one line", dim);
		return -1;
	}
	r->idx[r->nnz] = (uint32_t)(ix - 1);
	r->val[r->nnz++] = v;
	return 0;
}

int pems_libsvm_parse(const char *p, const char *e, uint32_t dim, struct pems_libsvm_row *r,
		      char *err, size_t errlen)
{
	char tmp[TOKEN_MAX];
	const char *t;
	size_t len;
	int field = 0;

	r->nnz = 0;
	while (p < e) {
		while (p < e && is_blank(*p))
			p++;
		if (p >= e || *p == '#')
			break;
		t = p;
		while (p < e && !is_blank(*p))
			p++;
		len = (size_t)(p - t);
		if (len >= sizeof(tmp)) {
			snprintf(err, errlen, "token '%.20s...' is too long", t);
			return -1;
		}
		memcpy(tmp, t, len);
		tmp[len] = '\0';
		if (field++ == 0) {
			if (parse_label(tmp, r, err, errlen))
				return -1;
			continue;
		}
		if (!strncmp(tmp, "qid:", 4))
			continue;
		if (parse_feature(tmp, dim, r, err, errlen))
			return -1;
	}
	if (!field) {
		r->nnz = 0;
		return 0;	/* blank or comment line */
	}
	return 1;
}
