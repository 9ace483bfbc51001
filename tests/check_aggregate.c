/*
 * check_aggregate.c - `pems-run aggregate` against an in-memory reference
 * (sort + scan of the whole input): every aggregate, csv and kv in and
 * out, exact sums and the overflow report, csv errors with line and
 * column, empty input, one group, all-distinct keys, output identical for
 * every --procs / --threads, spilling forced by a small --mem; and the C
 * API (pems_groupby_plan / pems_groupby / walk) with a user-defined
 * aggregate next to built-ins, in-process.
 *
 * Runs the binary named by $PEMS_RUN (default ./build/pems-run) in
 * $PEMS_TEST_TMP (else a new /tmp/check_aggregate.XXXXXX).
 */
#include "cli_test.h"
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pems.h"
#include "pems_algorithms.h"

/* ---- the reference: sort the rows, scan groups ---- */

struct row {
	uint64_t key;
	int64_t val;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static void put_mean(char *p, size_t len, __int128 num, uint64_t den)
{
	unsigned __int128 a = num < 0 ? -(unsigned __int128)num : (unsigned __int128)num;
	unsigned __int128 scaled = (a * 2000000000u + den) / (2 * (unsigned __int128)den);
	uint64_t q = (uint64_t)(scaled / 1000000000u), f = (uint64_t)(scaled % 1000000000u);
	char frac[16];
	int n;

	snprintf(frac, sizeof(frac), "%09llu", (unsigned long long)f);
	for (n = 9; n > 0 && frac[n - 1] == '0'; n--)
		;
	frac[n] = '\0';
	snprintf(p, len, "%s%llu%s%s", num < 0 && scaled ? "-" : "", (unsigned long long)q,
		 n ? "." : "", frac);
}

/* Expected csv for aggregates @aggs ("count,sum,...") of @n rows. */
static char *reference_csv(struct row *rows, size_t n, const char *aggs)
{
	size_t cap = 4096 + n * 160, len = 0, i, j;
	char *out = malloc(cap), list[256], *save, *tok;

	ck_assert_ptr_nonnull(out);
	qsort(rows, n, sizeof(*rows), row_cmp);
	len += (size_t)snprintf(out, cap, "key,%s\n", aggs);
	for (i = 0; i < n; i = j) {
		__int128 sum = 0;
		int64_t mn = INT64_MAX, mx = INT64_MIN;
		uint64_t c = 0;
		char cell[64];

		for (j = i; j < n && rows[j].key == rows[i].key; j++) {
			sum += rows[j].val;
			mn = rows[j].val < mn ? rows[j].val : mn;
			mx = rows[j].val > mx ? rows[j].val : mx;
			c++;
		}
		len += (size_t)snprintf(out + len, cap - len, "%llu", (unsigned long long)rows[i].key);
		snprintf(list, sizeof(list), "%s", aggs);
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (!strcmp(tok, "count"))
				snprintf(cell, sizeof(cell), "%llu", (unsigned long long)c);
			else if (!strcmp(tok, "sum"))
				snprintf(cell, sizeof(cell), "%lld", (long long)sum);
			else if (!strcmp(tok, "min"))
				snprintf(cell, sizeof(cell), "%lld", (long long)mn);
			else if (!strcmp(tok, "max"))
				snprintf(cell, sizeof(cell), "%lld", (long long)mx);
			else
				put_mean(cell, sizeof(cell), sum, c);
			len += (size_t)snprintf(out + len, cap - len, ",%s", cell);
		}
		out[len++] = '\n';
		out[len] = '\0';
	}
	return out;
}

static struct row *read_kv(const char *path, size_t *n)
{
	size_t len;
	struct row *r = read_file(path, &len);

	ck_assert_ptr_nonnull(r);
	*n = len / 16;
	return r;
}

static void expect_file(const char *path, const char *want)
{
	size_t len;
	char *got = read_file(path, &len);

	ck_assert_msg(got != NULL, "no output %s", path);
	ck_assert_uint_eq(len, strlen(want));
	ck_assert_msg(!memcmp(got, want, len), "output %s differs from the reference", path);
	free(got);
}

