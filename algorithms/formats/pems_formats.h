/*
 * pems_formats.h - the data formats of the bundled algorithms (layer
 * algorithms/formats/, not installed): record formats and their keys,
 * the CSV and LIBSVM text parsers, the sgd model file.
 *
 * Everything here but the model file is a pure function of memory: no
 * I/O, no runtime call, so the CLI, the algorithms and the fuzz targets
 * call the same code.  A record is a pointer and a length
 * (struct pems_record): the built-in formats have a fixed size, a
 * variable-length format frames its records with ->frame.
 */
#ifndef PEMS_FORMATS_H
#define PEMS_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- record formats (record.c) ---- */

enum pems_format { PEMS_FMT_U64 = 0, PEMS_FMT_REC100 = 1, PEMS_FMT_ASCII100 = 2 };

/* One record: @len bytes at @p (not owned). */
struct pems_record {
	const uint8_t *p;
	size_t len;
};

/* An order-preserving key prefix: key(a) < key(b) implies (hi, lo) of a
 * <= (hi, lo) of b, compared as unsigned integers.  For a format with
 * exact_prefix the prefixes decide the order alone. */
struct pems_key {
	uint64_t hi, lo;
};

/*
 * A record format.  The built-ins are static tables (pems_format_get);
 * a format with parameters (a key spec, a record size) is a copy of a
 * template with ->param set, owned by whoever made it.  Callbacks are
 * pure and may run on any thread.
 */
struct pems_record_format {
	const char *name;	/* --format NAME */
	enum pems_format id;
	size_t size;		/* bytes per record; 0: variable (->frame) */
	size_t key_size;	/* bytes of the key as stored (u64 8, rec100 10, ascii100 14) */
	bool exact_prefix;	/* ->prefix orders completely: no ->cmp needed */
	bool sortable;		/* pems_sort takes it */
	/* Length of the record starting at @p of the @avail bytes there;
	 * 0: incomplete (needs more bytes).  NULL for fixed-size formats. */
	size_t (*frame)(const struct pems_record_format *f, const uint8_t *p, size_t avail);
	/* Key order: <0, 0 or >0. */
	int (*cmp)(const struct pems_record_format *f, struct pems_record a,
		   struct pems_record b);
	void (*prefix)(const struct pems_record_format *f, struct pems_record r,
		       struct pems_key *k);
	/* Well-formed (ascii100: ends in '\n'); NULL: every record is. */
	bool (*valid)(const struct pems_record_format *f, struct pems_record r);
	/* Test data: the record with key @k (hi and the low 16 bits of lo),
	 * sequence number @index and filler from @fill into @out (->size
	 * bytes); NULL when the format has no generator. */
	void (*encode)(const struct pems_record_format *f, const struct pems_key *k,
		       uint64_t index, uint64_t fill, uint8_t *out);
	const void *param;	/* the format's parameters, NULL for the built-ins */
};

/* The built-in format @fmt; NULL for an unknown value. */
const struct pems_record_format *pems_format_get(enum pems_format fmt);
/* The format called @name ("u64", "rec100", "ascii100"); NULL if none. */
const struct pems_record_format *pems_format_find(const char *name);
/* Names of the formats, for messages: "u64, rec100 or ascii100". */
const char *pems_format_names(void);
/* Record size in bytes of @fmt (8, 100, 100); 0 for an unknown value. */
size_t pems_format_size(enum pems_format fmt);
/* Parse "u64", "rec100", "ascii100"; returns 0 or -EINVAL. */
int pems_format_parse(const char *name, enum pems_format *out);
/* Name of @fmt ("?" for an unknown value). */
const char *pems_format_name(enum pems_format fmt);

/*
 * The key layouts, written once (the sort's hot loops inline them):
 *   u64      the record is the key, a native-endian unsigned integer
 *   rec100   bytes 0..9, compared as unsigned bytes: hi = bytes 0..7
 *            big-endian, lo = bytes 8..9 big-endian
 *   ascii100 bytes 0..13 compared as unsigned bytes (prefix: bytes
 *            0..7 and 8..13 big-endian)
 */
#define PEMS_REC100_KEY 10
#define PEMS_ASCII100_KEY 14

