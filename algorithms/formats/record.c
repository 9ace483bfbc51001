/*
 * record.c - the fixed-size record formats: u64, rec100, ascii100.
 *
 * Layouts (test data from `pems-run gen`; the key is 80 bits, hi: 64,
 * lo: 16):
 *   u64      hi, native byte order (8 bytes)
 *   rec100   hi and lo big-endian (10 bytes), the index big-endian
 *            (8 bytes), 82 filler bytes
 *   ascii100 the 80 bits (+ 4 zero bits) as 14 characters of an alphabet
 *            in ASCII order, ' ', 16 hex digits of the index, ' ', 67
 *            filler characters, '\n': LC_ALL=C byte order of the lines is
 *            the order of the binary keys.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "formats/pems_formats.h"

#define REC 100

/* 64 characters in increasing ASCII order */
static const char alphabet[] =
	"+-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
static const char hexdig[] = "0123456789ABCDEF";

/* ---- u64 ---- */

static int u64_cmp(const struct pems_record_format *f, struct pems_record a,
		   struct pems_record b)
{
	uint64_t x, y;

	(void)f;
	memcpy(&x, a.p, 8);
	memcpy(&y, b.p, 8);
	return x < y ? -1 : x > y;
}

static void u64_prefix(const struct pems_record_format *f, struct pems_record r,
		       struct pems_key *k)
{
	(void)f;
	pems_key_u64(r.p, k);
}

static void u64_encode(const struct pems_record_format *f, const struct pems_key *k,
		       uint64_t index, uint64_t fill, uint8_t *out)
{
	(void)f;
	(void)index;
	(void)fill;
	memcpy(out, &k->hi, 8);
}

/* ---- rec100 ---- */

static int rec100_cmp(const struct pems_record_format *f, struct pems_record a,
		      struct pems_record b)
{
	(void)f;
	return memcmp(a.p, b.p, PEMS_REC100_KEY);
}

static void rec100_prefix(const struct pems_record_format *f, struct pems_record r,
			  struct pems_key *k)
{
	(void)f;
	pems_key_rec100(r.p, k);
}

static void put_be64(uint8_t *p, uint64_t v)
{
	int b;

	for (b = 7; b >= 0; b--) {
		p[b] = (uint8_t)v;
		v >>= 8;
	}
}

static void rec100_encode(const struct pems_record_format *f, const struct pems_key *k,
			  uint64_t index, uint64_t fill, uint8_t *r)
{
	uint64_t w;
	size_t off;

	(void)f;
	put_be64(r, k->hi);
	r[8] = (uint8_t)(k->lo >> 8);
	r[9] = (uint8_t)k->lo;
	put_be64(r + 10, index);
	for (off = 18; off + 8 <= REC; off += 8) {
		w = fill ^ (off * 0x0101010101010101ULL);
		memcpy(r + off, &w, 8);
	}
	memcpy(r + off, &fill, REC - off);
}

/* ---- ascii100 ---- */

static int ascii100_cmp(const struct pems_record_format *f, struct pems_record a,
			struct pems_record b)
{
	(void)f;
	return memcmp(a.p, b.p, PEMS_ASCII100_KEY);
}

static void ascii100_prefix(const struct pems_record_format *f, struct pems_record r,
			    struct pems_key *k)
{
	(void)f;
	k->hi = pems_load_be64(r.p);
	k->lo = pems_load_be64(r.p + 6) & 0xffffffffffffull;	/* bytes 8..13 */
}

static bool ascii100_valid(const struct pems_record_format *f, struct pems_record r)
{
	(void)f;
	return r.len == REC && r.p[REC - 1] == '\n';
}

static void ascii100_encode(const struct pems_record_format *f, const struct pems_key *k,
			    uint64_t index, uint64_t fill, uint8_t *r)
{
	unsigned __int128 v = ((unsigned __int128)k->hi << 16 | (uint16_t)k->lo) << 4;
	size_t j;

	(void)f;
	for (j = 0; j < PEMS_ASCII100_KEY; j++)
		r[j] = alphabet[(v >> (78 - 6 * j)) & 63];
	r[14] = ' ';
	for (j = 0; j < 16; j++)
		r[15 + j] = hexdig[(index >> (60 - 4 * j)) & 15];
	r[31] = ' ';
	for (j = 32; j < REC - 1; j++) {
		if ((j - 32) % 10 == 0 && j > 32)
			fill = fill * 0x5851f42d4c957f2dULL + 1;
		r[j] = alphabet[(fill >> ((j - 32) % 10 * 6)) & 63];
	}
	r[REC - 1] = '\n';
}

