/*
 * text.c - text test data for the text sort (pems_gen_text_*), a pure
 * function of (seed, size), made line by line:
 *
 * lines: "NAME,INT,DEC,WORDS" -- NAME from 50,000 names with a skewed
 *        choice (many duplicates), INT in -10^6..10^7, DEC with 0-4
 *        decimals, WORDS filler up to a length drawn in 20..300 bytes
 *        (newline included); 1 % of the lines repeat an earlier one.
 * csv:   header "id,name,price,qty,comment", the same fields; 3 % of the
 *        comments are quoted and hold the delimiter, "" or a newline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gen_internal.h"

#define BLOCK (4u << 20)
#define LINE_MAX_LEN 512
#define RING 64

struct gt {
	bool csv;
	uint64_t size, seed, s;	/* s: generator state */
	char ring[RING][LINE_MAX_LEN];
	size_t ring_len[RING];
	uint64_t lines;
	pems_gen_progress *progress;
	void *arg;
};

static uint64_t rnd(struct gt *g)
{
	uint64_t x = (g->s += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static size_t name(struct gt *g, char *p)
{
	static const char *const syl[] = { "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi",
					   "ze", "Bo", "Da", "Fe", "Gu", "Ha", "Jo", "We" };
	/* skewed: the product of two uniforms favours small numbers */
	uint64_t k = (rnd(g) % 50000) * (rnd(g) % 50000) / 50000, n = 0;
	size_t len = 0;

	do {
		memcpy(p + len, syl[(k + n) % 16], 2);
		len += 2;
		k /= 16;
		n++;
	} while (k);
	return len;
}

static size_t words(struct gt *g, char *p, size_t len, bool csv)
{
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz      ABCDE.-";
	size_t i = 0, special = csv && rnd(g) % 100 < 3;

	if (special) {
		static const char *const odd[] = { "\"a, b\"", "\"say \"\"hi\"\"\"", "\"two\nlines\"",
						   "\"x,\"\"y\"\",\nz\"" };
		const char *o = odd[rnd(g) % 4];

		i = strlen(o);
		memcpy(p, o, i);
		return i;
	}
	for (; i < len; i++)
		p[i] = alpha[rnd(g) % (sizeof(alpha) - 1)];
	return i;
}

/* One line (with its newline) into @p; returns its length. */
static size_t line(struct gt *g, char *p)
{
	size_t want = 20 + rnd(g) % 281, n = 0;
	int64_t iv = (int64_t)(rnd(g) % 11000000) - 1000000;
	unsigned dec = (unsigned)(rnd(g) % 5);
	char *e = p + LINE_MAX_LEN - 2;

	if (g->lines > RING && rnd(g) % 100 == 0) {	/* an earlier line again */
		unsigned r = (unsigned)(rnd(g) % RING);

		memcpy(p, g->ring[r], g->ring_len[r]);
		return g->ring_len[r];
	}
	if (g->csv)
		n += (size_t)snprintf(p + n, (size_t)(e - p) - n, "%llu,",
				      (unsigned long long)g->lines);
	n += name(g, p + n);
	n += (size_t)snprintf(p + n, (size_t)(e - p) - n, ",%lld,%llu", (long long)iv,
			      (unsigned long long)(rnd(g) % 100000));
	if (dec)
		n += (size_t)snprintf(p + n, (size_t)(e - p) - n, ".%0*llu", (int)dec,
				      (unsigned long long)(rnd(g) % 10000) % (dec == 4 ? 10000 :
						     dec == 3 ? 1000 : dec == 2 ? 100 : 10));
	p[n++] = ',';
	n += words(g, p + n, want > n + 1 ? want - n - 1 : 1, g->csv);
	p[n++] = '\n';
	memcpy(g->ring[g->lines % RING], p, n);
	g->ring_len[g->lines % RING] = n;
	return n;
}

static int gt_write(struct gt *g, int fd)
{
	char *buf = malloc(BLOCK + LINE_MAX_LEN + 64);
	uint64_t done = 0;
	size_t fill = 0;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	g->s = g->seed;
	if (g->csv)
		fill = (size_t)sprintf(buf, "id,name,price,qty,comment\n");
	while (!rc && done + fill < g->size) {
		fill += line(g, buf + fill);
		g->lines++;
		if (fill >= BLOCK) {
			rc = gen_write_all(fd, buf, fill);
			done += fill;
			fill = 0;
			if (g->progress)
				g->progress("gen", done, g->size, g->arg);
		}
	}
	if (!rc && fill)
		rc = gen_write_all(fd, buf, fill);
	free(buf);
	return rc;
}

static int text_body(int fd, void *arg)
{
	return gt_write(arg, fd);
}

int pems_gen_text_file(const struct pems_gen_text *t, const char *out, uint64_t *lines,
		       pems_gen_progress *progress, void *arg)
{
	struct gt *g = calloc(1, sizeof(*g));
	int rc;

	if (!g)
		return -ENOMEM;
	g->csv = t->csv;
	g->size = t->size;
	g->seed = t->seed;
	g->progress = progress;
	g->arg = arg;
	rc = strcmp(out, "-") ? gen_to_file(out, text_body, g) : gt_write(g, STDOUT_FILENO);
	if (lines)
		*lines = g->lines;
	free(g);
	return rc;
}