static void gen(const char *name, const char *count, const char *groups, const char *skew)
{
	struct result r;

	RUN(&r, "gen", "--quiet", "--format", "kv", "--count", count, "--groups", groups,
	    "--skew", skew, "--seed", "5", file(name));
	expect(&r, 0, "");
}

static void check_against_reference(const char *in, const char *aggs, const char *mem,
				    const char *procs)
{
	struct result r;
	struct row *rows;
	size_t n;
	char *want;

	RUN(&r, "aggregate", "--quiet", "--agg", aggs, "--mem", mem, "--procs", procs,
	    "--tmp", dir, file(in), file("out.csv"));
	expect(&r, 0, "");
	rows = read_kv(file(in), &n);
	want = reference_csv(rows, n, aggs);
	expect_file(file("out.csv"), want);
	free(want);
	free(rows);
}

START_TEST(every_aggregate_uniform)
{
	gen("u.kv", "300K", "5000", "uniform");
	check_against_reference("u.kv", "count,sum,min,max,avg", "48M", "0");
	check_against_reference("u.kv", "avg,min", "48M", "7");
	check_against_reference("u.kv", "max", "48M", "0");
}
END_TEST

START_TEST(zipf_and_heavy_keys)
{
	gen("z.kv", "400K", "100000", "zipf:1.1");
	check_against_reference("z.kv", "count,sum,min,max,avg", "48M", "16");
	gen("z2.kv", "200K", "1000", "zipf:2");
	check_against_reference("z2.kv", "count,sum", "48M", "9");
}
END_TEST

START_TEST(all_distinct_spills)
{
	struct result r;

	gen("d.kv", "2M", "0", "uniform");
	check_against_reference("d.kv", "count,sum,min,max,avg", "48M", "0");
	/* the context file was used: the data did not fit the budget */
	RUN(&r, "aggregate", "--agg", "count", "--mem", "48M", "--stats", "--tmp", dir,
	    file("d.kv"), file("d.csv"));
	expect(&r, 0, NULL);
	ck_assert_msg(strstr(r.err, "2097152 groups") != NULL, "%s", r.err);
	{
		/* the data (32 MiB of rows) went through the message store on
		 * disk: it did not stay in the 48 MiB budget */
		const char *m = strstr(r.err, "msg_written=");

		ck_assert_ptr_nonnull(m);
		ck_assert_msg(strtoull(m + 12, NULL, 10) >= 32ull << 20, "no spill: %s", r.err);
	}
}
END_TEST

START_TEST(same_output_any_procs_threads)
{
	const char *procs[] = { "1", "2", "5", "33" }, *threads[] = { "1", "2", "1", "2" };
	size_t len0 = 0, len;
	char *first = NULL, *got;
	struct result r;
	unsigned i;

	gen("p.kv", "200K", "20000", "zipf:1.1");
	for (i = 0; i < 4; i++) {
		RUN(&r, "aggregate", "--quiet", "--agg", "count,sum,min,max,avg", "--mem", "96M",
		    "--procs", procs[i], "--threads", threads[i], "--tmp", dir, file("p.kv"),
		    file("p.csv"));
		expect(&r, 0, "");
		got = read_file(file("p.csv"), &len);
		if (!first) {
			first = got;
			len0 = len;
			continue;
		}
		ck_assert_uint_eq(len, len0);
		ck_assert_msg(!memcmp(first, got, len), "--procs %s differs", procs[i]);
		free(got);
	}
	free(first);
}
END_TEST

