/*
 * gb.h - pieces shared by the files of the typed GROUP BY over CSV
 * (algorithms/groupby/, pems_csv_groupby); not installed.
 *
 *   query.c   the query: --by, --agg expressions, --as, --schema, the
 *             columns it needs and their types
 *   value.c   fields to typed values, the order-preserving key encoding,
 *             number formatting
 *   table.c   a VP's groups: hash table, aggregate states, value lists,
 *             their serialization for the exchange
 *   result.c  finalizing a group: aggregates, expressions, output lines
 *   engine.c  the BSP job (supersteps, slices, splitters, errors)
 */
#ifndef PEMS_GB_H
#define PEMS_GB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pems_algorithms.h"

#define GB_MAX_COLS 1024	/* columns of a file */
#define GB_MAX_KEYS 16		/* --by columns */
#define GB_MAX_AGGS 32		/* distinct base aggregates of a query */
#define GB_MAX_EXPR 256		/* expression nodes of a query */
#define GB_MAX_OUT 32		/* output columns besides the keys */
#define GB_TOP_MAX 16		/* N of topN / bottomN */
#define GB_NAME 64		/* column name bytes kept */

enum gb_type { GB_STR = 0, GB_I64 = 1, GB_F64 = 2 };

/* one field: not NULL -> i (I64), d (F64) or s/len (STR, unquoted bytes) */
struct gb_val {
	bool null;
	int64_t i;
	double d;
	const char *s;
	size_t len;
};

enum gb_fn {
	F_COUNT_STAR, F_COUNT, F_SUM, F_MIN, F_MAX, F_AVG, F_SD, F_CORR,
	F_TOP, F_BOTTOM,	/* fixed states */
	F_MEDIAN, F_DISTINCT, F_SMIN, F_SMAX	/* value lists (SMIN/SMAX: strings) */
};

struct gb_agg {
	enum gb_fn fn;
	int col, col2;		/* needed-column indexes; -1 none */
	unsigned n;		/* top/bottom: N */
	size_t off;		/* state offset in a group's state block (16-aligned) */
	int list;		/* value-list index, -1 */
};

enum gb_op { E_AGG, E_NUM, E_ADD, E_SUB, E_MUL, E_DIV, E_POW, E_NEG };

struct gb_expr {
	enum gb_op op;
	int a, b;		/* children (node indexes), -1 */
	int agg;		/* E_AGG */
	bool is_int;		/* E_NUM: an integer literal */
	int64_t inum;
	double num;
};

struct gb_query {
	/* the file's columns (after the header is read) */
	unsigned ncols;
	/* needed columns: file index, type, name */
	unsigned nneed;
	unsigned need_col[GB_MAX_KEYS + 2 * GB_MAX_AGGS];
	enum gb_type need_type[GB_MAX_KEYS + 2 * GB_MAX_AGGS];
	bool type_given[GB_MAX_KEYS + 2 * GB_MAX_AGGS];	/* by --schema */
	char need_name[GB_MAX_KEYS + 2 * GB_MAX_AGGS][GB_NAME];
	unsigned max_need;	/* highest needed file column + 1 */
	/* keys: needed-column indexes */
	unsigned nkeys;
	unsigned key[GB_MAX_KEYS];
	/* aggregates, expressions, output columns */
	unsigned naggs, nexpr, nout, nlists;
	struct gb_agg agg[GB_MAX_AGGS];
	struct gb_expr expr[GB_MAX_EXPR];
	int out_expr[GB_MAX_OUT];
	char out_name[GB_MAX_OUT][GB_NAME];
	int top_out;		/* the output column of a top/bottom, -1 */
	size_t state_size;	/* bytes of a group's fixed states (16-aligned) */
	/* the spec as given (pointers into the job) */
	const char *by, *aggs, *as, *schema;
	char errmsg[256];
};

/* ---- query.c ---- */

/* Parse job->by, job->agg, job->as, job->schema into @q (column names
 * still unresolved).  0 or -EINVAL with q->errmsg set. */
int gb_query_parse(struct gb_query *q, const char *by, const char *agg, const char *as,
		   const char *schema);
/* Resolve the needed columns against the header @names (ncols names;
 * "c1".. or a 1-based index also match) and check the aggregates'
 * types (call after the types are known: gb_query_types).  0 or -EINVAL
 * with q->errmsg set. */
