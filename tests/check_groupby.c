/*
 * check_groupby.c - `pems-run aggregate --by ... --agg ...` (the typed
 * GROUP BY over CSV, algorithms/groupby) as a user runs it: every
 * aggregate over every type with NULLs, expressions, topN, strings with
 * delimiters, quotes and newlines, CRLF, BOM, TSV, no header, NULL
 * tokens, empty file, header only, one group, all-distinct keys, the
 * same output at every --procs, stdin and stdout, every parser error with
 * its line and column, skip mode, usage errors.  Expected outputs are
 * written out by hand; tests/test_groupby.sh compares larger inputs with
 * sqlite3.
 *
 * Runs the binary named by $PEMS_RUN (default ./build/pems-run) in
 * $PEMS_TEST_TMP (else a new /tmp/check_groupby.XXXXXX).
 */
#include "cli_test.h"

/* The path of a new input file holding @text; the paths live in a ring of
 * their own (file() reuses 16 buffers), enough for one test's inputs. */
static char *in_file(const char *name, const char *text)
{
	static char ring[32][4096];
	static unsigned next;
	char *p = ring[next++ % 32];

	snprintf(p, sizeof(ring[0]), "%s", file(name));
	write_file(p, text, strlen(text));
	return p;
}

/* run with @args (IN and OUT appended) and compare OUT with @want */
#define GB_OK(want, in, ...) do {						\
	struct result *r_ = malloc(sizeof(*r_));				\
	char got_[OUT_MAX];							\
										\
	ck_assert_ptr_nonnull(r_);						\
	RUN(r_, "aggregate", "--quiet", "--mem", "64M", __VA_ARGS__, in, file("out.csv")); \
	ok(r_);									\
	slurp(file("out.csv"), got_, sizeof(got_));				\
	ck_assert_str_eq(got_, want);						\
	free(r_);								\
} while (0)

#define GB_FAIL(status, needle, in, ...) do {					\
	struct result *r_ = malloc(sizeof(*r_));				\
										\
	ck_assert_ptr_nonnull(r_);						\
	unlink(file("bad.csv"));						\
	RUN(r_, "aggregate", "--quiet", "--mem", "64M", __VA_ARGS__, in, file("bad.csv")); \
	fails_with(r_, status, needle);						\
	ck_assert_int_ne(access(file("bad.csv"), F_OK), 0);			\
	free(r_);								\
} while (0)

static const char TYPED[] =
	"g,i,f,s\n"
	"a,1,1.5,x\n"
	"a,,2.5,\n"
	"a,3,,y\n"
	"b,,,\n"
	"c,5,0.25,z\n";

START_TEST(every_aggregate_every_type_with_nulls)
{
	char *in = in_file("typed.csv", TYPED);

	GB_OK("g,count,count_i,count_f,count_s\na,3,2,2,2\nb,1,0,0,0\nc,1,1,1,1\n", in,
	      "--by", "g", "--agg", "count(*),count(i),count(f),count(s)");
	GB_OK("g,sum_i,sum_f,avg_i,mean_f\na,4,4,2,2\nb,,,,\nc,5,0.25,5,0.25\n", in,
	      "--by", "g", "--agg", "sum(i),sum(f),avg(i),mean(f)");
	GB_OK("g,min_i,max_i,min_f,max_f,min_s,max_s\na,1,3,1.5,2.5,x,y\nb,,,,,,\nc,5,5,0.25,0.25,z,z\n",
	      in, "--by", "g", "--agg", "min(i),max(i),min(f),max(f),min(s),max(s)");
	GB_OK("g,median_i,median_f,sd_i,stddev_f\na,2,2,1.4142135623730951,0.7071067811865476\n"
	      "b,,,,\nc,5,0.25,,\n", in,
	      "--by", "g", "--agg", "median(i),median(f),sd(i),stddev(f)");
	GB_OK("g,count_distinct_i,count_distinct_f,count_distinct_s\na,2,2,2\nb,0,0,0\nc,1,1,1\n",
	      in, "--by", "g", "--agg", "count(distinct i),count(distinct f),count(distinct s)");
	/* no --by: one group, also of no rows */
	GB_OK("count,sum_i,min_s\n5,9,x\n", in, "--agg", "count(*),sum(i),min(s)");
}
END_TEST

