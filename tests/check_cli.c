/*
 * check_cli.c - the pems-run program as a user sees it: exit statuses,
 * exact messages, gen determinism, verify, sort argument checks and
 * gen -> sort -> verify round trips.
 *
 * Runs the binary named by $PEMS_RUN (default ./build/pems-run) in a
 * scratch directory ($PEMS_TEST_TMP, else a new /tmp/check_cli.XXXXXX).
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

/* ---- help, version, unknown commands and options ---- */

static const char *const commands[] = { "gen", "verify", "sort" };
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

START_TEST(help_exits_0)
{
	struct result r;
	char want[64];

	RUN(&r, "--help");
	expect(&r, 0, "");
	ck_assert(!strncmp(r.out, "Usage: pems-run COMMAND", 23));
	if (_i < (int)NCOMMANDS) {
		RUN(&r, commands[_i], "--help");
		expect(&r, 0, "");
		snprintf(want, sizeof(want), "Usage: pems-run %s ", commands[_i]);
		ck_assert_msg(!strncmp(r.out, want, strlen(want)), "%s", r.out);
		RUN(&r, commands[_i], "-h");
		expect(&r, 0, "");
	}
}
END_TEST

START_TEST(version_exits_0)
{
	struct result r;

	RUN(&r, "--version");
	expect(&r, 0, "");
	ck_assert(!strncmp(r.out, "pems-run ", 9));
}
END_TEST

START_TEST(no_or_unknown_command_is_usage_error)
{
	struct result r;
	const char *none[] = { NULL };

	run_argv(&r, none);
	expect(&r, 2, "pems-run: error: no command given; see 'pems-run --help'\n");
	RUN(&r, "frobnicate");
	expect(&r, 2, "pems-run: error: unknown command 'frobnicate'; see 'pems-run --help'\n");
	RUN(&r, "--bogus");
	expect(&r, 2, "pems-run: error: unknown option '--bogus'; see 'pems-run --help'\n");
}
END_TEST

START_TEST(unknown_option_is_usage_error)
{
	const char *cmd = commands[_i];
	struct result r;
	char want[256];

	RUN(&r, cmd, "--bogus", "x");
	snprintf(want, sizeof(want),
		 "pems-run: error: %s: unknown option '--bogus'; see 'pems-run %s --help'\n",
		 cmd, cmd);
	expect(&r, 2, want);
	RUN(&r, cmd, "--format");
	snprintf(want, sizeof(want),
		 "pems-run: error: %s: option '--format' needs a value; see 'pems-run %s --help'\n",
		 cmd, cmd);
	expect(&r, 2, want);
	RUN(&r, cmd, "--format", "u32", "x");
	snprintf(want, sizeof(want),
		 "pems-run: error: %s: --format u32: unknown format; use %s\n", cmd,
		 strcmp(cmd, "sort") ? "u64, rec100 or ascii100" :
		 "lines, csv, u64, rec100 or ascii100, or --record-size N");
	expect(&r, 2, want);
}
END_TEST

START_TEST(gen_usage_errors)
{
	struct result r;

	RUN(&r, "gen", "--format", "u64", file("x"));
	expect(&r, 2, "pems-run: error: gen: --count is required\n");
	RUN(&r, "gen", "--count", "10", file("x"));
	expect(&r, 2, "pems-run: error: gen: --format is required (u64, rec100 or ascii100)\n");
	RUN(&r, "gen", "--format", "u64", "--count", "ten", file("x"));
	expect(&r, 2, "pems-run: error: gen: --count ten: not a record count; give e.g. --count 1M\n");
	RUN(&r, "gen", "--format", "u64", "--count", "10", "--skew", "odd", file("x"));
	expect(&r, 2, "pems-run: error: gen: --skew odd: unknown distribution; use uniform, zipf, dup, sorted, reverse or equal\n");
	RUN(&r, "gen", "--format", "u64", "--count", "10");
	expect(&r, 2, "pems-run: error: gen: expected one output file; see 'pems-run gen --help'\n");
	ck_assert_int_eq(access(file("x"), F_OK), -1);
}
END_TEST

/* ---- gen ---- */

static const char *const formats[] = { "u64", "rec100", "ascii100" };
static const size_t rec_size[] = { 8, 100, 100 };
static const char *const skews[] = { "uniform", "zipf", "dup", "sorted",
				     "reverse", "equal" };
