/*
 * pems_text.h - text records (lines, CSV rows, fixed-size binary records
 * with a key range) and their keys, compared like GNU sort under
 * LC_ALL=C (layer algorithms/formats/, not installed).
 *
 * Pure functions of memory: the CLI, the sort and the tests call the
 * same code.  A record is @len bytes WITHOUT its terminator ('\n', or
 * '\0' with -z; a CSV row's '\r' of CRLF stays in it).
 */
#ifndef PEMS_TEXT_H
#define PEMS_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PEMS_TKEY_MAX 32	/* -k / --key options of one sort */

enum pems_text_kind { PEMS_TEXT_LINES, PEMS_TEXT_CSV, PEMS_TEXT_FIXED };

/* How a key compares (GNU sort's ordering letters). */
enum pems_tkey_type {
	PEMS_TK_TEXT,		/* bytes (memcmp), optionally folded / filtered */
	PEMS_TK_NUM,		/* -n: leading decimal number, no exponent */
	PEMS_TK_GEN,		/* -g: strtold; non-numbers first, then NaN */
	PEMS_TK_VER,		/* -V: version order (gnulib filevercmp) */
};

enum pems_tkey_ignore { PEMS_TK_KEEP, PEMS_TK_NONPRINT, PEMS_TK_NONDICT };

/*
 * One key.  Lines: GNU's field positions, 0-based: the key starts at
 * character schar of field sword (SIZE_MAX: at the line start) and ends
 * after character echar of field eword (echar 0: at the field's end;
 * eword SIZE_MAX: at the line end).  CSV: column col (0-based), the
 * field's value with its quotes removed.
 */
struct pems_tkey {
	size_t sword, schar, eword, echar;
	unsigned col;
	enum pems_tkey_type type;
	unsigned types;			/* letters seen: 1 n, 2 g, 4 V */
	enum pems_tkey_ignore ignore;
	bool skipsblanks, skipeblanks;	/* b on POS1 / POS2 */
	bool fold;			/* f: lower case as upper */
	bool reverse;			/* r */
	bool any_flag;			/* some ordering letter was given */
};

/* A sort's record format and key list (fill with pems_textspec_init,
 * the option setters, then pems_textspec_finish). */
struct pems_textspec {
	enum pems_text_kind kind;
	uint8_t eol;		/* lines: '\n', or '\0' (-z); CSV: '\n' */
	int tab;		/* -t byte, or -1: fields are separated by blanks */
	uint8_t sep;		/* CSV delimiter (',') */
	bool header;		/* CSV: the first row is a header, kept first */
	size_t rec_size;	/* FIXED: bytes per record */
	size_t key_off, key_len;	/* FIXED: the key bytes (memcmp order) */
	bool stable, unique;	/* -s, -u */
	bool reverse;		/* -r: reverses the last-resort comparison too */
	struct pems_tkey gkey;	/* the global ordering options */
	unsigned nkeys;
	struct pems_tkey key[PEMS_TKEY_MAX];
	bool no_prefix;		/* the first key has no cheap prefix */
};

void pems_textspec_init(struct pems_textspec *ts, enum pems_text_kind kind);
/* A global ordering letter (one of "bdfgiMnrV" GNU sort knows; pems
 * takes b d f g i n r V).  Returns 0 or -EINVAL with why in @err. */
int pems_textspec_flag(struct pems_textspec *ts, char flag, char *err, size_t errlen);
/* -t SEP: one byte, or "\0".  Returns 0 or -EINVAL with why in @err. */
int pems_textspec_tab(struct pems_textspec *ts, const char *arg, char *err, size_t errlen);
/* -k POS1[,POS2] (GNU syntax F[.C][OPTS]).  Returns 0 or -EINVAL with
 * GNU's reason in @err. */
int pems_textspec_key(struct pems_textspec *ts, const char *arg, char *err, size_t errlen);
/* CSV --key COL[:TYPE][:DIR] with COL a 1-based number or a header name
 * (@hdr, @hdrlen: the header row without its newline; NULL: numbers
 * only), TYPE text|num, DIR asc|desc.  Returns 0 or -EINVAL with why. */
int pems_textspec_csv_key(struct pems_textspec *ts, const char *arg, const uint8_t *hdr,
			  size_t hdrlen, char *err, size_t errlen);
/* Keys without ordering letters take the global ones (GNU's rule);
 * checks incompatible letters.  Returns 0 or -EINVAL with why. */
int pems_textspec_finish(struct pems_textspec *ts, char *err, size_t errlen);

/*
 * Order of two records: the keys in turn, then (unless -s or -u, and
 * never for CSV and fixed records) GNU's last resort, the whole records
 * as bytes, reversed by -r.  0: equal for -u (and for the stable order,
 * which the caller breaks by input position).
 */
int pems_text_cmp(const struct pems_textspec *ts, const uint8_t *a, size_t alen,
		  const uint8_t *b, size_t blen);
/* A 64-bit prefix of the order: prefix(a) < prefix(b) implies a < b;
 * equal prefixes say nothing.  0 for every record when ts->no_prefix. */
uint64_t pems_text_prefix(const struct pems_textspec *ts, const uint8_t *r, size_t len);

/*
 * Framing.  pems_text_frame: the length of the record starting at @p
 * (its bytes plus its terminator) among @avail bytes, for records that
 * start at a record boundary.  0 when it does not end within @avail
 * (at the end of the input: the last record has no terminator, or a CSV
 * quote is open; *open_quote says which).  CSV: a newline inside quotes
 * belongs to the field.
 */
size_t pems_text_frame(const struct pems_textspec *ts, const uint8_t *p, size_t avail,
		       bool *open_quote);
/* Bytes of the terminator of a framed record of @rlen bytes at @p (1,
 * or 0 for fixed records). */
static inline size_t pems_text_term(const struct pems_textspec *ts)
{
	return ts->kind == PEMS_TEXT_FIXED ? 0 : 1;
}

/* CSV: the fields of the row @p, @len (no newline).  Returns the number
 * of fields, or -1 when a quote is not closed or a closing quote is not
 * followed by the delimiter (*bad: that field, 1-based). */
int pems_csv_count(const struct pems_textspec *ts, const uint8_t *p, size_t len, unsigned *bad);

/* Pieces shared by textkey.c and textcsv.c: -g order and prefix of
 * [p, e), the first 8 bytes of [p, e) big-endian (0-padded, folded to
 * upper case with @fold), the CSV order and prefix. */
int pems_text_gen_cmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be);
uint64_t pems_text_gen_prefix(const uint8_t *p, const uint8_t *e);
uint64_t pems_text_bytes_prefix(const uint8_t *p, const uint8_t *e, bool fold);
int pems_csv_cmp(const struct pems_textspec *ts, const uint8_t *a, size_t alen,
		 const uint8_t *b, size_t blen);
uint64_t pems_csv_prefix(const struct pems_textspec *ts, const uint8_t *r, size_t len);

#endif
