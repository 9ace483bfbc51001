/*
 * check_gen.c - the test data generators (gen/, pems_gen.h): files are
 * the blocks the fill functions make, whatever the threads; the shapes
 * the options promise (records, kv, sgd, text, groupby); refused arguments; no file left on failure.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pems_gen.h"

static char dir[4096];

static char *path(const char *name)
{
	static char buf[4][4200];
	static int next;
	char *b = buf[next++ % 4];

	snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
	return b;
}

static void *slurp(const char *p, size_t *len)
{
	FILE *f = fopen(p, "rb");
	struct stat st;
	char *buf;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	*len = (size_t)st.st_size;
	buf = malloc(*len + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

static unsigned calls;
static void count_progress(const char *phase, uint64_t done, uint64_t total, void *arg)
{
	(void)phase;
	ck_assert_uint_le(done, total);
	ck_assert_ptr_eq(arg, &calls);
	calls++;
}

/* a file of more than one block is the records pems_gen_records makes,
 * in order, for every format and skew */
START_TEST(a_records_file_is_its_blocks_in_order)
{
	static const enum pems_format fmt[] = { PEMS_FMT_U64, PEMS_FMT_REC100, PEMS_FMT_ASCII100 };
	struct pems_gen_records g = { .fmt = fmt[_i % 3], .skew = (enum pems_gen_skew)(_i / 3),
				      .seed = 9 };
	size_t rs = pems_format_size(g.fmt), len;
	uint8_t *want, *got;

	g.count = 3 * ((8u << 20) / rs) + 7;	/* four blocks of the writer */
	want = malloc(g.count * rs);

	ck_assert_ptr_nonnull(want);
	calls = 0;
	ck_assert_int_eq(pems_gen_records_file(&g, path("r"), count_progress, &calls), 0);
	ck_assert_uint_gt(calls, 0);
	got = slurp(path("r"), &len);
	ck_assert_uint_eq(len, g.count * rs);
	pems_gen_records(&g, 0, 1000, want);
	pems_gen_records(&g, 1000, g.count - 1000, want + 1000 * rs);
	ck_assert_int_eq(memcmp(got, want, len), 0);
	free(got);
	free(want);
}
END_TEST

START_TEST(skews_parse_by_name)
{
	static const char *const names[] = { "uniform", "zipf", "dup", "sorted", "reverse", "equal" };
	enum pems_gen_skew s;
	unsigned i;

	for (i = 0; i < 6; i++) {
		ck_assert_int_eq(pems_gen_skew_parse(names[i], &s), 0);
		ck_assert_int_eq(s, (enum pems_gen_skew)i);
	}
	ck_assert_int_eq(pems_gen_skew_parse("zipf:1.1", &s), -EINVAL);
}
END_TEST

static int ucmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* kv rows draw from @groups keys (uniform and zipf), values within
 * [-1e6, 1e6]; zipf without groups is refused */
START_TEST(kv_rows_draw_from_the_groups)
{
	struct pems_gen_kv g = { .count = 100000, .groups = 1000, .zipf = _i ? 1.1 : 0, .seed = 3 };
	uint64_t *keys = malloc(g.count * sizeof(uint64_t));
	size_t len, i, distinct = 0;
	uint8_t *rows;

	ck_assert_int_eq(pems_gen_kv_file(&g, path("kv"), NULL, NULL), 0);
	rows = slurp(path("kv"), &len);
	ck_assert_uint_eq(len, g.count * 16);
	for (i = 0; i < g.count; i++) {
		int64_t v;

		memcpy(&keys[i], rows + i * 16, 8);
		memcpy(&v, rows + i * 16 + 8, 8);
		ck_assert(v >= -1000000 && v <= 1000000);
	}
	qsort(keys, g.count, sizeof(uint64_t), ucmp);
	for (i = 0; i < g.count; i++)
		distinct += !i || keys[i] != keys[i - 1];
	ck_assert_uint_le(distinct, 1000);
	ck_assert_uint_gt(distinct, _i ? 100 : 990);
	g.groups = 0;
	g.zipf = 1.1;
	ck_assert_int_eq(pems_gen_kv_file(&g, path("kv0"), NULL, NULL), -EINVAL);
	ck_assert_int_ne(access(path("kv0"), F_OK), 0);
	free(rows);
	free(keys);
}
END_TEST

