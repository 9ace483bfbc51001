/*
 * textkey.c - GNU sort's keys under LC_ALL=C: the -k/-t/ordering-letter
 * parser and the comparison of two lines, byte-compatible with
 * `LC_ALL=C sort` (coreutils 9).
 *
 * GNU's rules reproduced here (coreutils sort.c):
 *  1. Blanks are ' ', '\t' and '\n'.  Without -t a field is a run of
 *     blanks followed by a run of non-blanks (the leading blanks belong
 *     to the field); with -t every TAB byte ends a field.
 *  2. -k F.C starts at character C of field F, F.C past the line's end
 *     clamps to the end; POS2 F.0 (or F) ends with field F, F.C after
 *     its C-th character; a key that ends before it starts is empty.
 *     b on POS1 / POS2 skips blanks before counting C.
 *  3. A key without ordering letters takes the global ones (-b -d -f -g
 *     -i -n -r -V); a key with only 'r' does not.
 *  4. When the keys tie, the whole lines compare as bytes (shorter
 *     first), reversed by the global -r: GNU's "last resort".  -s and -u
 *     turn it off; then the caller keeps input order.
 *  5. -n reads blanks, an optional '-', digits, an optional '.' and
 *     digits (no thousands separator in the C locale, no '+', no
 *     exponent); anything else is 0.  -g is strtold: non-numbers first,
 *     then NaNs, then numbers, -0 == 0.  -V is gnulib's filevercmp.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "formats/pems_formats.h"

#define GEN_MAX 4096		/* -g reads at most this many key bytes */