#define NSKEWS (sizeof(skews) / sizeof(skews[0]))

static void gen(const char *fmt, const char *skew, const char *count,
		const char *seed, const char *out)
{
	struct result r;

	RUN(&r, "gen", "--format", fmt, "--count", count, "--seed", seed,
	    "--skew", skew, "--quiet", out);
	expect(&r, 0, "");
}

START_TEST(gen_is_deterministic)
{
	unsigned f = _i / NSKEWS, s = _i % NSKEWS;
	const char *a = file("a"), *b = file("b"), *c = file("c");
	struct stat st;

	gen(formats[f], skews[s], "30000", "42", a);
	gen(formats[f], skews[s], "30000", "42", b);
	ck_assert_int_eq(stat(a, &st), 0);
	ck_assert_uint_eq((size_t)st.st_size, 30000 * rec_size[f]);
	ck_assert_msg(same_bytes(a, b), "%s %s: same seed, different bytes",
		      formats[f], skews[s]);
	gen(formats[f], skews[s], "30000", "43", c);
	if (strcmp(skews[s], "sorted") && strcmp(skews[s], "reverse") &&
	    strcmp(formats[f], "u64"))
		ck_assert_msg(!same_bytes(a, c), "seed ignored");
	if (!strcmp(skews[s], "uniform"))
		ck_assert_msg(!same_bytes(a, c), "seed ignored");
}
END_TEST

START_TEST(gen_reports_and_leaves_no_partial_output)
{
	char nodir[4200], want[8400];
	const char *out = file("ten.u64");
	struct result r;

	RUN(&r, "gen", "--format", "u64", "--count", "10", out);
	expect(&r, 0, NULL);
	snprintf(want, sizeof(want), "gen: 10 u64 records (80 B) to %s in ", out);
	ck_assert_msg(!strncmp(r.err, want, strlen(want)), "%s", r.err);
	snprintf(nodir, sizeof(nodir), "%s/none/out", dir);
	RUN(&r, "gen", "--format", "u64", "--count", "10", nodir);
	snprintf(want, sizeof(want),
		 "pems-run: error: gen: output directory '%s/none' does not exist\n", dir);
	expect(&r, 1, want);
}
END_TEST

/* ascii100 lines are printable and order like the rec100 keys. */
START_TEST(gen_ascii100_orders_like_rec100)
{
	const char *bin = file("k.rec100"), *txt = file("k.ascii100");
	size_t lb, lt, i, j, n = 4000;
	uint8_t *b, *t;
	int cb, ct;

	gen("rec100", "uniform", "4000", "7", bin);
	gen("ascii100", "uniform", "4000", "7", txt);
	b = read_file(bin, &lb);
	t = read_file(txt, &lt);
	ck_assert_uint_eq(lt, n * 100);
	for (i = 0; i < lt; i++)
		if ((i % 100 == 99) != (t[i] == '\n') ||
		    (i % 100 != 99 && (t[i] < 0x20 || t[i] > 0x7e)))
			break;
	ck_assert_msg(i == lt, "byte %zu of the ascii100 file is wrong", i);
	for (i = 0; i + 1 < n; i++) {
		j = (i * 7919 + 13) % n;
		cb = memcmp(b + i * 100, b + j * 100, 10);
		ct = memcmp(t + i * 100, t + j * 100, 14);
		if ((cb > 0) != (ct > 0) || (cb < 0) != (ct < 0))
			break;
	}
	ck_assert_msg(i + 1 == n, "records %zu and %zu order differently", i, j);
	free(b);
	free(t);
}
END_TEST

/* ---- verify ---- */

START_TEST(verify_accepts_sorted_file)
{
	const char *s = file("sorted.u64");
	struct result r;

	gen("u64", "sorted", "1000", "1", s);
	RUN(&r, "verify", "--format", "u64", s);
	expect(&r, 0, "");
	ck_assert_msg(!strncmp(r.out, "verify: 1000 records, sorted, checksum 0x", 41),
		      "%s", r.out);
	ck_assert_uint_eq(strlen(r.out), 41 + 32 + 1);
	RUN(&r, "verify", "--format", "u64", s, "--against", s);
	expect(&r, 0, "");
	ck_assert_msg(strstr(r.out, " matches input\n") != NULL, "%s", r.out);
}
END_TEST