START_TEST(expressions_topn_corr)
{
	char *in = in_file("num.csv",
			   "k,x,y\n1,1,2\n1,2,4\n1,3,7\n1,,9\n2,4,1\n2,4,1\n3,7,\n");

	GB_OK("k,r,d,q,n\n1,2,3.8939393939393936,,-3\n2,0,-3.25,,-4\n3,0,,,-7\n", in, "--by", "k", "--as", "r,d,q,n",
	      "--agg", "max(x)-min(x),sum(y)/sum(x)-sum(x)/sum(y)+1/2,sum(x)/(min(x)-min(x)),-max(x)");
	GB_OK("k,top2_y\n1,9\n1,7\n2,1\n2,1\n", in, "--by", "k", "--agg", "top2(y)");
	GB_OK("k,bottom3_x\n1,1\n1,2\n1,3\n2,4\n2,4\n3,7\n", in, "--by", "k", "--agg", "bottom3(x)");
	/* corr of (1,2),(2,4),(3,7): 0.9933992677987828; a constant column or one pair: NULL */
	GB_OK("k,c,r2\n1,0.9933992677987828,0.9868421052631579\n2,,\n3,,\n", in, "--by", "k",
	      "--as", "c,r2", "--agg", "corr(x,y),pow(corr(x,y),2)");
}
END_TEST

START_TEST(strings_quotes_newlines_crlf_bom)
{
	char *in = in_file("q.csv", "\xef\xbb\xbf" "name,v\r\n"
			   "\"a,b\",1\r\n\"say \"\"hi\"\"\",2\r\n\"two\nlines\",3\r\n\"a,b\",4\r\n"
			   ",5\r\n\"\",6\r\n");

	/* "" is NULL, as an empty field (DuckDB's allow_quoted_nulls); NULL last */
	GB_OK("name,sum_v,count\n\"a,b\",5,2\n\"say \"\"hi\"\"\",2,1\n\"two\nlines\",3,1\n,11,2\n",
	      in, "--by", "name", "--agg", "sum(v),count(*)");
}
END_TEST

START_TEST(delimiters_header_null_token_schema)
{
	char *tsv = in_file("t.tsv", "a\tb\n1\t1.5\n1\tNA\n02\t3\n");
	char *nh = in_file("nh.csv", "x,10\ny,20\nx,30\n");

	GB_OK("a\tsum_b\n1\t1.5\n2\t3\n", tsv, "--delimiter", "tab", "--null", "NA", "--by", "a",
	      "--agg", "sum(b)");
	/* as strings, 1 and 02 are different keys, in byte order */
	GB_OK("a\tcount_b\n02\t1\n1\t1\n", tsv, "--delimiter", "tab", "--null", "NA",
	      "--schema", "a:str", "--by", "a", "--agg", "count(b)");
	GB_OK("c1,sum_c2\nx,40\ny,20\n", nh, "--no-header", "--by", "c1", "--agg", "sum(c2)");
	GB_OK("c1,m\nx,30\ny,20\n", nh, "--no-header", "--by", "1", "--agg", "max(2)", "--as", "m");
}
END_TEST