static bool is_blank(uint8_t c) { return c == ' ' || c == '\t' || c == '\n'; }
static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }
static bool is_alpha(uint8_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static bool is_alnum(uint8_t c) { return is_digit(c) || is_alpha(c); }
static uint8_t upper(uint8_t c) { return c >= 'a' && c <= 'z' ? c - 32 : c; }

static bool ignored(enum pems_tkey_ignore ig, uint8_t c)
{
	if (ig == PEMS_TK_NONPRINT)
		return c < 0x20 || c > 0x7e;
	if (ig == PEMS_TK_NONDICT)
		return !is_alnum(c) && !is_blank(c);
	return false;
}

/* ---- parsing ---- */

static void key_default(struct pems_tkey *k)
{
	memset(k, 0, sizeof(*k));
	k->sword = SIZE_MAX;
	k->eword = SIZE_MAX;
}

void pems_textspec_init(struct pems_textspec *ts, enum pems_text_kind kind)
{
	memset(ts, 0, sizeof(*ts));
	ts->kind = kind;
	ts->eol = '\n';
	ts->tab = -1;
	ts->sep = ',';
	ts->header = kind == PEMS_TEXT_CSV;
	key_default(&ts->gkey);
}

/* One ordering letter into @k; @pos: 0 global (b: both ends), 1 POS1, 2 POS2. */
static int set_letter(struct pems_tkey *k, char c, int pos)
{
	switch (c) {
	case 'b':
		if (pos != 2)
			k->skipsblanks = true;
		if (pos != 1)
			k->skipeblanks = true;
		break;
	case 'd':
		k->ignore = PEMS_TK_NONDICT;
		break;
	case 'i':
		if (k->ignore == PEMS_TK_KEEP)	/* -d implies -i, not the reverse */
			k->ignore = PEMS_TK_NONPRINT;
		break;
	case 'f':
		k->fold = true;
		break;
	case 'n':
		k->type = PEMS_TK_NUM;
		k->types |= 1;
		break;
	case 'g':
		k->type = PEMS_TK_GEN;
		k->types |= 2;
		break;
	case 'V':
		k->type = PEMS_TK_VER;
		k->types |= 4;
		break;
	case 'r':
		k->reverse = true;
		return 0;	/* 'r' alone does not stop inheritance (rule 3) */
	case 'h': case 'M': case 'R':
		return -ENOTSUP;
	default:
		return -EINVAL;
	}
	k->any_flag = true;
	return 0;
}

int pems_textspec_flag(struct pems_textspec *ts, char flag, char *err, size_t errlen)
{
	int rc = set_letter(&ts->gkey, flag, 0);

	if (rc == -ENOTSUP)
		snprintf(err, errlen, "ordering option '-%c' is not supported (pems: b d f g i n r V)",
			 flag);
	else if (rc)
		snprintf(err, errlen, "unknown ordering option '-%c'", flag);
	if (!rc && flag == 'r')
		ts->reverse = true;
	return rc ? -EINVAL : 0;
}

int pems_textspec_tab(struct pems_textspec *ts, const char *arg, char *err, size_t errlen)
{
	int t;

	if (!arg[0]) {
		snprintf(err, errlen, "empty tab");
		return -EINVAL;
	}
	if (arg[1] && strcmp(arg, "\\0")) {
		snprintf(err, errlen, "multi-character tab '%s'", arg);
		return -EINVAL;
	}
	t = arg[1] ? 0 : (uint8_t)arg[0];
	if (ts->tab >= 0 && ts->tab != t) {
		snprintf(err, errlen, "incompatible tabs");
		return -EINVAL;
	}
	ts->tab = t;
	ts->sep = (uint8_t)t;
	return 0;
}

/* Digits at *s into *v (SIZE_MAX on overflow); false when none. */
static bool field_count(const char **s, size_t *v)
{
	const char *p = *s;
	size_t n = 0;

	if (!is_digit((uint8_t)*p))
		return false;
	for (; is_digit((uint8_t)*p); p++)
		n = n > (SIZE_MAX - 9) / 10 ? SIZE_MAX : n * 10 + (size_t)(*p - '0');
	*s = p;
	*v = n;
	return true;
}

static int letters(struct pems_tkey *k, const char **s, int pos, char *err, size_t errlen,
		   const char *arg)
{
	for (; **s && **s != ','; (*s)++) {
		int rc = set_letter(k, **s, pos);

		if (rc == -ENOTSUP) {
			snprintf(err, errlen, "invalid key '%s': ordering option '%c' is not supported (pems: b d f g i n r V)",
				 arg, **s);
			return -EINVAL;
		}
		if (rc)
			break;	/* a stray character: the caller says so */
	}
	return 0;
}

static int bad_key(const char *arg, const char *why, char *err, size_t errlen)
{
	snprintf(err, errlen, "invalid key '%s': %s", arg, why);
	return -EINVAL;
}

int pems_textspec_key(struct pems_textspec *ts, const char *arg, char *err, size_t errlen)
{
	struct pems_tkey k;
	const char *s = arg;

	if (ts->nkeys >= PEMS_TKEY_MAX)
		return bad_key(arg, "too many keys (at most 32)", err, errlen);
	key_default(&k);
	if (!field_count(&s, &k.sword))
		return bad_key(arg, "invalid number at field start", err, errlen);
	if (!k.sword--)
		return bad_key(arg, "field number is zero", err, errlen);
	if (*s == '.') {
		s++;
		if (!field_count(&s, &k.schar))
			return bad_key(arg, "invalid number after '.'", err, errlen);
		if (!k.schar--)
			return bad_key(arg, "character offset is zero", err, errlen);
	}
	if (!k.sword && !k.schar)
		k.sword = SIZE_MAX;	/* 1.1: the whole line from its start */
	if (letters(&k, &s, 1, err, errlen, arg))
		return -EINVAL;
	if (*s == ',') {
		s++;
		if (!field_count(&s, &k.eword))
			return bad_key(arg, "invalid number after ','", err, errlen);
		if (!k.eword--)
			return bad_key(arg, "field number is zero", err, errlen);
		if (*s == '.') {
			s++;
			if (!field_count(&s, &k.echar))
				return bad_key(arg, "invalid number after '.'", err, errlen);
		}
		if (letters(&k, &s, 2, err, errlen, arg))
			return -EINVAL;
	}
	if (*s)
		return bad_key(arg, "stray character in field spec", err, errlen);
	ts->key[ts->nkeys++] = k;
	return 0;
}

static void inherit(struct pems_tkey *k, const struct pems_tkey *g)
{
	k->ignore = g->ignore;
	k->fold = g->fold;
	k->skipsblanks = g->skipsblanks;
	k->skipeblanks = g->skipeblanks;
	k->type = g->type;
	k->types = g->types;
	k->reverse = g->reverse;
}

/* GNU's check: at most one of n, g and (V or d or i) per key */
static int compatible(const struct pems_tkey *k, char *err, size_t errlen)
{
	int n = !!(k->types & 1) + !!(k->types & 2) +
		(!!(k->types & 4) | (k->ignore != PEMS_TK_KEEP));
	char opts[8];
	size_t i = 0;

	if (n <= 1)
		return 0;
	if (k->ignore == PEMS_TK_NONDICT)
		opts[i++] = 'd';
	if (k->types & 2)
		opts[i++] = 'g';
	if (k->ignore == PEMS_TK_NONPRINT)
		opts[i++] = 'i';
	if (k->types & 1)
		opts[i++] = 'n';
	if (k->types & 4)
		opts[i++] = 'V';
	opts[i] = 0;
	snprintf(err, errlen, "options '-%s' are incompatible", opts);
	return -EINVAL;
}

int pems_textspec_finish(struct pems_textspec *ts, char *err, size_t errlen)
{
	const struct pems_tkey *k0;
	unsigned i;

	if (ts->kind == PEMS_TEXT_LINES) {
		for (i = 0; i < ts->nkeys; i++)
			if (!ts->key[i].any_flag && !ts->key[i].reverse)
				inherit(&ts->key[i], &ts->gkey);
		if (!ts->nkeys && ts->gkey.any_flag)
			ts->key[ts->nkeys++] = ts->gkey;	/* GNU's gkey_only */
		for (i = 0; i < ts->nkeys; i++)
			if (compatible(&ts->key[i], err, errlen))
				return -EINVAL;
	}
	if (ts->kind == PEMS_TEXT_CSV && ts->sep == '"') {
		snprintf(err, errlen, "the CSV delimiter cannot be '\"'");
		return -EINVAL;
	}
	k0 = ts->nkeys ? &ts->key[0] : NULL;
	ts->no_prefix = ts->kind == PEMS_TEXT_LINES && k0 &&
			(k0->type == PEMS_TK_VER ||
			 (k0->type == PEMS_TK_TEXT && k0->ignore != PEMS_TK_KEEP));
	return 0;
}

/* ---- fields (rule 1, 2) ---- */

static const uint8_t *begfield(const struct pems_textspec *ts, const uint8_t *p,
			       const uint8_t *lim, const struct pems_tkey *k)
{
	size_t sword = k->sword;

	if (ts->tab >= 0) {
		while (p < lim && sword--) {
			while (p < lim && *p != ts->tab)
				p++;
			if (p < lim)
				p++;
		}
	} else {
		while (p < lim && sword--) {
			while (p < lim && is_blank(*p))
				p++;
			while (p < lim && !is_blank(*p))
				p++;
		}
	}
	if (k->skipsblanks)
		while (p < lim && is_blank(*p))
			p++;
	return (size_t)(lim - p) < k->schar ? lim : p + k->schar;
}

static const uint8_t *limfield(const struct pems_textspec *ts, const uint8_t *p,
			       const uint8_t *lim, const struct pems_tkey *k)
{
	size_t eword = k->eword, echar = k->echar;

	if (echar == 0)
		eword++;	/* all of the end field */
	if (ts->tab >= 0) {
		while (p < lim && eword--) {
			while (p < lim && *p != ts->tab)
				p++;
			if (p < lim && (eword || echar))
				p++;
		}
	} else {
		while (p < lim && eword--) {
			while (p < lim && is_blank(*p))
				p++;
			while (p < lim && !is_blank(*p))
				p++;
		}
	}
	if (echar) {
		if (k->skipeblanks)
			while (p < lim && is_blank(*p))
				p++;
		p = (size_t)(lim - p) < echar ? lim : p + echar;
	}
	return p;
}

/* The key @k of the line [p, p + len) as [*b, *e). */
static void key_span(const struct pems_textspec *ts, const struct pems_tkey *k,
		     const uint8_t *p, size_t len, const uint8_t **b, const uint8_t **e)
{
	const uint8_t *end = p + len, *lim, *beg;

	lim = k->eword != SIZE_MAX ? limfield(ts, p, end, k) : end;
	if (k->sword != SIZE_MAX) {
		beg = begfield(ts, p, end, k);
	} else {
		beg = p;
		if (k->skipsblanks)
			while (beg < lim && is_blank(*beg))
				beg++;
	}
	*b = beg;
	*e = lim > beg ? lim : beg;
}

/* ---- numbers (rule 5) ---- */

struct num {
	int sign;		/* -1, 0, 1 */
	const uint8_t *ip, *fp;	/* integer digits (no leading 0s), fraction (no trailing 0s) */
	size_t ilen, flen;
};

static void num_parse(const uint8_t *p, const uint8_t *e, struct num *n)
{
	bool neg = false;

	while (p < e && is_blank(*p))
		p++;
	if (p < e && *p == '-') {
		neg = true;
		p++;
	}
	while (p < e && *p == '0')
		p++;
	n->ip = p;
	while (p < e && is_digit(*p))
		p++;
	n->ilen = (size_t)(p - n->ip);
	n->fp = p;
	n->flen = 0;
	if (p < e && *p == '.') {
		n->fp = ++p;
		while (p < e && is_digit(*p))
			p++;
		n->flen = (size_t)(p - n->fp);
		while (n->flen && n->fp[n->flen - 1] == '0')
			n->flen--;
	}
	n->sign = !n->ilen && !n->flen ? 0 : neg ? -1 : 1;
}

static int num_cmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be)
{
	struct num x, y;
	size_t m;
	int d;

	num_parse(a, ae, &x);
	num_parse(b, be, &y);
	if (x.sign != y.sign)
		return x.sign < y.sign ? -1 : 1;
	if (!x.sign)
		return 0;
	if (x.ilen != y.ilen)
		d = x.ilen < y.ilen ? -1 : 1;
	else if ((d = memcmp(x.ip, y.ip, x.ilen)) == 0) {
		m = x.flen < y.flen ? x.flen : y.flen;
		d = memcmp(x.fp, y.fp, m);
		if (!d)
			d = (x.flen > y.flen) - (x.flen < y.flen);
	}
	return x.sign < 0 ? -d : d;
}