static inline uint64_t pems_load_be64(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

static inline void pems_key_u64(const uint8_t *r, struct pems_key *k)
{
	memcpy(&k->hi, r, 8);
	k->lo = 0;
}

static inline void pems_key_rec100(const uint8_t *r, struct pems_key *k)
{
	k->hi = pems_load_be64(r);
	k->lo = (uint64_t)r[8] << 8 | r[9];
}

static inline int pems_key_cmp(const struct pems_key *a, const struct pems_key *b)
{
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* Key order of two records of @f (fixed size: ->size bytes each). */
int pems_record_cmp(const struct pems_record_format *f, const uint8_t *a, const uint8_t *b);
/* 64-bit hash of one record, for order-independent checksums. */
uint64_t pems_record_hash(const uint8_t *rec, size_t len);

/*
 * Checking a stream of records (pems-run verify): order, well-formedness
 * and an order-independent checksum (sum and xor of the record hashes,
 * like valsort).  Feed it the bytes in any pieces.
 */
struct pems_record_scan {
	const struct pems_record_format *f;
	bool check_order;
	uint64_t records, sum, xor;
	bool unsorted, malformed;	/* then bad is the record's index */
	uint64_t bad;
	uint8_t *prev;		/* the last record (check_order), owned */
	size_t prev_len, prev_cap;
};

void pems_record_scan_init(struct pems_record_scan *s, const struct pems_record_format *f,
			   bool check_order);
/* Scan the whole records of @buf (@len bytes); returns the bytes taken
 * (a partial record at the end is left for the next call, with its
 * bytes in front), or -1 at the first bad record (s->unsorted or
 * s->malformed set) or -ENOMEM. */
long pems_record_scan(struct pems_record_scan *s, const uint8_t *buf, size_t len);
void pems_record_scan_free(struct pems_record_scan *s);

/* ---- CSV (csv.c): RFC 4180 fields, no newlines inside quotes ---- */

#define PEMS_CSV_MAX_COLS 256

struct pems_csv_field {
	const char *p;		/* into the line; quoted: between the quotes, "" kept */
	size_t len;
};

/* Split one line (without its '\n'; a trailing '\r' is dropped) into up
 * to @maxf fields; *nf_total gets the number of fields on the line.
 * Returns the fields stored, or -1 on a malformed quoted field, *bad
 * being its 1-based column. */
int pems_csv_split(const char *s, size_t len, struct pems_csv_field *f, unsigned maxf,
		   unsigned *nf_total, unsigned *bad);
/* Decimal integers, the whole field, no spaces; false when not one or
 * out of range.  i64 takes a sign. */
bool pems_parse_u64(const char *p, size_t len, uint64_t *out);
bool pems_parse_i64(const char *p, size_t len, int64_t *out);

/* A CSV table of (u64 key, i64 value) rows: which columns, how many. */
struct pems_csv_kv {
	unsigned key_col, val_col, ncols;	/* 0-based; ncols of the header */
};

enum pems_csv_err {
	PEMS_CSV_OK, PEMS_CSV_FEW, PEMS_CSV_MANY, PEMS_CSV_QUOTE, PEMS_CSV_KEY,
	PEMS_CSV_VALUE,
};

/* Read the header line @s (@len bytes, no '\n') and find the key and
 * value columns @key_col / @val_col (a header name or a 1-based index;
 * NULL: "key" / "value").  Returns 0, or -EINVAL with why in @err
 * ("line 1: ..." or "no key column 'x' in the header (line 1)"). */
int pems_csv_kv_header(struct pems_csv_kv *c, const char *s, size_t len,
		       const char *key_col, const char *val_col, char *err, size_t errlen);
/* Parse one data line into *key, *val.  Returns PEMS_CSV_OK or the
 * error, with *col (1-based), *nf (fields seen) and *tok (the bad field). */
int pems_csv_kv_row(const struct pems_csv_kv *c, const char *s, size_t len, uint64_t *key,
		    int64_t *val, unsigned *col, unsigned *nf, struct pems_csv_field *tok);

/* ---- CSV records (csv_record.c): any one-byte delimiter, quoted fields
 * may hold newlines, "" unquoted into a scratch copy ---- */

enum pems_csv_rec_err { PEMS_CSV_REC_OK = 0, PEMS_CSV_REC_OPEN, PEMS_CSV_REC_TEXT };

/* One record at s[0..end): fields into @f (at most @maxf kept; *nf gets
 * the count of all of them); a quoted field holding "" is unquoted into
 * @scratch (room: the record's bytes), others point into @s.  Returns
 * the bytes of the record with its newline (LF or CRLF), 0 when it is
 * incomplete (no end before @end and not @last: call again with more
 * bytes), or -1 on a malformed quoted field (*err: not closed before
 * the end of the input, or text after the closing quote; *bad_field
 * 1-based).  *lines: newlines inside quoted fields. */
long pems_csv_record(const char *s, size_t end, bool last, char delim,
		     struct pems_csv_field *f, unsigned maxf, unsigned *nf, char *scratch,
		     unsigned *lines, enum pems_csv_rec_err *err, unsigned *bad_field);

/* ---- LIBSVM (libsvm.c): "label idx:val ... [# comment]" ---- */

struct pems_libsvm_row {
	double y;
	uint32_t *idx;		/* 0-based feature indices, caller's array of dim */
	double *val;		/* caller's array of dim */
	size_t nnz;
};

/* Parse the line [p, e) with features 1..@dim into @r (r->idx and
 * r->val set by the caller).  Returns 1 (a row), 0 (blank or comment)
 * or -1 with why in @err. */
int pems_libsvm_parse(const char *p, const char *e, uint32_t dim, struct pems_libsvm_row *r,
		      char *err, size_t errlen);

/* ---- text records and GNU sort's keys (textkey.c, textcsv.c) ----
 *
 * Lines, CSV rows and fixed-size binary records with a key range,
 * compared like GNU sort under LC_ALL=C.  A record is @len bytes
 * WITHOUT its terminator ('\n', or '\0' with -z; a CSV row's '\r' of
 * CRLF stays in it).
 */
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