START_TEST(empty_header_only_one_group_all_distinct)
{
	char *empty = in_file("empty.csv", "");
	char *hdr = in_file("hdr.csv", "k,v\n");
	char *one = in_file("one.csv", "k,v\n7,1\n7,2\n7,3\n");
	static char big[8192], want[8192];
	int val[307] = { 0 };
	size_t n = 0, w = 0;
	int i;

	GB_OK("k,count\n", empty, "--by", "k", "--agg", "count(*)");
	GB_OK("k,count,sum_v\n", hdr, "--by", "k", "--agg", "count(*),sum(v)");
	GB_OK("count,sum_v\n0,\n", hdr, "--agg", "count(*),sum(v)");
	GB_OK("k,count,sum_v\n7,3,6\n", one, "--by", "k", "--agg", "count(*),sum(v)");
	/* 300 distinct keys i*7 mod 307, in descending i */
	n += (size_t)snprintf(big + n, sizeof(big) - n, "k,v\n");
	for (i = 300; i > 0; i--) {
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%d,%d\n", i * 7 % 307, i);
		val[i * 7 % 307] = i;
	}
	w += (size_t)snprintf(want + w, sizeof(want) - w, "k,count,sum_v\n");
	for (i = 0; i < 307; i++)
		if (val[i])
			w += (size_t)snprintf(want + w, sizeof(want) - w, "%d,1,%d\n", i, val[i]);
	in_file("distinct.csv", big);
	GB_OK(want, file("distinct.csv"), "--procs", "1", "--by", "k", "--agg", "count(*),sum(v)");
	GB_OK(want, file("distinct.csv"), "--procs", "4", "--by", "k", "--agg", "count(*),sum(v)");
	GB_OK(want, file("distinct.csv"), "--procs", "13", "--by", "k", "--agg", "count(*),sum(v)");
}
END_TEST

START_TEST(same_output_any_procs_stdin_stdout)
{
	struct result *r = malloc(sizeof(*r));
	static const char *const procs[] = { "1", "2", "5", "17" };
	char *ref = NULL, *cmd;
	size_t len, l2;
	int i;

	RUN(r, "gen", "--format", "groupby", "--rows", "5000", "--k", "7", "--na", "5", "--quiet",
	    file("g.csv"));
	ok(r);
	for (i = 0; i < 4; i++) {
		char *out;

		RUN(r, "aggregate", "--quiet", "--procs", procs[i], "--by", "id2,id4", "--agg",
		    "sum(v1),mean(v3),median(v3),sd(v3),count(distinct id3),top2(v3),min(id1)",
		    file("g.csv"), file("p.csv"));
		ok(r);
		out = read_file(file("p.csv"), &len);
		if (!ref)
			ref = out;
		else
			ck_assert_str_eq(out, ref);
		if (out != ref)
			free(out);
	}
	/* stdin and stdout: through a shell */
	ck_assert(asprintf(&cmd, "%s aggregate --quiet --by id2,id4 --agg 'sum(v1),mean(v3),median(v3),"
			   "sd(v3),count(distinct id3),top2(v3),min(id1)' - - <%s >%s", pems_run,
			   file("g.csv"), file("s.csv")) > 0);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
	{
		char *out = read_file(file("s.csv"), &l2);

		ck_assert_str_eq(out, ref);
		free(out);
	}
	free(ref);
	free(r);
}
END_TEST