/* Order-preserving 64 bits of a -n key: class (negative, zero,
 * positive), the integer digit count (63: 63 or more, digits unknown)
 * and the first 14 digits. */
static uint64_t num_prefix(const uint8_t *p, const uint8_t *e)
{
	const uint64_t m62 = (1ull << 62) - 1;
	uint64_t mag;
	struct num n;
	size_t i, j = 0;

	num_parse(p, e, &n);
	if (!n.sign)
		return 1ull << 62;
	if (n.ilen >= 63) {
		mag = 63ull << 56;
	} else {
		mag = (uint64_t)n.ilen << 56;
		for (i = 0; i < n.ilen && j < 14; i++, j++)
			mag |= (uint64_t)(n.ip[i] - '0') << (52 - 4 * j);
		for (i = 0; i < n.flen && j < 14; i++, j++)
			mag |= (uint64_t)(n.fp[i] - '0') << (52 - 4 * j);
	}
	return n.sign > 0 ? 2ull << 62 | mag : (~mag & m62);
}

/*
 * A -n key as the top NUM_W bits of a 64-bit prefix that leaves room
 * for the next key: class (2 bits), integer digit count (6), NUM_D
 * digits, and a flag set when digits are left over (the number is
 * larger in magnitude than any with the same NUM_D digits and none
 * left).  Equal bits without the flag mean equal numbers, so the next
 * key may decide within them.  *exact: no flag (the next key's bits may
 * follow).
 */