START_TEST(kv_output_layout)
{
	struct row rows[] = { { 7, -3 }, { 2, 10 }, { 7, 5 }, { 2, 1 }, { 9, 4 } };
	struct result r;
	uint8_t *got;
	size_t len;
	uint64_t u;
	int64_t i;
	double d;

	write_file(file("k.kv"), rows, sizeof(rows));
	RUN(&r, "aggregate", "--quiet", "--agg", "count,sum,min,max,avg", "--output-format", "kv",
	    "--tmp", dir, file("k.kv"), file("k.out"));
	expect(&r, 0, "");
	got = read_file(file("k.out"), &len);
	ck_assert_uint_eq(len, 3 * 48);
	memcpy(&u, got, 8);
	ck_assert_uint_eq(u, 2);
	memcpy(&u, got + 8, 8);
	ck_assert_uint_eq(u, 2);
	memcpy(&i, got + 16, 8);
	ck_assert_int_eq(i, 11);
	memcpy(&i, got + 24, 8);
	ck_assert_int_eq(i, 1);
	memcpy(&i, got + 32, 8);
	ck_assert_int_eq(i, 10);
	memcpy(&d, got + 40, 8);
	ck_assert(d == 5.5);
	memcpy(&u, got + 48, 8);
	ck_assert_uint_eq(u, 7);
	memcpy(&d, got + 88, 8);
	ck_assert(d == 1.0);
	free(got);
}
END_TEST

START_TEST(exact_sums_and_overflow)
{
	struct row ok[] = { { 1, INT64_MAX }, { 1, INT64_MAX }, { 1, -INT64_MAX }, { 1, -5 },
			    { 3, INT64_MIN }, { 3, 1 } };
	struct row bad[] = { { 4, 1 }, { 5, INT64_MAX }, { 5, 2 }, { 6, INT64_MIN }, { 6, -1 } };
	struct result r;

	write_file(file("ok.kv"), ok, sizeof(ok));
	RUN(&r, "aggregate", "--quiet", "--agg", "sum,avg,count", "--tmp", dir, file("ok.kv"),
	    file("ok.csv"));
	expect(&r, 0, "");
	expect_file(file("ok.csv"), "key,sum,avg,count\n"
		    "1,9223372036854775802,2305843009213693950.5,4\n"
		    "3,-9223372036854775807,-4611686018427387903.5,2\n");
	write_file(file("bad.kv"), bad, sizeof(bad));
	RUN(&r, "aggregate", "--agg", "count,sum", "--procs", "3", "--tmp", dir, file("bad.kv"),
	    file("bad.csv"));
	expect(&r, 1, "pems-run: error: aggregate: sum of key 5 overflows int64\n");
	ck_assert_int_ne(access(file("bad.csv"), F_OK), 0);
	ck_assert_int_ne(access(file("bad.csv.pems-tmp"), F_OK), 0);
	/* avg alone never overflows */
	RUN(&r, "aggregate", "--quiet", "--agg", "avg", "--tmp", dir, file("bad.kv"), file("bad.csv"));
	expect(&r, 0, "");
	expect_file(file("bad.csv"), "key,avg\n4,1\n5,4611686018427387904.5\n6,-4611686018427387904.5\n");
}
END_TEST

/* Sums whose partials travel between VPs: key 1's running sum leaves int64
 * many times but ends at a small total; keys 2 and 8 each have one big
 * value per VP (every VP's partial fits int64, their combination does
 * not), so the overflow is only seen where the partials meet; the report
 * names the lowest such key, for csv and kv output alike, and no output
 * file is left. */