START_TEST(parser_errors_line_and_column)
{
	char *few = in_file("few.csv", "k,v\n1,2\n\"a\nb\",3\n4\n");
	char *many = in_file("many.csv", "k,v\r\n1,2\r\n3,4,5\r\n");
	char *open_q = in_file("open.csv", "k,v\n1,2\n3,\"4\n");
	char *text = in_file("text.csv", "k,v\n1,\"2\"x\n");
	char *bad_i = in_file("badi.csv", "k,v\n1,2\n3,2.5\n");
	char *bad_f = in_file("badf.csv", "k,v\n1,2.5\n3,abc\n");

	/* line 4: the quoted newline in line 2-3 counts */
	GB_FAIL(1, "few.csv: line 5: 1 fields, but the header has 2 (column 2 missing)", few,
		"--procs", "1", "--by", "k", "--agg", "sum(v)");
	GB_FAIL(1, "many.csv: line 3, column 3: 3 fields, more than the 2 of the header", many,
		"--by", "k", "--agg", "sum(v)");
	GB_FAIL(1, "open.csv: line 3, column 2: quoted field not closed before the end of the file",
		open_q, "--by", "k", "--agg", "sum(v)");
	GB_FAIL(1, "text.csv: line 2, column 2: text after the closing quote of a field", text,
		"--by", "k", "--agg", "sum(v)");
	GB_FAIL(1, "badi.csv: line 3, column 2 (v): '2.5' is not an integer (declare the column's type with --schema v:f64)",
		bad_i, "--schema", "v:i64", "--by", "k", "--agg", "sum(v)");
	GB_FAIL(1, "badf.csv: line 3, column 2 (v): 'abc' is not a number", bad_f, "--schema",
		"v:f64", "--by", "k", "--agg", "sum(v)");
	GB_FAIL(1, "no column 'w' in the header", bad_f, "--by", "k", "--agg", "sum(w)");
	GB_FAIL(1, "sum of column 'k': the column holds strings",
		in_file("str.csv", "k,v\na,1\n"), "--agg", "sum(k)");
}
END_TEST

START_TEST(skip_mode_counts)
{
	char *in = in_file("skip.csv", "k,v\n1,2\n1,x\n2\n1,3\n2,4,5\n2,6\n");
	struct result *r = malloc(sizeof(*r));
	char got[256];

	RUN(r, "aggregate", "--on-error", "skip", "--schema", "v:i64", "--by", "k", "--agg",
	    "sum(v)", in, file("out.csv"));
	ok(r);
	ck_assert_msg(strstr(r->err, "3 bad rows skipped"), "%s", r->err);
	ck_assert_msg(strstr(r->err, "skip.csv: line 3, column 2 (v): 'x' is not an integer"), "%s",
		      r->err);
	slurp(file("out.csv"), got, sizeof(got));
	ck_assert_str_eq(got, "k,sum_v\n1,5\n2,6\n");
	free(r);
}
END_TEST

START_TEST(usage_errors)
{
	char *in = in_file("u.csv", "k,v\n1,2\n");

	GB_FAIL(2, "unknown function 'total'", in, "--by", "k", "--agg", "total(v)");
	GB_FAIL(2, "')' expected", in, "--by", "k", "--agg", "sum(v");
	GB_FAIL(2, "top and bottom take N from 1 to 16", in, "--by", "k", "--agg", "top99(v)");
	GB_FAIL(2, "fewer names than --agg columns", in, "--by", "k", "--agg", "sum(v),count(*)",
		"--as", "s");
	GB_FAIL(2, "unknown type", in, "--by", "k", "--agg", "sum(v)", "--schema", "v:decimal");
	GB_FAIL(2, "topN and bottomN stand alone", in, "--by", "k", "--agg", "top2(v)+1");
	GB_FAIL(2, "--on-error maybe: use stop or skip", in, "--by", "k", "--agg", "sum(v)",
		"--on-error", "maybe");
}
END_TEST

static Suite *groupby_suite(void)
{
	Suite *s = suite_create("groupby");
	TCase *tc = tcase_create("results");
	TCase *te = tcase_create("errors");

	tcase_set_timeout(tc, 300);
	tcase_set_timeout(te, 120);
	tcase_add_test(tc, every_aggregate_every_type_with_nulls);
	tcase_add_test(tc, expressions_topn_corr);
	tcase_add_test(tc, strings_quotes_newlines_crlf_bom);
	tcase_add_test(tc, delimiters_header_null_token_schema);
	tcase_add_test(tc, empty_header_only_one_group_all_distinct);
	tcase_add_test(tc, same_output_any_procs_stdin_stdout);
	tcase_add_test(te, parser_errors_line_and_column);
	tcase_add_test(te, skip_mode_counts);
	tcase_add_test(te, usage_errors);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, te);
	return s;
}

int main(void)
{
	int rc = cli_test_init("check_groupby");

	return rc ? rc : cli_test_run(groupby_suite());
}