int gb_query_resolve(struct gb_query *q, char (*names)[GB_NAME], unsigned ncols);
/* Apply the schema's types; the rest stay as inferred.  Then check
 * aggregate x type (sum of a string...) and lay out the states.
 * 0 or -EINVAL with errmsg. */
int gb_query_types(struct gb_query *q);

/* ---- value.c ---- */

/* Parse a field as @t into *v (v->null when it is empty or equals
 * @null_tok).  Returns true, or false when it is not an int64 / a
 * number.  F64 parses as strtod does (correctly rounded). */
bool gb_parse_field(const char *p, size_t len, enum gb_type t, const char *null_tok,
		    size_t null_len, struct gb_val *v);
/* What @p could be: I64 if an integer, F64 if a number, else STR. */
enum gb_type gb_guess(const char *p, size_t len);
/* Append the order-preserving encoding of @v (type @t) to @k; returns
 * the bytes written (at most 10 + 2*len).  memcmp order of encodings =
 * SQL order, NULLs last. */
size_t gb_key_put(uint8_t *k, enum gb_type t, const struct gb_val *v);
/* Decode one key column at @k (type @t) into *v (s points into k for
 * strings without NUL bytes, else into @scratch); returns bytes used. */
size_t gb_key_get(const uint8_t *k, enum gb_type t, struct gb_val *v, char *scratch);
/* encode / decode a number as 8 bytes whose memcmp order is its order */
uint64_t gb_ord_i64(int64_t x);
uint64_t gb_ord_f64(double d);
int64_t gb_unord_i64(uint64_t u);
double gb_unord_f64(uint64_t u);
/* text of numbers: returns the end of what was written */
char *gb_put_i128(char *p, __int128 v);
char *gb_put_f64(char *p, double d);	/* shortest that round-trips */
/* a string field, quoted when it holds @delim, '"', CR or LF */
char *gb_put_str(char *p, const char *s, size_t len, char delim);

/* ---- table.c ---- */

/* one value of a list: @len bytes, inline in @data when len <= 8 (a
 * number: its 8-byte order encoding, gb_ord_*), else at (char *)data */
struct gb_item {
	uint32_t gid, len;
	uint64_t data;
};

struct gb_list {
	struct gb_item *e;
	size_t n, cap;
	bool str;		/* values are strings (compared as bytes) */
	uint64_t *start;	/* after gb_table_finish: group g's items are
				 * e[start[g] .. start[g+1]) */
};

struct gb_chunk;

/* The groups of one VP, in its context (pems_malloc). */
struct gb_table {
	const struct gb_query *q;
	uint64_t *slots;	/* hash >> 32 << 32 | (gid + 1); 0: empty */
	size_t nslots;		/* a power of two */
	uint32_t ngroups, gcap;
	uint8_t *keys;		/* key arena */
	size_t kbytes, kcap;
	uint64_t *koff;		/* group -> key offset << 24 | key length */
	uint8_t *states;	/* group -> q->state_size bytes, 16-aligned */
	struct gb_list list[GB_MAX_AGGS];
	struct gb_chunk *chunks;	/* copies of string list values */
	uint32_t *order;	/* after gb_table_finish: groups in key order */
};

/* An empty table with room for @groups groups of @key_bytes key bytes in
 * all and items[l] values in list l (items may be NULL); it grows past
 * them by doubling. */
void gb_table_init(struct gb_table *t, const struct gb_query *q, size_t groups,
		   size_t key_bytes, const size_t *items);
/* What a received buffer holds: groups (at most), key bytes, items per
 * list, for gb_table_init. */
void gb_wire_count(const struct gb_query *q, const uint8_t *buf, size_t bytes,
		   size_t *groups, size_t *key_bytes, size_t *items);
void gb_table_free(struct gb_table *t);
uint64_t gb_hash(const uint8_t *k, size_t len);
/* Add one row: key @k (@klen bytes, hash @h) and the needed columns'
 * values @vals. */
void gb_table_row(struct gb_table *t, const uint8_t *k, size_t klen, uint64_t h,
		  const struct gb_val *vals);