START_TEST(overflow_of_combined_partials)
{
	enum { N = 84000, V = 4 };	/* N / V divisible by 3: specials are not key 1 */
	struct row *rows = malloc(N * sizeof(*rows));
	struct result r;
	char *ref;
	size_t i, n = 0;
	const char *fmts[] = { "csv", "kv" };
	unsigned f;

	ck_assert_ptr_nonnull(rows);
	for (i = 0; i < N; i++) {
		if (i % (N / V) == 7) {		/* one per VP slice */
			rows[i].key = 8;
			rows[i].val = INT64_MIN / 2 - 1;
		} else if (i % (N / V) == 11) {
			rows[i].key = 2;
			rows[i].val = INT64_MAX / 2 + 1;
		} else if (i % 3 == 0) {
			rows[i].key = 1;
			rows[i].val = (i / 3) % 4 < 2 ? INT64_MAX : -INT64_MAX + 1;
		} else {
			rows[i].key = 3 + i % 5;
			rows[i].val = (int64_t)(i % 1001) - 500;
		}
	}
	write_file(file("ov.kv"), rows, N * sizeof(*rows));
	for (f = 0; f < 2; f++) {
		RUN(&r, "aggregate", "--agg", "count,sum,avg", "--procs", "4", "--output-format",
		    fmts[f], "--tmp", dir, file("ov.kv"), file("ov.out"));
		expect(&r, 1, "pems-run: error: aggregate: sum of key 2 overflows int64\n");
		ck_assert_int_ne(access(file("ov.out"), F_OK), 0);
	}
	/* without keys 2 and 8 the exact totals come out, whatever --procs */
	for (i = 0; i < N; i++)
		if (rows[i].key != 2 && rows[i].key != 8)
			rows[n++] = rows[i];
	write_file(file("ov2.kv"), rows, n * sizeof(*rows));
	ref = reference_csv(rows, n, "count,sum,min,max,avg");
	for (f = 0; f < 3; f++) {
		const char *procs[] = { "0", "4", "29" };

		RUN(&r, "aggregate", "--quiet", "--agg", "count,sum,min,max,avg", "--procs", procs[f],
		    "--tmp", dir, file("ov2.kv"), file("ov2.csv"));
		expect(&r, 0, "");
		expect_file(file("ov2.csv"), ref);
	}
	free(ref);
	free(rows);
}
END_TEST

START_TEST(empty_input_and_one_group)
{
	struct result r;
	struct row *rows = malloc(100000 * sizeof(*rows));
	char *want;
	size_t i;

	write_file(file("e.kv"), "", 0);
	RUN(&r, "aggregate", "--quiet", "--agg", "count,sum,min,max,avg", "--tmp", dir,
	    file("e.kv"), file("e.csv"));
	expect(&r, 0, "");
	expect_file(file("e.csv"), "key,count,sum,min,max,avg\n");
	write_file(file("e.csv.in"), "key,value\n", 10);
	RUN(&r, "aggregate", "--quiet", "--input-format", "csv", "--tmp", dir,
	    file("e.csv.in"), file("e2.csv"));
	expect(&r, 0, "");
	expect_file(file("e2.csv"), "key,count\n");
	for (i = 0; i < 100000; i++) {
		rows[i].key = 42;
		rows[i].val = (int64_t)(i * 7919 % 1000) - 500;
	}
	write_file(file("one.kv"), rows, 100000 * sizeof(*rows));
	RUN(&r, "aggregate", "--quiet", "--agg", "count,sum,min,max,avg", "--procs", "13",
	    "--tmp", dir, file("one.kv"), file("one.csv"));
	expect(&r, 0, "");
	want = reference_csv(rows, 100000, "count,sum,min,max,avg");
	expect_file(file("one.csv"), want);
	free(want);
	free(rows);
}
END_TEST

START_TEST(csv_input)
{
	const char csv[] = "id,name,\"amount\"\n"
			   "3,x,10\n"
			   "1,\"a, b\",-4\r\n"
			   "\n"
			   "3,\"q\"\"q\",\"7\"\n"
			   "18446744073709551615,z,-9223372036854775808\n"
			   "1,w,5";
	struct result r;

	write_file(file("in.csv"), csv, sizeof(csv) - 1);
	RUN(&r, "aggregate", "--quiet", "--input-format", "csv", "--key", "id", "--value", "amount",
	    "--agg", "count,sum,min,max,avg", "--procs", "3", "--tmp", dir, file("in.csv"),
	    file("o.csv"));
	expect(&r, 0, "");
	expect_file(file("o.csv"), "key,count,sum,min,max,avg\n"
		    "1,2,1,-4,5,0.5\n"
		    "3,2,17,7,10,8.5\n"
		    "18446744073709551615,1,-9223372036854775808,-9223372036854775808,-9223372036854775808,-9223372036854775808\n");
	/* by 1-based index */
	RUN(&r, "aggregate", "--quiet", "--input-format", "csv", "--key", "1", "--value", "3",
	    "--agg", "sum", "--tmp", dir, file("in.csv"), file("o2.csv"));
	expect(&r, 0, "");
	expect_file(file("o2.csv"), "key,sum\n1,1\n3,17\n18446744073709551615,-9223372036854775808\n");
}
END_TEST

