/*
 * agg_tool.c - helpers of bench/aggregate.sh (not part of pems):
 *
 *   agg_tool csv IN.kv OUT.csv [--signed]
 *       the 16-byte kv records {u64 key, i64 value} as csv text
 *       "key,value" with a header; --signed prints the key as int64
 *       (two's complement: sqlite has no unsigned 64-bit integers; the
 *       grouping is the same, the map is a bijection)
 *   agg_tool totals OUT.kv NAGGS
 *       totals of a `pems-run aggregate --agg count,sum,min,max[,...]
 *       --output-format kv` result (8 + 8 NAGGS bytes per group, the
 *       first four aggregates count, sum, min, max): prints
 *       "groups=G count=C sum=S min=M max=X" (sums of each column over
 *       the groups, 128-bit), to compare with the peers' results
 *   agg_tool ref IN.kv [--groups G [--parts P] | --distinct]
 *       an independent reference for `pems-run aggregate --agg
 *       count,sum,min,max,avg` (csv output): aggregates IN in an
 *       in-memory hash table (sized for G groups; --distinct: every key
 *       is its own group, no table; --parts P: P passes over IN, each
 *       for the keys of one hash part, in a table of ~G/P groups, e.g.
 *       1e8 groups in 8 passes of ~0.7 GB), formats each group's line
 *       "key,count,sum,min,max,avg" itself and prints
 *       "lines=N hash=H": the count and the order-independent sum of a
 *       64-bit hash of the lines
 *   agg_tool sum OUT.csv [--sqlite]
 *       the same "lines=N hash=H" of a pems csv output (header excluded),
 *       after checking the header and that keys strictly increase;
 *       --sqlite hashes each line as "int64 key,count,sum,min,max" (the
 *       key as sqlite stores it, avg dropped) to compare with
 *   agg_tool lines FILE
 *       lines=N hash=H of every line of FILE as it is (sqlite3 -csv output)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *i128_str(__int128 v, char *buf)
{
	unsigned __int128 a = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
	char tmp[48];
	int n = 0, i = 0;

	do {
		tmp[n++] = (char)('0' + (int)(a % 10));
		a /= 10;
	} while (a);
	if (v < 0)
		buf[i++] = '-';
	while (n)
		buf[i++] = tmp[--n];
	buf[i] = '\0';
	return buf;
}

static int to_csv(const char *in, const char *out, int sgn)
{
	FILE *f = fopen(in, "rb"), *o = fopen(out, "w");
	static uint8_t buf[16 << 16];
	size_t n, i;

	if (!f || !o) {
		perror(!f ? in : out);
		return 1;
	}
	setvbuf(o, NULL, _IOFBF, 1 << 22);
	fputs("key,value\n", o);
	while ((n = fread(buf, 16, sizeof(buf) / 16, f)) > 0) {
		for (i = 0; i < n; i++) {
			uint64_t k;
			int64_t v;

			memcpy(&k, buf + 16 * i, 8);
			memcpy(&v, buf + 16 * i + 8, 8);
			if (sgn)
				fprintf(o, "%lld,%lld\n", (long long)(int64_t)k, (long long)v);
			else
				fprintf(o, "%llu,%lld\n", (unsigned long long)k, (long long)v);
		}
	}
	if (ferror(f) || fclose(o)) {
		perror(out);
		return 1;
	}
	fclose(f);
	return 0;
}

static int totals(const char *in, size_t naggs)
{
	size_t rec = 8 + 8 * naggs;
	FILE *f = fopen(in, "rb");
	static uint8_t buf[136 << 14];
	__int128 t[4] = { 0, 0, 0, 0 };
	uint64_t groups = 0;
	char s[4][48];
	size_t n, i;
	int j;

	if (!f) {
		perror(in);
		return 1;
	}
	if (naggs < 4 || naggs > 16) {
		fprintf(stderr, "agg_tool: NAGGS must be 4..16\n");
		return 2;
	}
	while ((n = fread(buf, rec, sizeof(buf) / rec, f)) > 0) {
		for (i = 0; i < n; i++, groups++) {
			uint64_t c;
			int64_t x;

			memcpy(&c, buf + rec * i + 8, 8);
			t[0] += c;
			for (j = 1; j < 4; j++) {
				memcpy(&x, buf + rec * i + 8 + 8 * j, 8);
				t[j] += x;
			}
		}
	}
	fclose(f);
	printf("groups=%llu count=%s sum=%s min=%s max=%s\n", (unsigned long long)groups,
	       i128_str(t[0], s[0]), i128_str(t[1], s[1]), i128_str(t[2], s[2]),
	       i128_str(t[3], s[3]));
	return 0;
}

/* ---- reference ---- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t line_hash(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ULL;
	return mix64(h);
}

struct grp {
	uint64_t key, count;
	int64_t sum, min, max;	/* |sum| < 2^63 for these inputs: +-1e6 per row */
};