#define NUM_D 10
#define NUM_W (9 + 4 * NUM_D)

static uint64_t num_prefix_w(const uint8_t *p, const uint8_t *e, bool *exact)
{
	const uint64_t mask = (1ull << (NUM_W - 2)) - 1;
	uint64_t mag;
	struct num n;
	size_t i, j = 0;

	num_parse(p, e, &n);
	*exact = true;
	if (!n.sign)
		return 1ull << (NUM_W - 2);
	if (n.ilen >= 63 || n.ilen + n.flen > NUM_D)
		*exact = false;
	mag = (uint64_t)(n.ilen < 63 ? n.ilen : 63) << (4 * NUM_D + 1);
	for (i = 0; n.ilen < 63 && i < n.ilen && j < NUM_D; i++, j++)
		mag |= (uint64_t)(n.ip[i] - '0') << (4 * (NUM_D - 1 - j) + 1);
	for (i = 0; n.ilen < 63 && i < n.flen && j < NUM_D; i++, j++)
		mag |= (uint64_t)(n.fp[i] - '0') << (4 * (NUM_D - 1 - j) + 1);
	mag |= !*exact;
	return n.sign > 0 ? 2ull << (NUM_W - 2) | mag : (~mag & mask);
}

/* -g: 0 not a number, 1 NaN, 2 a number in *v (-0 as 0) */
static int gen_parse(const uint8_t *p, const uint8_t *e, long double *v)
{
	char buf[GEN_MAX + 1], *end;
	size_t n = (size_t)(e - p) < GEN_MAX ? (size_t)(e - p) : GEN_MAX;

	memcpy(buf, p, n);
	buf[n] = 0;
	*v = strtold(buf, &end);
	if (end == buf)
		return 0;
	if (isnan(*v))
		return 1;
	if (*v == 0)
		*v = 0;
	return 2;
}