START_TEST(verify_reports_first_unsorted_record)
{
	const uint64_t keys[] = { 1, 2, 3, 2, 1 };
	const char *u = file("bad.u64"), *rev = file("rev.rec100");
	struct result r;
	char want[8400];

	write_file(u, keys, sizeof(keys));
	RUN(&r, "verify", "--format", "u64", u);
	snprintf(want, sizeof(want),
		 "pems-run: error: verify: %s: not sorted: record 3 is smaller than record 2\n", u);
	expect(&r, 1, want);
	ck_assert_str_eq(r.out, "");
	gen("rec100", "reverse", "100", "1", rev);
	RUN(&r, "verify", "--format", "rec100", rev);
	snprintf(want, sizeof(want),
		 "pems-run: error: verify: %s: not sorted: record 1 is smaller than record 0\n", rev);
	expect(&r, 1, want);
}
END_TEST

START_TEST(verify_rejects_partial_records_and_missing_files)
{
	const char *p = file("nine.u64"), *m = file("missing");
	struct result r;
	char want[8400];

	write_file(p, "123456789", 9);
	RUN(&r, "verify", "--format", "u64", p);
	snprintf(want, sizeof(want),
		 "pems-run: error: verify: %s: size 9 bytes is not a multiple of the 8-byte u64 record\n", p);
	expect(&r, 1, want);
	RUN(&r, "verify", "--format", "rec100", m);
	snprintf(want, sizeof(want),
		 "pems-run: error: verify: %s: No such file or directory\n", m);
	expect(&r, 1, want);
	RUN(&r, "verify", "--format", "u64");
	expect(&r, 2, "pems-run: error: verify: expected one FILE; see 'pems-run verify --help'\n");
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

START_TEST(verify_against_checks_count_and_checksum)
{
	const char *in = file("in.u64"), *out = file("out.u64");
	struct result r;
	char want[8400];
	uint64_t *k;
	size_t len;

	gen("u64", "uniform", "5000", "9", in);
	k = read_file(in, &len);
	qsort(k, len / 8, 8, cmp_u64);
	write_file(out, k, len);
	RUN(&r, "verify", "--format", "u64", out, "--against", in);
	expect(&r, 0, "");
	ck_assert_msg(!strncmp(r.out, "verify: 5000 records, sorted, checksum 0x", 41) &&
		      strstr(r.out, " matches input\n"), "%s", r.out);

	write_file(out, k, len - 8);
	RUN(&r, "verify", "--format", "u64", out, "--against", in);
	snprintf(want, sizeof(want),
		 "pems-run: error: verify: %s: 4999 records but input %s has 5000\n", out, in);
	expect(&r, 1, want);

	k[100] = k[101];	/* still sorted, one record changed */
	write_file(out, k, len);
	RUN(&r, "verify", "--format", "u64", out, "--against", in);
	ck_assert_int_eq(r.status, 1);
	snprintf(want, sizeof(want), "pems-run: error: verify: %s: checksum 0x", out);
	ck_assert_msg(!strncmp(r.err, want, strlen(want)), "%s", r.err);
	ck_assert(strstr(r.err, "(records lost, duplicated or changed)\n") != NULL);
	free(k);
}
END_TEST

/* ---- sort: argument checks before the runtime starts ---- */

START_TEST(sort_rejects_bad_arguments)
{
	const char *in = file("in.u64"), *nine = file("nine.u64");
	const char *missing = file("missing.u64"), *link = file("link.u64");
	char want[8400], nodir[4200];
	struct result r;

	gen("u64", "uniform", "1001", "1", in);
	write_file(nine, "123456789", 9);
	snprintf(nodir, sizeof(nodir), "%s/no/such/dir/out", dir);

	RUN(&r, "sort", "--format", "u64", missing, file("o"));
	snprintf(want, sizeof(want),
		 "pems-run: error: sort: cannot read input '%s': No such file or directory\n", missing);
	expect(&r, 1, want);

	RUN(&r, "sort", "--format", "u64", nine, file("o"));
	snprintf(want, sizeof(want),
		 "pems-run: error: sort: input '%s' is 9 bytes, not a multiple of the 8-byte u64 record\n", nine);
	expect(&r, 1, want);

	RUN(&r, "sort", "--format", "rec100", in, file("o"));
	snprintf(want, sizeof(want),
		 "pems-run: error: sort: input '%s' is 8008 bytes, not a multiple of the 100-byte rec100 record\n", in);
	expect(&r, 1, want);

	RUN(&r, "sort", "--format", "u64", "--quiet", in, in);	/* sorts in place */
	expect(&r, 0, NULL);
	RUN(&r, "verify", "--format", "u64", in);
	ck_assert_int_eq(r.status, 0);

	ck_assert_int_eq(symlink(in, link), 0);	/* written through, stays a link */
	RUN(&r, "sort", "--format", "u64", "--quiet", in, link);
	expect(&r, 0, NULL);
	{
		struct stat st;

		ck_assert_int_eq(lstat(link, &st), 0);
		ck_assert(S_ISLNK(st.st_mode));
	}

	RUN(&r, "sort", "--format", "u64", in, nodir);
	snprintf(want, sizeof(want),
		 "pems-run: error: sort: output directory '%s/no/such/dir' does not exist\n", dir);
	expect(&r, 1, want);
}
END_TEST

/* A budget too small for the job: one line that names the least budget
 * that works, exit 1 -- and that budget does work, one MiB less does not. */
START_TEST(sort_budget_error_names_least_budget)
{
	const char *in = file("big.u64"), *out = file("big.out");
	char want[8400], mem[32];
	unsigned need = 0;
	struct result r;

	gen("u64", "uniform", "4000000", "1", in);	/* 30.5 MiB */
	RUN(&r, "sort", "--format", "u64", "--mem", "48M", "--threads", "2", "--procs", "1",
	    "--quiet", in, out);
	ck_assert_int_eq(sscanf(r.err, "pems: error: sort: --mem 48 MiB is too small for 30 MiB of input with 2 threads; it needs --mem %uM", &need), 1);
	snprintf(want, sizeof(want),
		 "pems: error: sort: --mem 48 MiB is too small for 30 MiB of input with 2 threads; it needs --mem %uM or more (or fewer --threads)\n",
		 need);
	expect(&r, 1, want);
	ck_assert_uint_gt(need, 48);
	snprintf(mem, sizeof(mem), "%uM", need);
	RUN(&r, "sort", "--format", "u64", "--mem", mem, "--threads", "2", "--procs", "1",
	    "--quiet", in, out);
	expect(&r, 0, NULL);
	snprintf(mem, sizeof(mem), "%uM", need - 1);
	RUN(&r, "sort", "--format", "u64", "--mem", mem, "--threads", "2", "--procs", "1",
	    "--quiet", in, out);
	ck_assert_int_eq(r.status, 1);
}
END_TEST

START_TEST(sort_usage_errors)
{
	const char *in = file("in.u64");
	struct result r;

	RUN(&r, "sort", "--format", "nope", in, file("o"));
	expect(&r, 2, "pems-run: error: sort: --format nope: unknown format; use lines, csv, u64, rec100 or ascii100, or --record-size N\n");
	RUN(&r, "sort", "--format", "u64", in, file("o"), file("p"));
	expect(&r, 2, "pems-run: error: sort: expected IN and OUT; see 'pems-run sort --help'\n");
	RUN(&r, "sort", "--format", "u64", "-k2", in, file("o"));
	expect(&r, 2, "pems-run: error: sort: key options (-k -t -n -r ...) apply to --format lines and csv and to --record-size; u64 records sort by their built-in key\n");
	RUN(&r, "sort", "-k0", in, file("o"));
	expect(&r, 2, "pems-run: error: sort: invalid key '0': field number is zero\n");
	RUN(&r, "sort", "-t", "ab", in, file("o"));
	expect(&r, 2, "pems-run: error: sort: multi-character tab 'ab'\n");
	RUN(&r, "sort", "-k1,1nd", in, file("o"));
	expect(&r, 2, "pems-run: error: sort: options '-dn' are incompatible\n");
	RUN(&r, "sort", "--format", "u64", "--mem", "lots", in, file("o"));
	expect(&r, 2, "pems-run: error: sort: --mem lots: not a size; give e.g. --mem 512M\n");
	RUN(&r, "sort", "--format", "u64", "--io", "carrier-pigeon", in, file("o"));
	expect(&r, 2, "pems-run: error: sort: --io carrier-pigeon: unknown backend; use uring, aio or sync\n");
	RUN(&r, "sort", "--format", "u64", "--procs", "-3", in, file("o"));
	expect(&r, 2, "pems-run: error: sort: --procs -3: not a number; give e.g. --procs 4\n");
}
END_TEST

/* ---- sort round trips: gen -> sort -> verify --against ---- */

/* Generate @count records, sort them with the extra sort arguments
 * (NULL-terminated), verify; returns the sort's result for more checks. */
static void gen_sort_verify(const char *fmt, const char *skew,
			    const char *count, const char *const *extra,
			    struct result *sr)
{
	const char *in = file("rt.in"), *out = file("rt.out");
	const char *args[CLI_MAX_ARGS + 1];
	char want[128];
	struct result r;
	int n = 0, i;

	gen(fmt, skew, count, "11", in);
	args[n++] = "sort";
	args[n++] = "--format";
	args[n++] = fmt;
	args[n++] = "--tmp";
	args[n++] = dir;
	for (i = 0; extra && extra[i] && n < CLI_MAX_ARGS - 2; i++)
		args[n++] = extra[i];
	args[n++] = in;
	args[n++] = out;
	args[n] = NULL;
	run_argv(sr, args);
	ck_assert_msg(sr->status == 0, "sort %s %s %s: exit %d: %s", fmt, skew,
		      count, sr->status, sr->err);
	RUN(&r, "verify", "--format", fmt, out, "--against", in);
	snprintf(want, sizeof(want), "verify: %s records, sorted, checksum 0x", count);
	ck_assert_msg(r.status == 0 && !strncmp(r.out, want, strlen(want)),
		      "verify %s %s: exit %d: %s%s", fmt, skew, r.status,
		      r.out, r.err);
}

START_TEST(sort_round_trip)
{
	static const char *const quiet[] = { "--quiet", "--mem", "256M", NULL };
	unsigned f = _i / 3;
	const char *skew = (const char *[]){ "uniform", "dup", "equal" }[_i % 3];
	struct result r;

	gen_sort_verify(formats[f], skew, f ? "20000" : "100000", quiet, &r);
	/* --quiet: no summary (sanitizer builds may add their own lines) */
	ck_assert_msg(!strstr(r.err, "sort: ") && !strstr(r.err, "pems-run:"),
		      "%s", r.err);
}
END_TEST

START_TEST(sort_summary_and_stats_json)
{
	const char *json = file("stats.json");
	const char *a[] = { "--stats", "--stats-json", json, NULL };
	struct result r;
	size_t len;
	char *j;

	gen_sort_verify("u64", "uniform", "50000", a, &r);
	ck_assert_msg(strstr(r.err, "sort: 390.62 KiB in ") != NULL, "%s", r.err);
	ck_assert(strstr(r.err, "sort: stats: supersteps=") != NULL);
	j = read_file(json, &len);
	j[len] = '\0';
	ck_assert_msg(!strncmp(j, "{\"cmd\": \"sort\", \"bytes\": 400000,", 32), "%s", j);
	free(j);
}
END_TEST

/* The value of "KEY": in a --stats-json file (0 if absent). */
static unsigned long long json_u64(const char *j, const char *key)
{
	char pat[64];
	const char *q;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	q = strstr(j, pat);
	return q ? strtoull(q + strlen(pat), NULL, 10) : 0;
}

/* Every skew of u64 and rec100, 64 MiB under --mem 64M with every full
 * message chunk written (PEMS_MSG_HOLD=0): the sort must go through the
 * message store on disk, and still verify.  (Under --mem 1G the messages
 * stay in memory and this fails: checked when it was written.) */
START_TEST(sort_spills_every_skew)
{
	const char *fmt = formats[_i / NSKEWS], *skew = skews[_i % NSKEWS];
	const char *json = file("spill.json");
	const char *a[] = { "--quiet", "--mem", "64M", "--stats-json", json, NULL };
	struct result r;
	char count[24];
	size_t len;
	char *j;

	snprintf(count, sizeof(count), "%zu", ((size_t)64 << 20) / rec_size[_i / NSKEWS]);
	ck_assert_int_eq(setenv("PEMS_MSG_HOLD", "0", 1), 0);
	gen_sort_verify(fmt, skew, count, a, &r);
	j = read_file(json, &len);
	j[len] = '\0';
	ck_assert_msg(json_u64(j, "msg_written") >= json_u64(j, "bytes") / 2 &&
		      json_u64(j, "msg_read") == json_u64(j, "msg_written"),
		      "%s %s: the messages did not go through the disk: %s", fmt, skew, j);
	free(j);
}
END_TEST

/* Each test gets a fresh subdirectory of the scratch dir (fork mode). */
static void setup(void)
{
	static unsigned n;

	ck_assert(snprintf(dir, sizeof(dir), "%s/t%u.%ld", scratch, n++,
			   (long)getpid()) < (int)sizeof(dir));
	ck_assert_int_eq(mkdir(dir, 0755), 0);
}

static TCase *tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, setup, NULL);
	suite_add_tcase(s, tc);
	return tc;
}