/* the mean, rounded to 9 places half away from zero, trailing zeros cut
 * (written independently of pems: one scaled division) */
static int fmt_line(char *p, const struct grp *g)
{
	__int128 s = g->sum;
	unsigned __int128 a = s < 0 ? -(unsigned __int128)s : (unsigned __int128)s;
	unsigned __int128 sc = (a * 2000000000u + g->count) / (2 * (unsigned __int128)g->count);
	unsigned long long q = (unsigned long long)(sc / 1000000000u),
			   f = (unsigned long long)(sc % 1000000000u);
	char frac[16];
	int n;

	snprintf(frac, sizeof(frac), "%09llu", f);
	for (n = 9; n > 0 && frac[n - 1] == '0'; n--)
		;
	frac[n] = '\0';
	return sprintf(p, "%llu,%llu,%lld,%lld,%lld,%s%llu%s%s\n", (unsigned long long)g->key,
		       (unsigned long long)g->count, (long long)g->sum, (long long)g->min,
		       (long long)g->max, s < 0 && sc ? "-" : "", q, n ? "." : "", frac);
}

/* One pass of ref over IN: the groups whose key hash falls in part
 * @part of @parts (all of them for parts = 1), in a table sized for
 * @groups of them; adds to *lines and *hash. */
static int ref_pass(const char *in, uint64_t groups, int distinct, unsigned part, unsigned parts,
		    uint64_t *lines, uint64_t *hash)
{
	FILE *f = fopen(in, "rb");
	static uint8_t buf[16 << 16];
	struct grp *t = NULL, g;
	uint64_t mask = 0, used = 0, i;
	char line[160];
	size_t n, r;

	if (!f) {
		perror(in);
		return 1;
	}
	if (!distinct) {
		uint64_t slots = 1024;

		while (slots * 3 / 4 < groups)
			slots *= 2;
		t = calloc(slots, sizeof(*t));
		if (!t) {
			fprintf(stderr, "agg_tool: no memory for %llu slots\n", (unsigned long long)slots);
			return 1;
		}
		mask = slots - 1;
	}
	while ((n = fread(buf, 16, sizeof(buf) / 16, f)) > 0) {
		for (r = 0; r < n; r++) {
			uint64_t k, h;
			int64_t v;

			memcpy(&k, buf + 16 * r, 8);
			memcpy(&v, buf + 16 * r + 8, 8);
			if (distinct) {
				g.key = k;
				g.count = 1;
				g.sum = g.min = g.max = v;
				*hash += line_hash(line, (size_t)fmt_line(line, &g));
				(*lines)++;
				continue;
			}
			h = mix64(k);
			if ((h >> 40) % parts != part)
				continue;
			for (i = h & mask; t[i].count && t[i].key != k; i = (i + 1) & mask)
				;
			if (!t[i].count) {
				if (++used > mask) {
					fprintf(stderr, "agg_tool: more than %llu groups\n", (unsigned long long)mask);
					return 1;
				}
				t[i].key = k;
				t[i].min = INT64_MAX;
				t[i].max = INT64_MIN;
			}
			t[i].count++;
			t[i].sum += v;
			if (v < t[i].min)
				t[i].min = v;
			if (v > t[i].max)
				t[i].max = v;
		}
	}
	fclose(f);
	for (i = 0; !distinct && i <= mask; i++) {
		if (!t[i].count)
			continue;
		*hash += line_hash(line, (size_t)fmt_line(line, &t[i]));
		(*lines)++;
	}
	free(t);
	return 0;
}