int pems_text_gen_cmp(const uint8_t *a, const uint8_t *ae, const uint8_t *b, const uint8_t *be)
{
	long double x, y;
	int cx = gen_parse(a, ae, &x), cy = gen_parse(b, be, &y);

	if (cx != cy)
		return cx < cy ? -1 : 1;
	if (cx == 2)
		return x < y ? -1 : x > y;
	if (cx == 1)	/* GNU orders NaNs by their bits */
		return memcmp(&x, &y, 10);
	return 0;
}

uint64_t pems_text_gen_prefix(const uint8_t *p, const uint8_t *e)
{
	long double v;
	double d;
	uint64_t x;
	int c = gen_parse(p, e, &v);

	if (c < 2)
		return (uint64_t)c;
	d = (double)v;	/* rounding keeps the order (not strictly) */
	memcpy(&x, &d, 8);
	return x >> 63 ? ~x : x | 1ull << 63;
}

/* ---- versions: gnulib filevercmp ---- */

/* Length of @s without its file suffix (\.[A-Za-z~][A-Za-z0-9~]*)*$,
 * which may start at s[0] (".b" is all suffix) */
static size_t ver_prefixlen(const uint8_t *s, size_t n)
{
	size_t i, prefixlen;

	for (i = 0;; i++) {
		prefixlen = i;
		while (i + 1 < n && s[i] == '.' && (is_alpha(s[i + 1]) || s[i + 1] == '~'))
			for (i += 2; i < n && (is_alnum(s[i]) || s[i] == '~'); i++)
				;
		if (i >= n)
			return prefixlen;
	}
}

static int ver_order(const uint8_t *s, size_t pos, size_t len)
{
	uint8_t c;

	if (pos == len)
		return -1;
	c = s[pos];
	if (is_digit(c))
		return 0;
	if (is_alpha(c))
		return c;
	if (c == '~')
		return -2;
	return c + 256;
}

static int verrevcmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	size_t i = 0, j = 0;

	while (i < al || j < bl) {
		int first = 0;

		while ((i < al && !is_digit(a[i])) || (j < bl && !is_digit(b[j]))) {
			int x = ver_order(a, i, al), y = ver_order(b, j, bl);

			if (x != y)
				return x - y;
			i++;
			j++;
		}
		while (i < al && a[i] == '0')
			i++;
		while (j < bl && b[j] == '0')
			j++;
		while (i < al && j < bl && is_digit(a[i]) && is_digit(b[j])) {
			if (!first)
				first = a[i] - b[j];
			i++;
			j++;
		}
		if (i < al && is_digit(a[i]))
			return 1;
		if (j < bl && is_digit(b[j]))
			return -1;
		if (first)
			return first;
	}
	return 0;
}

