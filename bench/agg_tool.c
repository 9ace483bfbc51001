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

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "csv"))
		return to_csv(argv[2], argv[3], argc > 4 && !strcmp(argv[4], "--signed"));
	if (argc == 4 && !strcmp(argv[1], "totals"))
		return totals(argv[2], (size_t)atoi(argv[3]));
	fprintf(stderr, "usage: agg_tool csv IN.kv OUT.csv [--signed] | agg_tool totals OUT.kv NAGGS\n");
	return 2;
}
