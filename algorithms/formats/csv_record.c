/*
 * csv_record.c - one CSV record into fields (RFC 4180: fields optionally
 * in double quotes, "" for a quote inside, newlines allowed inside
 * quotes; records end with LF or CRLF; any one-byte delimiter), for
 * readers that walk a buffer record by record (pems_csv_groupby).
 *
 * The common record holds no quote: one memchr for its end, one byte
 * loop for its fields.  A record with a quote goes through a slower loop
 * that may run over several lines.
 */
#include <string.h>

#include "formats/pems_formats.h"

/* A record without quotes, split in one pass over its bytes (fields are
 * short: a byte loop beats a memchr call per field).  Returns -2 at the
 * first quote: the caller takes the quoted path. */
static long plain(const char *s, const char *nl, size_t end, char delim, struct pems_csv_field *f,
		  unsigned maxf, unsigned *nf)
{
	size_t len = nl ? (size_t)(nl - s) : end, i, b = 0;
	unsigned n = 0;

	if (len && s[len - 1] == '\r')
		len--;
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == '"')
			return -2;
		if (c != delim)
			continue;
		if (n < maxf) {
			f[n].p = s + b;
			f[n].len = i - b;
		}
		n++;
		b = i + 1;
	}
	if (n < maxf) {
		f[n].p = s + b;
		f[n].len = len - b;
	}
	*nf = n + 1;
	return nl ? (long)(nl - s) + 1 : (long)end;
}

/* a quoted field at s[i] == '"': returns the index after the closing
 * quote, or 0 (unterminated before @end); *esc when it holds "" */
static size_t quoted_end(const char *s, size_t i, size_t end, bool *esc, unsigned *lines)
{
	*esc = false;
	for (i++; i < end; i++) {
		if (s[i] == '\n')
			(*lines)++;
		if (s[i] != '"')
			continue;
		if (i + 1 < end && s[i + 1] == '"') {
			*esc = true;
			i++;
			continue;
		}
		return i + 1;
	}
	return 0;
}

long pems_csv_record(const char *s, size_t end, bool last, char delim, struct pems_csv_field *f,
	       unsigned maxf, unsigned *nf, char *scratch, unsigned *lines,
	       enum pems_csv_rec_err *err, unsigned *bad_field)
{
	const char *nl = memchr(s, '\n', end);
	size_t i = 0, sc = 0;
	unsigned n = 0;

	*lines = 0;
	*err = PEMS_CSV_REC_OK;
	if (!nl && !last)
		return 0;
	if (delim != '"') {
		long r = plain(s, nl, end, delim, f, maxf, nf);

		if (r != -2)
			return r;
	}
	for (;;) {
		struct pems_csv_field cur = { s + i, 0 };
		size_t j;

		if (i < end && s[i] == '"') {
			bool esc;

			j = quoted_end(s, i, end, &esc, lines);
			if (!j || (j >= end && !last)) {
				if (!last)
					return 0;	/* the record continues past @end */
				*err = PEMS_CSV_REC_OPEN;
				*bad_field = n + 1;
				return -1;
			}
			cur.p = s + i + 1;
			cur.len = j - i - 2;
			if (esc) {	/* drop the doubled quotes into scratch */
				size_t k, o = sc;

				for (k = i + 1; k < j - 1; k++) {
					scratch[o++] = s[k];
					if (s[k] == '"')
						k++;
				}
				cur.p = scratch + sc;
				cur.len = o - sc;
				sc = o;
			}
			if (j < end && s[j] == '\r' && j + 1 < end && s[j + 1] == '\n')
				j++;
			if (j < end && s[j] != delim && s[j] != '\n') {
				*err = PEMS_CSV_REC_TEXT;
				*bad_field = n + 1;
				return -1;
			}
		} else {
			j = i;
			while (j < end && s[j] != delim && s[j] != '\n')
				j++;
			if (j == end && !last)
				return 0;
			cur.len = j - i - (size_t)(j > i && s[j - 1] == '\r' && (j == end || s[j] == '\n'));
		}
		if (n < maxf)
			f[n] = cur;
		n++;
		if (j >= end || s[j] == '\n') {
			*nf = n;
			return (long)(j < end ? j + 1 : end);
		}
		i = j + 1;
	}
}