/* dense: the header, 1 + dim floats per row; the weights beside it */
START_TEST(dense_rows_and_weights)
{
	struct pems_gen_sgd g = { .count = 20000, .dim = 7, .noise = 0.1, .seed = 1, .row_seed = 2 };
	size_t len;
	char *buf;

	ck_assert_int_eq(pems_gen_sgd_file(&g, path("d")), 0);
	buf = slurp(path("d"), &len);
	ck_assert_uint_eq(len, PEMS_SGD_DENSE_HEADER + g.count * 8 * 4);
	ck_assert_int_eq(memcmp(buf, PEMS_SGD_DENSE_MAGIC, 8), 0);
	free(buf);
	ck_assert_int_eq(access(path("d.weights"), R_OK), 0);
	g.libsvm = true;
	g.logistic = true;
	ck_assert_int_eq(pems_gen_sgd_file(&g, path("l")), 0);
	buf = slurp(path("l"), &len);
	ck_assert_msg(buf[0] == '+' || buf[0] == '-', "logistic labels are +1/-1");
	free(buf);
}
END_TEST

/* text: ends at or just past the size, in whole lines; csv has its header */
START_TEST(text_ends_with_a_whole_line_past_the_size)
{
	struct pems_gen_text g = { .csv = _i, .size = 1000000, .seed = 3 };
	uint64_t lines = 0, n = 0;
	size_t len, i;
	char *buf;

	ck_assert_int_eq(pems_gen_text_file(&g, path("t"), &lines, NULL, NULL), 0);
	buf = slurp(path("t"), &len);
	ck_assert_uint_ge(len, g.size);
	ck_assert_uint_lt(len, g.size + 512);
	ck_assert_int_eq(buf[len - 1], '\n');
	for (i = 0; i < len; i++)
		n += buf[i] == '\n';
	ck_assert_uint_ge(n, lines);	/* csv comments may hold newlines */
	if (g.csv)
		ck_assert_int_eq(strncmp(buf, "id,name,price,qty,comment\n", 26), 0);
	free(buf);
}
END_TEST

/* groupby: the header and one line per row; sorted rows ascend by id1 */
START_TEST(groupby_rows_and_order)
{
	struct pems_gen_groupby g = { .rows = 50000, .k = 10, .na = 0, .sorted = true, .seed = 2 };
	uint64_t bytes = 0, n = 0;
	size_t len, i;
	char *buf, *line, prev[8] = "";

	ck_assert_int_eq(pems_gen_groupby_file(&g, path("g"), &bytes, NULL, NULL), 0);
	buf = slurp(path("g"), &len);
	ck_assert_uint_eq(len, bytes);
	ck_assert_int_eq(strncmp(buf, "id1,id2,id3,id4,id5,id6,v1,v2,v3\n", 33), 0);
	for (i = 0; i < len; i++)
		n += buf[i] == '\n';
	ck_assert_uint_eq(n, g.rows + 1);
	for (line = strchr(buf, '\n') + 1; line < buf + len; line = strchr(line, '\n') + 1) {
		ck_assert_int_ge(strncmp(line, prev, 5), 0);
		memcpy(prev, line, 5);
	}
	g.k = 5000;	/* sorted needs k <= 4096 */
	ck_assert_int_eq(pems_gen_groupby_file(&g, path("g2"), NULL, NULL, NULL), -EINVAL);
	free(buf);
}
END_TEST

/* a file that cannot be written leaves nothing behind */
START_TEST(failures_leave_no_file)
{
	struct pems_gen_records g = { .fmt = PEMS_FMT_U64, .count = 10, .seed = 1 };

	ck_assert_int_eq(pems_gen_records_file(&g, path("nodir/r"), NULL, NULL), -ENOENT);
	ck_assert_int_ne(access(path("nodir"), F_OK), 0);
}
END_TEST

int main(void)
{
	const char *tmp = getenv("PEMS_TEST_TMP");
	Suite *s = suite_create("gen");
	TCase *tc = tcase_create("generators");
	SRunner *sr;
	int failed;

	snprintf(dir, sizeof(dir), "%s", tmp ? tmp : "/tmp");
	if (!tmp) {
		snprintf(dir, sizeof(dir), "/tmp/check_gen.%d", (int)getpid());
		mkdir(dir, 0700);
	}
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, a_records_file_is_its_blocks_in_order, 0, 18);
	tcase_add_test(tc, skews_parse_by_name);
	tcase_add_loop_test(tc, kv_rows_draw_from_the_groups, 0, 2);
	tcase_add_test(tc, dense_rows_and_weights);
	tcase_add_loop_test(tc, text_ends_with_a_whole_line_past_the_size, 0, 2);
	tcase_add_test(tc, groupby_rows_and_order);
	tcase_add_test(tc, failures_leave_no_file);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