/* index of record @i: rec100 bytes 10..17 big-endian, ascii100 hex 15..30 */
static uint64_t rec_index(const uint8_t *r, bool ascii)
{
	uint64_t v = 0;
	int b;

	for (b = 0; b < (ascii ? 16 : 8); b++)
		v = ascii ? v << 4 | (uint64_t)(r[15 + b] <= '9' ? r[15 + b] - '0'
							     : r[15 + b] - 'A' + 10)
			  : v << 8 | r[10 + b];
	return v;
}

/* GNU sort (LC_ALL=C) on ascii100 puts the records in the order of the
 * stable pems sort of the same rec100 keys, ties included. */
START_TEST(sort_agrees_with_gnu_sort_on_ascii100)
{
	const char *skew = (const char *[]){ "uniform", "dup", "zipf" }[_i];
	const char *txt = file("a.txt"), *txt_sorted = file("a.sorted");
	const char *a[] = { "--quiet", NULL };
	char cmd[9000];
	uint8_t *x, *y;
	size_t lx, ly, i;
	struct result r;

	gen_sort_verify("rec100", skew, "30000", a, &r);
	gen("ascii100", skew, "30000", "11", txt);
	snprintf(cmd, sizeof(cmd), "LC_ALL=C sort -o '%s' '%s'", txt_sorted, txt);
	ck_assert_int_eq(system(cmd), 0);
	x = read_file(file("rt.out"), &lx);
	y = read_file(txt_sorted, &ly);
	ck_assert_uint_eq(lx, ly);
	for (i = 0; i < lx / 100; i++)
		if (rec_index(x + i * 100, false) != rec_index(y + i * 100, true))
			break;
	ck_assert_msg(i == lx / 100, "%s: record %zu differs", skew, i);
	free(x);
	free(y);
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *u = tcase(s, "usage");
	TCase *g = tcase(s, "gen");
	TCase *v = tcase(s, "verify");
	TCase *so = tcase(s, "sort_arguments");
	TCase *rt = tcase(s, "sort_round_trip");

	tcase_add_loop_test(u, help_exits_0, 0, NCOMMANDS + 1);
	tcase_add_test(u, version_exits_0);
	tcase_add_test(u, no_or_unknown_command_is_usage_error);
	tcase_add_loop_test(u, unknown_option_is_usage_error, 0, NCOMMANDS);
	tcase_add_test(u, gen_usage_errors);
	tcase_add_loop_test(g, gen_is_deterministic, 0, 3 * NSKEWS);
	tcase_add_test(g, gen_ascii100_orders_like_rec100);
	tcase_add_test(g, gen_reports_and_leaves_no_partial_output);
	tcase_add_test(v, verify_accepts_sorted_file);
	tcase_add_test(v, verify_reports_first_unsorted_record);
	tcase_add_test(v, verify_rejects_partial_records_and_missing_files);
	tcase_add_test(v, verify_against_checks_count_and_checksum);
	tcase_add_test(so, sort_rejects_bad_arguments);
	tcase_add_test(so, sort_usage_errors);
	tcase_add_test(so, sort_budget_error_names_least_budget);
	tcase_set_timeout(rt, 600);
	tcase_add_loop_test(rt, sort_round_trip, 0, 6);
	tcase_add_loop_test(rt, sort_spills_every_skew, 0, 2 * NSKEWS);
	tcase_add_test(rt, sort_summary_and_stats_json);
	tcase_add_loop_test(rt, sort_agrees_with_gnu_sort_on_ascii100, 0, 3);
	return s;
}

int main(void)
{
	int rc = cli_test_init("check_cli");

	return rc ? rc : cli_test_run(cli_suite());
}