/* splitmix64: the test's own key source (independent of pems-run gen) */
static uint64_t mix64(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void kv_against_reference(struct row *rows, size_t n, const char *procs)
{
	struct result r;
	char *want;

	write_file(file("f.kv"), rows, n * sizeof(*rows));
	RUN(&r, "aggregate", "--quiet", "--agg", "count,sum,min,max", "--procs", procs,
	    "--tmp", dir, file("f.kv"), file("f.csv"));
	expect(&r, 0, "");
	want = reference_csv(rows, n, "count,sum,min,max");	/* sorts rows */
	expect_file(file("f.csv"), want);
	free(want);
}

/* Keys spanning 2^63 or more with few rows per owner: the owner's
 * bucket arithmetic once shifted by 64 (a crash, or a huge allocation). */
START_TEST(full_range_keys)
{
	static const uint64_t five[] = { 1ull << 63, UINT64_MAX - 1, UINT64_MAX, 0, 1 };
	static const char *const procs[] = { "1", "2", "3", "8", "64", "0" };
	struct row *rows = malloc(100000 * sizeof(*rows));
	uint64_t keys[1000], st = 21;
	char csv[64 * 1000 + 64];
	struct result r;
	size_t i, len;
	unsigned p, seed;

	ck_assert_ptr_nonnull(rows);
	for (p = 0; p < 6; p++) {
		for (i = 0; i < 5; i++)
			rows[i] = (struct row){ five[i], (int64_t)i - 2 };
		kv_against_reference(rows, 5, procs[p]);
		for (i = 0; i < 1000; i++)
			rows[i] = (struct row){ five[i % 5], (int64_t)i };
		kv_against_reference(rows, 1000, procs[p]);
	}
	for (seed = 0; seed < 4; seed++) {
		for (i = 0; i < 1000; i++)
			keys[i] = mix64(&st);
		for (i = 0; i < 100000; i++)
			rows[i] = (struct row){ keys[mix64(&st) % 1000], (int64_t)mix64(&st) >> 20 };
		kv_against_reference(rows, 100000, seed & 1 ? "0" : "16");
	}
	len = (size_t)sprintf(csv, "key,value\n");
	for (i = 0; i < 1000; i++)
		len += (size_t)sprintf(csv + len, "%llu,1\n",
				       i == 500 ? (unsigned long long)UINT64_MAX : (unsigned long long)i);
	write_file(file("max.csv"), csv, len);
	RUN(&r, "aggregate", "--quiet", "--input-format", "csv", "--tmp", dir, file("max.csv"),
	    file("max.out"));
	expect(&r, 0, "");
	for (i = 0; i < 1000; i++)
		rows[i] = (struct row){ i == 500 ? UINT64_MAX : i, 1 };
	{
		char *want = reference_csv(rows, 1000, "count");

		expect_file(file("max.out"), want);
		free(want);
	}
	free(rows);
}
END_TEST

static void csv_error(const char *text, const char *key, const char *value, const char *msg)
{
	char want[1024];
	struct result r;

	write_file(file("bad.csv"), text, strlen(text));
	RUN(&r, "aggregate", "--input-format", "csv", "--key", key, "--value", value,
	    "--procs", "4", "--tmp", dir, file("bad.csv"), file("bo.csv"));
	snprintf(want, sizeof(want), "pems-run: error: aggregate: %s: %s\n", file("bad.csv"), msg);
	expect(&r, 1, want);
	ck_assert_int_ne(access(file("bo.csv"), F_OK), 0);
}

START_TEST(csv_errors)
{
	csv_error("k,v\n1,2\n2,x3\n", "k", "v", "line 3, column 2: value 'x3' is not a 64-bit integer");
	csv_error("k,v\n1,2\n-2,3\n", "k", "v", "line 3, column 1: key '-2' is not an unsigned 64-bit integer");
	csv_error("k,v\n1,99999999999999999999\n", "k", "v",
		  "line 2, column 2: value '99999999999999999999' is not a 64-bit integer");
	csv_error("k,v\n1,2\n3\n", "k", "v", "line 3: 1 fields, but the header has 2 (column 2 missing)");
	csv_error("k,v\n1,2\n3,4,5\n", "k", "v", "line 3, column 3: more fields than the 2 of the header");
	csv_error("k,v\n1,2\n\"3,4\n", "k", "v",
		  "line 3, column 1: malformed quoted field (unterminated, or text after the closing quote)");
	csv_error("k,v\n1,2\n", "key", "v", "no key column 'key' in the header (line 1)");
	csv_error("k,v\n1,2\n", "k", "7", "value column 7 does not exist: the header has 2 columns");
	csv_error("", "k", "v", "empty file: a csv input needs a header row");
}
END_TEST

START_TEST(csv_error_line_numbers_across_vps)
{
	char *text = malloc(2000000), want[256];
	size_t len = 0;
	unsigned i;
	struct result r;

	len += (size_t)sprintf(text, "key,value\n");
	for (i = 0; i < 100000; i++)
		len += (size_t)sprintf(text + len, "%u,%u\n", i % 977, i);
	len += (size_t)sprintf(text + len, "5,oops\n7,8\n");
	write_file(file("big.csv"), text, len);
	RUN(&r, "aggregate", "--input-format", "csv", "--procs", "7", "--tmp", dir,
	    file("big.csv"), file("bo.csv"));
	snprintf(want, sizeof(want),
		 "pems-run: error: aggregate: %s: line 100002, column 2: value 'oops' is not a 64-bit integer\n",
		 file("big.csv"));
	expect(&r, 1, want);
	free(text);
}
END_TEST

START_TEST(usage_and_kv_size)
{
	struct result r;

	RUN(&r, "aggregate", "--help");
	expect(&r, 0, "");
	write_file(file("odd.kv"), "0123456789abcdefXYZ", 19);
	RUN(&r, "aggregate", "--tmp", dir, file("odd.kv"), file("x.csv"));
	{
		char want[512];

		snprintf(want, sizeof(want),
			 "pems-run: error: aggregate: %s: size 19 is not a multiple of the 16-byte kv record (u64 key, i64 value)\n",
			 file("odd.kv"));
		expect(&r, 1, want);
	}
	RUN(&r, "aggregate", "--agg", "median", file("odd.kv"), file("x.csv"));
	expect(&r, 2, "pems-run: error: aggregate: --agg median: unknown aggregate 'median'; use count, sum, min, max or avg\n");
	RUN(&r, "aggregate", "--key", "a", file("odd.kv"), file("x.csv"));
	expect(&r, 2, "pems-run: error: aggregate: --key and --value need --input-format csv\n");
	RUN(&r, "gen", "--format", "kv", "--count", "10", "--skew", "zipf:0", file("x.kv"));
	expect(&r, 2, "pems-run: error: gen: --skew zipf:0: give zipf:S with 0 < S <= 100, e.g. zipf:1.1\n");
}
END_TEST

/* ---- the C API in-process: a user-defined aggregate ---- */

/* sum of squares, exact: an unsigned 128-bit state; -ERANGE past u64 */
static void sq_init(void *s) { memset(s, 0, 16); }
static void sq_update(void *s, int64_t v)
{
	unsigned __int128 a;

	memcpy(&a, s, 16);
	a += (unsigned __int128)((__int128)v * v);
	memcpy(s, &a, 16);
}
static void sq_combine(void *s, const void *o)
{
	unsigned __int128 a, b;

	memcpy(&a, s, 16);
	memcpy(&b, o, 16);
	a += b;
	memcpy(s, &a, 16);
}
static int sq_final(const void *s, struct pems_agg_result *r)
{
	unsigned __int128 a;

	memcpy(&a, s, 16);
	if (a > UINT64_MAX)
		return -ERANGE;
	r->type = PEMS_AGG_UINT64;
	r->u = (uint64_t)a;
	return 0;
}
static const struct pems_aggregate sumsq = { "sumsq", 16, sq_init, sq_update, sq_combine, sq_final };

#define API_G 3000		/* groups */
#define API_N 300000		/* rows */
#define API_MAXV 64

static uint64_t api_mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* row i: 30 % of the rows in group 0 (a heavy key), the rest uniform;
 * keys clustered in [17, 3e9] (not spread over the u64 range) */
static uint64_t api_group(uint64_t i)
{
	return i % 10 < 3 ? 0 : api_mix(i + 7) % API_G;
}
static uint64_t api_key(uint64_t g) { return g * 1000003ull + 17; }
static int64_t api_val(uint64_t i) { return (int64_t)(api_mix(i) % 2000001) - 1000000; }

struct api_out {
	uint64_t count, sq;
	int64_t sum, min, max;
	int seen;
};
static struct api_out api_got[API_G];
static uint64_t api_first[API_MAXV], api_last[API_MAXV], api_ngroups[API_MAXV];
static int api_order_bad;
static bool api_user;		/* with the user-defined aggregate */

struct api_walk {
	unsigned pid;
	uint64_t prev, n;
};

static void api_fn(uint64_t key, const void *states, void *arg)
{
	struct api_walk *w = arg;
	const uint8_t *st = states;
	struct api_out *o = &api_got[(key - 17) / 1000003];
	__int128 sum;

	if (w->n && key <= w->prev)
		api_order_bad = 1;
	if (!w->n)
		api_first[w->pid] = key;
	api_last[w->pid] = key;
	w->prev = key;
	w->n++;
	o->seen++;
	if (api_user) {	/* count, sumsq, max: offsets 0, 8, 24 */
		unsigned __int128 q;

		memcpy(&o->count, st, 8);
		memcpy(&q, st + 8, 16);
		o->sq = (uint64_t)q;
		memcpy(&o->max, st + 24, 8);
		return;
	}
	/* count, sum, min, max, avg: 0, 8, 24, 32, 40 */
	memcpy(&o->count, st, 8);
	memcpy(&sum, st + 8, 16);
	o->sum = (int64_t)sum;
	memcpy(&o->min, st + 24, 8);
	memcpy(&o->max, st + 32, 8);
	memcpy(&sum, st + 40, 16);	/* avg: sum and count again */
	if ((int64_t)sum != o->sum)
		api_order_bad = 2;
}

static void api_spmd(void *arg)
{
	const struct pems_aggregate *user[] = { pems_aggregate_builtin("count"), &sumsq,
						pems_aggregate_builtin("max") };
	const struct pems_aggregate *core[] = {
		pems_aggregate_builtin("count"), pems_aggregate_builtin("sum"),
		pems_aggregate_builtin("min"), pems_aggregate_builtin("max"),
		pems_aggregate_builtin("avg") };
	unsigned v = bsp_nprocs(), pid = bsp_pid();
	uint64_t lo = (uint64_t)API_N * pid / v, hi = (uint64_t)API_N * (pid + 1) / v, i, ng = 0;
	uint64_t *keys = pems_malloc(PEMS_GROUPBY_SAMPLES * sizeof(*keys));
	uint64_t *rows = pems_malloc((hi - lo) * 16 + 1);
	struct pems_groupby_plan *plan;
	struct pems_groupby *g;
	struct api_walk w = { pid, 0, 0 };
	size_t m = 0;

	(void)arg;
	for (i = lo; i < hi; i++) {
		rows[2 * (i - lo)] = api_key(api_group(i));
		rows[2 * (i - lo) + 1] = (uint64_t)api_val(i);
	}
	for (i = lo; i < hi && m < PEMS_GROUPBY_SAMPLES; i += 1 + (hi - lo) / PEMS_GROUPBY_SAMPLES)
		keys[m++] = api_key(api_group(i));
	plan = pems_groupby_plan(keys, m);
	pems_free(keys);
	g = pems_groupby(plan, rows, hi - lo, api_user ? user : core, api_user ? 3 : 5, 0, &ng);
	pems_free(plan);
	api_ngroups[pid] = ng;
	pems_groupby_walk(g, api_fn, &w);
	pems_groupby_free(g);
}

/* run the C API with @v VPs and check every group against a plain loop */
static void api_check(unsigned v, bool user)
{
	static struct api_out want[API_G];
	struct pems_config cfg;
	uint64_t i, groups = 0;
	unsigned p;

	memset(want, 0, sizeof(want));
	for (i = 0; i < API_N; i++) {
		struct api_out *o = &want[api_group(i)];
		int64_t x = api_val(i);

		if (!o->count) {
			o->min = INT64_MAX;
			o->max = INT64_MIN;
		}
		o->count++;
		o->sum += x;
		o->sq += (uint64_t)(x * x);
		o->min = x < o->min ? x : o->min;
		o->max = x > o->max ? x : o->max;
	}
	memset(api_got, 0, sizeof(api_got));
	memset(api_first, 0, sizeof(api_first));
	memset(api_last, 0, sizeof(api_last));
	memset(api_ngroups, 0, sizeof(api_ngroups));
	api_order_bad = 0;
	api_user = user;
	pems_config_init(&cfg);
	cfg.procs = v;
	cfg.threads = 2;
	cfg.mem = 256u << 20;
	cfg.mu = 16u << 20;
	cfg.tmp[0] = dir;
	cfg.ntmp = 1;
	cfg.quiet = true;
	ck_assert_int_eq(pems_configure(&cfg), 0);
	ck_assert_int_eq(pems_spmd(NULL, api_spmd, NULL), 0);
	ck_assert_int_eq(api_order_bad, 0);
	for (i = 0; i < API_G; i++) {
		ck_assert_int_eq(api_got[i].seen, 1);
		ck_assert_uint_eq(api_got[i].count, want[i].count);
		ck_assert_int_eq(api_got[i].max, want[i].max);
		if (user) {
			ck_assert_uint_eq(api_got[i].sq, want[i].sq);
		} else {
			ck_assert_int_eq(api_got[i].sum, want[i].sum);
			ck_assert_int_eq(api_got[i].min, want[i].min);
		}
	}
	for (p = 0; p < v; p++) {
		groups += api_ngroups[p];
		/* owners' key ranges increase with the VP */
		if (p && api_ngroups[p] && api_ngroups[p - 1])
			ck_assert_uint_gt(api_first[p], api_last[p - 1]);
	}
	ck_assert_uint_eq(groups, API_G);
}

START_TEST(c_api_user_aggregate)
{
	static const unsigned vs[] = { 1, 3, 8 };

	api_check(vs[_i], true);
}
END_TEST

START_TEST(c_api_builtins)
{
	static const unsigned vs[] = { 1, 5 };

	api_check(vs[_i], false);
}
END_TEST

static Suite *aggregate_suite(void)
{
	Suite *s = suite_create("aggregate");
	TCase *tc = tcase_create("results");
	TCase *te = tcase_create("errors");

	tcase_set_timeout(tc, 300);	/* sanitizer builds on a loaded machine */
	tcase_set_timeout(te, 60);
	tcase_add_test(tc, every_aggregate_uniform);
	tcase_add_test(tc, zipf_and_heavy_keys);
	tcase_add_test(tc, all_distinct_spills);
	tcase_add_test(tc, same_output_any_procs_threads);
	tcase_add_test(tc, kv_output_layout);
	tcase_add_test(tc, empty_input_and_one_group);
	tcase_add_test(tc, csv_input);
	tcase_add_test(tc, full_range_keys);
	tcase_add_loop_test(tc, c_api_user_aggregate, 0, 3);
	tcase_add_loop_test(tc, c_api_builtins, 0, 2);
	tcase_add_test(te, exact_sums_and_overflow);
	tcase_add_test(te, overflow_of_combined_partials);
	tcase_add_test(te, csv_errors);
	tcase_add_test(te, csv_error_line_numbers_across_vps);
	tcase_add_test(te, usage_and_kv_size);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, te);
	return s;
}

int main(void)
{
	int rc = cli_test_init("check_aggregate");

	return rc ? rc : cli_test_run(aggregate_suite());
}