static int ver_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	size_t ap, bp;
	int r;

	if (!al)
		return -!!bl;
	if (!bl)
		return 1;
	if (a[0] == '.') {
		if (b[0] != '.')
			return -1;
		if (al == 1)
			return -(bl != 1);
		if (bl == 1)
			return 1;
		if (a[1] == '.' && al == 2)
			return -!(b[1] == '.' && bl == 2);
		if (b[1] == '.' && bl == 2)
			return 1;
	} else if (b[0] == '.') {
		return 1;
	}
	ap = ver_prefixlen(a, al);
	bp = ver_prefixlen(b, bl);
	r = verrevcmp(a, ap, b, bp);
	return r || (ap == al && bp == bl) ? r : verrevcmp(a, al, b, bl);
}

/* ---- comparing keys ---- */

static int text_cmp(const struct pems_tkey *k, const uint8_t *a, const uint8_t *ae,
		    const uint8_t *b, const uint8_t *be)
{
	size_t la = (size_t)(ae - a), lb = (size_t)(be - b), m = la < lb ? la : lb, i;
	int d;

	if (k->ignore != PEMS_TK_KEEP) {
		for (;;) {
			while (a < ae && ignored(k->ignore, *a))
				a++;
			while (b < be && ignored(k->ignore, *b))
				b++;
			if (a >= ae || b >= be)
				return (a < ae) - (b < be);
			d = k->fold ? upper(*a) - upper(*b) : *a - *b;
			if (d)
				return d;
			a++;
			b++;
		}
	}
	if (k->fold) {
		for (i = 0; i < m; i++)
			if ((d = upper(a[i]) - upper(b[i])))
				return d;
	} else if (m && (d = memcmp(a, b, m))) {
		return d;
	}
	return (la > lb) - (la < lb);
}

/* -V with -f: the folded copies (at most GEN_MAX bytes each) */
static int ver_fold_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	uint8_t x[GEN_MAX], y[GEN_MAX];
	size_t i;

	al = al < GEN_MAX ? al : GEN_MAX;
	bl = bl < GEN_MAX ? bl : GEN_MAX;
	for (i = 0; i < al; i++)
		x[i] = upper(a[i]);
	for (i = 0; i < bl; i++)
		y[i] = upper(b[i]);
	return ver_cmp(x, al, y, bl);
}

static int key_cmp(const struct pems_tkey *k, const uint8_t *a, const uint8_t *ae,
		      const uint8_t *b, const uint8_t *be)
{
	switch (k->type) {
	case PEMS_TK_NUM:
		return num_cmp(a, ae, b, be);
	case PEMS_TK_GEN:
		return pems_text_gen_cmp(a, ae, b, be);
	case PEMS_TK_VER:
		if (k->fold)
			return ver_fold_cmp(a, (size_t)(ae - a), b, (size_t)(be - b));
		return ver_cmp(a, (size_t)(ae - a), b, (size_t)(be - b));
	default:
		return text_cmp(k, a, ae, b, be);
	}
}


static int lines_cmp(const struct pems_textspec *ts, const uint8_t *a, size_t alen,
		     const uint8_t *b, size_t blen)
{
	const uint8_t *ka, *kae, *kb, *kbe;
	unsigned i;
	int d;

	for (i = 0; i < ts->nkeys; i++) {
		const struct pems_tkey *k = &ts->key[i];

		key_span(ts, k, a, alen, &ka, &kae);
		key_span(ts, k, b, blen, &kb, &kbe);
		d = key_cmp(k, ka, kae, kb, kbe);
		if (d)
			return k->reverse ? -d : d;
	}
	if (ts->nkeys && (ts->stable || ts->unique))
		return 0;	/* without keys GNU's -s and -u still compare whole lines */
	d = memcmp(a, b, alen < blen ? alen : blen);
	if (!d)
		d = (alen > blen) - (alen < blen);
	return ts->reverse ? -d : d;
}