/* ref: @parts passes over IN, each aggregating the keys of one hash part,
 * so the table needs ~groups/parts slots (for 1e8 groups in a few GB) */
static int ref(const char *in, uint64_t groups, int distinct, unsigned parts)
{
	uint64_t lines = 0, hash = 0, per;
	unsigned p;

	if (parts < 1 || distinct)
		parts = 1;
	/* a part's share of the groups, with slack for the binomial spread */
	per = groups / parts + groups / parts / 16 + 4096;
	for (p = 0; p < parts; p++)
		if (ref_pass(in, parts == 1 ? groups : per, distinct, p, parts, &lines, &hash))
			return 1;
	printf("lines=%llu hash=%016llx\n", (unsigned long long)lines, (unsigned long long)hash);
	return 0;
}

static int sum_csv(const char *path, int sq)
{
	FILE *f = fopen(path, "r");
	static char line[1 << 16];
	uint64_t lines = 0, hash = 0, prev = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 22);
	if (!fgets(line, sizeof(line), f) || strcmp(line, "key,count,sum,min,max,avg\n")) {
		fprintf(stderr, "agg_tool: %s: header is not key,count,sum,min,max,avg\n", path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		uint64_t k = strtoull(line, NULL, 10);

		if (lines && k <= prev) {
			fprintf(stderr, "agg_tool: %s: line %llu: key %llu not above %llu\n", path,
				(unsigned long long)lines + 2, (unsigned long long)k,
				(unsigned long long)prev);
			return 1;
		}
		prev = k;
		if (sq) {	/* "key,count,sum,min,max" with the key signed */
			char t[256], *c = strchr(line, ','), *a = strrchr(line, ',');
			int n;

			if (!c || !a || a - c > 200)
				return 1;
			n = snprintf(t, sizeof(t), "%lld%.*s\n", (long long)(int64_t)k, (int)(a - c), c);
			hash += line_hash(t, (size_t)n);
		} else {
			hash += line_hash(line, strlen(line));
		}
		lines++;
	}
	fclose(f);
	printf("lines=%llu hash=%016llx\n", (unsigned long long)lines, (unsigned long long)hash);
	return 0;
}

static int hash_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	static char line[1 << 16];
	uint64_t lines = 0, hash = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n >= 2 && line[n - 2] == '\r') {	/* sqlite -csv ends lines with CRLF */
			line[n - 2] = '\n';
			line[--n] = '\0';
		}
		hash += line_hash(line, n);
		lines++;
	}
	fclose(f);
	printf("lines=%llu hash=%016llx\n", (unsigned long long)lines, (unsigned long long)hash);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "ref")) {
		if (argc == 4 && !strcmp(argv[3], "--distinct"))
			return ref(argv[2], 0, 1, 1);
		unsigned parts = 1;

		if (argc == 7 && !strcmp(argv[5], "--parts"))
			parts = (unsigned)strtoul(argv[6], NULL, 10);
		return ref(argv[2], argc >= 5 && !strcmp(argv[3], "--groups") ?
				    strtoull(argv[4], NULL, 10) : 1u << 20, 0, parts);
	}
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "sum"))
		return sum_csv(argv[2], argc == 4 && !strcmp(argv[3], "--sqlite"));
	if (argc == 3 && !strcmp(argv[1], "lines"))
		return hash_lines(argv[2]);
	if (argc >= 4 && !strcmp(argv[1], "csv"))
		return to_csv(argv[2], argv[3], argc > 4 && !strcmp(argv[4], "--signed"));
	if (argc == 4 && !strcmp(argv[1], "totals"))
		return totals(argv[2], (size_t)atoi(argv[3]));
	fprintf(stderr, "usage: agg_tool csv IN.kv OUT.csv [--signed] | totals OUT.kv NAGGS |\n"
			"       ref IN.kv [--groups G [--parts P] | --distinct] | sum OUT.csv [--sqlite] | lines FILE\n");
	return 2;
}