/* Make sure the group of key @k exists (with no rows). */
void gb_table_touch(struct gb_table *t, const uint8_t *k, size_t klen);
/* Bytes the table holds (for planning and the budget). */
size_t gb_table_bytes(const struct gb_table *t);
/* Serialize every group for its owner: owner(key) = number of the
 * @nsplit splitters (each GB_SPLIT bytes: u8 length, then the bytes)
 * that are <= key.  Fills counts[v] and returns the buffer (pems_malloc),
 * owners' parts in order; frees the table's contents. */
#define GB_SPLIT 64
uint8_t *gb_table_send(struct gb_table *t, const uint8_t *split, unsigned nsplit,
		       size_t *counts, unsigned v);
/* Merge received groups (gb_table_send's format, @bytes at @buf; buf
 * must outlive the table: list values point into it). */
void gb_table_absorb(struct gb_table *t, const uint8_t *buf, size_t bytes);
/* Sort groups by key and each list by (group, value). */
void gb_table_finish(struct gb_table *t);
static inline const uint8_t *gb_group_key(const struct gb_table *t, uint32_t g, size_t *len)
{
	*len = (size_t)(t->koff[g] & 0xffffff);
	return t->keys + (t->koff[g] >> 24);
}
static inline const uint8_t *gb_item_bytes(const struct gb_item *it)
{
	return it->len <= 8 ? (const uint8_t *)&it->data : (const uint8_t *)(uintptr_t)it->data;
}

/* ---- result.c ---- */

/* Most bytes gb_group_text can write for group @g. */
size_t gb_group_bound(const struct gb_table *t, uint32_t g);
/* Text of group @g (its key columns and output columns: one line, or one
 * per value of a topN) into @out; returns the bytes.  @scratch: at least
 * the group's key bytes. */
size_t gb_group_text(const struct gb_table *t, uint32_t g, char *out, char delim,
		     char *scratch);
/* The header line ("id1,id2,sum_v1\n") into @out (room: 2 * GB_NAME per
 * column). */
size_t gb_header_text(const struct gb_query *q, char *out, char delim);

/* ---- engine.c / spmd.c: one run ---- */

#define GB_NERR 3		/* errors kept per VP (skip mode: shown) */

enum gb_err { GE_NONE, GE_FEW, GE_MANY, GE_QUOTE_OPEN, GE_QUOTE_TEXT, GE_INT, GE_NUM,
	      GE_LONG, GE_BOUNDARY };

struct gb_errinfo {
	uint64_t line;		/* within the VP's slice, 1-based */
	uint32_t kind, col, nf, pad;
	char tok[40];
};

struct gb_vpinfo {		/* allgathered after the merge */
	uint64_t start, end;	/* offsets of the first record and of the one after the last */
	uint64_t nlines, rows, skipped, groups, out_bytes;
	uint32_t nerr, pad;
	struct gb_errinfo err[GB_NERR];
};

struct gb_run {
	struct pems_csv_groupby_job *job;
	const char *name;	/* the input in messages */
	struct gb_query q;
	uint64_t size, data;	/* file bytes; offset of the first data record */
	uint64_t hdr_lines;	/* lines before data (header) */
	int in, out;
	unsigned v;
	char delim;
	const char *null_tok;
	size_t null_len;
	char *hdr;		/* output header line */
	size_t hdr_len;
	uint64_t out_total;
	size_t piece;		/* read size of the scan (gb_piece) */
	size_t scan_groups;	/* expected groups of one VP's scan */
	size_t scan_keys;	/* and their key bytes */
	uint64_t _Atomic done;	/* input bytes scanned */
	int _Atomic failed;
};

extern struct gb_run GB;

/* Read size of the scan for slices of @slice bytes: up to 4 MiB. */
size_t gb_piece(uint64_t slice);
/* The SPMD section (spmd.c). */
void gb_spmd(void *arg);
/* Compose job->errmsg / skipmsg / counts from every VP's info (engine.c);
 * returns true when the run failed. */
bool gb_report(const struct gb_vpinfo *all, unsigned v);

/* ---- stdio.c: "-" as IN or OUT ---- */

/* A new empty file in @cfg's first scratch directory (else $TMPDIR),
 * its name in @path. */
int gb_spool_path(const struct pems_config *cfg, const char *what, char *path, size_t len);
/* Copy standard input to a new file there; 0 or -errno. */
int gb_spool_stdin(const struct pems_config *cfg, char *path, size_t len);
/* Copy @path to standard output; 0 or -errno. */
int gb_cat_stdout(const char *path);

#endif