int pems_text_cmp(const struct pems_textspec *ts, const uint8_t *a, size_t alen,
		  const uint8_t *b, size_t blen)
{
	const uint8_t *ka, *kb;
	size_t l;

	switch (ts->kind) {
	case PEMS_TEXT_CSV:
		return pems_csv_cmp(ts, a, alen, b, blen);
	case PEMS_TEXT_FIXED:
		if (ts->key_off >= alen)
			return 0;
		ka = a + ts->key_off;
		kb = b + ts->key_off;
		l = alen - ts->key_off < ts->key_len ? alen - ts->key_off : ts->key_len;
		return memcmp(ka, kb, l);
	default:
		return lines_cmp(ts, a, alen, b, blen);
	}
}

/* The first 8 bytes of [p, e), folded with @fold, big-endian, 0-padded */
uint64_t pems_text_bytes_prefix(const uint8_t *p, const uint8_t *e, bool fold)
{
	uint64_t x = 0;
	int i;

	for (i = 0; i < 8; i++)
		x = x << 8 | (p + i < e ? (fold ? upper(p[i]) : p[i]) : 0);
	return x;
}

/* The prefix of key @k of the line alone (0 when it has none). */
static uint64_t key_prefix(const struct pems_textspec *ts, const struct pems_tkey *k,
			   const uint8_t *r, size_t len)
{
	const uint8_t *b, *e;
	uint64_t x;

	if (k->type == PEMS_TK_VER || (k->type == PEMS_TK_TEXT && k->ignore != PEMS_TK_KEEP))
		return 0;
	key_span(ts, k, r, len, &b, &e);
	if (k->type == PEMS_TK_NUM)
		x = num_prefix(b, e);
	else if (k->type == PEMS_TK_GEN)
		x = pems_text_gen_prefix(b, e);
	else
		x = pems_text_bytes_prefix(b, e, k->fold);
	return k->reverse ? ~x : x;
}

/* What decides after the first key: the second key, or the last-resort
 * comparison of whole lines; false when nothing does (-s, -u). */
static bool next_prefix(const struct pems_textspec *ts, const uint8_t *r, size_t len,
			uint64_t *x)
{
	if (ts->nkeys > 1) {
		*x = key_prefix(ts, &ts->key[1], r, len);
		return true;
	}
	if (ts->stable || ts->unique)
		return false;
	*x = pems_text_bytes_prefix(r, r + len, false);
	*x = ts->reverse ? ~*x : *x;
	return true;
}

uint64_t pems_text_prefix(const struct pems_textspec *ts, const uint8_t *r, size_t len)
{
	const struct pems_tkey *k;
	const uint8_t *b, *e;
	uint64_t x, nx;
	bool exact;

	if (ts->no_prefix)
		return 0;
	if (ts->kind == PEMS_TEXT_CSV)
		return pems_csv_prefix(ts, r, len);
	if (ts->kind == PEMS_TEXT_FIXED) {
		if (ts->key_off >= len)
			return 0;
		e = r + len;
		b = r + ts->key_off;
		if ((size_t)(e - b) > ts->key_len)
			e = b + ts->key_len;
		return pems_text_bytes_prefix(b, e, false);
	}
	if (!ts->nkeys) {
		x = pems_text_bytes_prefix(r, r + len, false);
		return ts->reverse ? ~x : x;
	}
	k = &ts->key[0];
	if (k->type != PEMS_TK_NUM || !next_prefix(ts, r, len, &nx))
		return key_prefix(ts, k, r, len);
	/* a short number, then the next key's top bits: ties on the number
	 * (common: few distinct values) mostly end in the prefix */
	key_span(ts, k, r, len, &b, &e);
	x = num_prefix_w(b, e, &exact);
	if (k->reverse)
		x = ~x & ((1ull << NUM_W) - 1);
	return x << (64 - NUM_W) | (exact ? nx >> NUM_W : 0);
}