/* ---- the table ---- */

static const struct pems_record_format formats[] = {
	{ .name = "u64", .id = PEMS_FMT_U64, .size = 8, .key_size = 8,
	  .exact_prefix = true, .sortable = true, .cmp = u64_cmp,
	  .prefix = u64_prefix, .encode = u64_encode },
	{ .name = "rec100", .id = PEMS_FMT_REC100, .size = REC,
	  .key_size = PEMS_REC100_KEY, .exact_prefix = true, .sortable = true,
	  .cmp = rec100_cmp, .prefix = rec100_prefix, .encode = rec100_encode },
	{ .name = "ascii100", .id = PEMS_FMT_ASCII100, .size = REC,
	  .key_size = PEMS_ASCII100_KEY, .exact_prefix = true, .sortable = false,
	  .cmp = ascii100_cmp, .prefix = ascii100_prefix, .valid = ascii100_valid,
	  .encode = ascii100_encode },
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

const struct pems_record_format *pems_format_get(enum pems_format fmt)
{
	size_t i;

	for (i = 0; i < NFORMATS; i++)
		if (formats[i].id == fmt)
			return &formats[i];
	return NULL;
}

const struct pems_record_format *pems_format_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < NFORMATS; i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

const char *pems_format_names(void)
{
	return "u64, rec100 or ascii100";
}

size_t pems_format_size(enum pems_format fmt)
{
	const struct pems_record_format *f = pems_format_get(fmt);

	return f ? f->size : 0;
}

int pems_format_parse(const char *name, enum pems_format *out)
{
	const struct pems_record_format *f = pems_format_find(name);

	if (!f)
		return -EINVAL;
	*out = f->id;
	return 0;
}

const char *pems_format_name(enum pems_format fmt)
{
	const struct pems_record_format *f = pems_format_get(fmt);

	return f ? f->name : "?";
}

/* ---- comparing, hashing, scanning ---- */

int pems_record_cmp(const struct pems_record_format *f, const uint8_t *a, const uint8_t *b)
{
	struct pems_record x = { a, f->size }, y = { b, f->size };

	return f->cmp(f, x, y);
}

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t pems_record_hash(const uint8_t *p, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, p + i, len - i);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	}
	return mix64(h);
}

void pems_record_scan_init(struct pems_record_scan *s, const struct pems_record_format *f,
			   bool check_order)
{
	memset(s, 0, sizeof(*s));
	s->f = f;
	s->check_order = check_order;
}

void pems_record_scan_free(struct pems_record_scan *s)
{
	free(s->prev);
	s->prev = NULL;
	s->prev_len = s->prev_cap = 0;
}

static int keep_prev(struct pems_record_scan *s, struct pems_record r)
{
	if (r.len > s->prev_cap) {
		uint8_t *p = realloc(s->prev, r.len);

		if (!p)
			return -ENOMEM;
		s->prev = p;
		s->prev_cap = r.len;
	}
	memcpy(s->prev, r.p, r.len);
	s->prev_len = r.len;
	return 0;
}

/* Check one record against the last; false when it is bad. */
static bool scan_one(struct pems_record_scan *s, struct pems_record r)
{
	const struct pems_record_format *f = s->f;
	struct pems_record prev = { s->prev, s->prev_len };

	if (f->valid && !f->valid(f, r)) {
		s->malformed = true;
		s->bad = s->records;
		return false;
	}
	if (s->records && f->cmp(f, prev, r) > 0) {
		s->unsorted = true;
		s->bad = s->records;
		return false;
	}
	return true;
}

long pems_record_scan(struct pems_record_scan *s, const uint8_t *buf, size_t len)
{
	const struct pems_record_format *f = s->f;
	struct pems_record r;
	size_t at = 0;
	uint64_t h;

	while (at < len) {
		r.p = buf + at;
		r.len = f->size ? f->size : f->frame(f, buf + at, len - at);
		if (!r.len || r.len > len - at)
			break;
		if (s->check_order) {
			if (!scan_one(s, r))
				return -1;
			if (keep_prev(s, r))
				return -ENOMEM;
		}
		h = pems_record_hash(r.p, r.len);
		s->sum += h;
		s->xor ^= h;
		s->records++;
		at += r.len;
	}
	return (long)at;
}
