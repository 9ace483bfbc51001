/*
 * check_sgd.c - `pems-run sgd` and `gen --format dense|libsvm` as a user
 * sees them: convergence on tiny data (spilling forced: many VPs, small
 * --mem), bit-identical models across --procs/--threads/--sync, accuracy
 * against an in-memory reference, and the messages for bad data (line
 * numbers), NaN, out-of-range features and divergence.
 *
 * Runs $PEMS_RUN (default ./build/pems-run) in $PEMS_TEST_TMP (else a new
 * /tmp/check_sgd.XXXXXX).
 */
#include "cli_test.h"
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pems_algorithms.h"

/* the CSV without its last column (comm_bytes grows with v) */
static void csv_cut(const char *in, char *out, size_t len)
{
	static char buf[1 << 20];
	char *p, *line, *save = NULL;
	size_t n = 0;

	slurp(in, buf, sizeof(buf));
	out[0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		p = strrchr(line, ',');
		if (p)
			*p = '\0';
		n += (size_t)snprintf(out + n, len - n, "%s\n", line);
	}
}

static double max_weight_err(const char *model, const char *truth)
{
	enum pems_sgd_model m1, m2;
	uint32_t d1, d2, j;
	double *w1, *w2, e = 0;

	ck_assert_int_eq(pems_sgd_model_read(model, &m1, &d1, &w1), 0);
	ck_assert_int_eq(pems_sgd_model_read(truth, &m2, &d2, &w2), 0);
	ck_assert_uint_eq(d1, d2);
	for (j = 0; j <= d1; j++)
		e = fmax(e, fabs(w1[j] - w2[j]));
	free(w1);
	free(w2);
	return e;
}

/* the test MSE / accuracy of the last eval line of a loss log */
static void last_eval(const char *csv, double *loss, double *acc)
{
	static char buf[1 << 20];
	char *p, *last = NULL;

	slurp(csv, buf, sizeof(buf));
	for (p = strstr(buf, ",eval,"); p; p = strstr(p + 1, ",eval,"))
		last = p;
	ck_assert_ptr_nonnull(last);
	/* ,eval,epoch,step,rows,train,test_loss,acc,bytes */
	p = last + 6;
	for (int i = 0; i < 4; i++)
		p = strchr(p, ',') + 1;
	*loss = strtod(p, &p);
	*acc = p[1] == ',' ? NAN : strtod(p + 1, NULL);
}

static void gen_linear(void)
{
	struct result r;

	RUN(&r, "gen", "--format", "dense", "--count", "20000", "--dim", "8", "--noise", "0.1",
	    "--seed", "7", "--quiet", file("tr.dense"));
	ok(&r);
	RUN(&r, "gen", "--format", "dense", "--count", "5000", "--dim", "8", "--noise", "0.1",
	    "--seed", "7", "--row-seed", "8", "--quiet", file("te.dense"));
	ok(&r);
}

START_TEST(linear_converges_under_small_mem)
{
	struct result r;
	double mse, acc;

	gen_linear();
	RUN(&r, "sgd", "--model", "linear", "--data", file("tr.dense"), "--format", "dense",
	    "--test", file("te.dense"), "--epochs", "4", "--lr", "0.1", "--batch", "16",
	    "--local-steps", "8", "--lr-schedule", "step", "--procs", "32", "--threads", "2",
	    "--mem", "64M", "--out", file("m.txt"), "--loss-log", file("l.csv"), "--quiet");
	ok(&r);
	last_eval(file("l.csv"), &mse, &acc);
	/* noise floor 0.01; d/n excess ~ 0.01 * 9/20000 */
	ck_assert_msg(mse < 0.0102 && mse > 0.009, "test MSE %g, noise floor 0.01", mse);
	ck_assert_msg(max_weight_err(file("m.txt"), file("tr.dense.weights")) < 0.005,
		      "weights off by %g", max_weight_err(file("m.txt"), file("tr.dense.weights")));
}
END_TEST

START_TEST(identical_across_procs_threads)
{
	static const char *const sync[] = { "bsp", "local" };
	static const char *const pt[][2] = { { "1", "1" }, { "5", "2" }, { "16", "2" }, { "3", "1" } };
	static char ref[1 << 20], cur[1 << 20];
	struct result r;
	int s, i;

	gen_linear();
	for (s = 0; s < 2; s++) {
		for (i = 0; i < 4; i++) {
			RUN(&r, "sgd", "--model", "linear", "--data", file("tr.dense"), "--format",
			    "dense", "--test", file("te.dense"), "--epochs", "2", "--sync", sync[s],
			    "--batch", "32", "--local-steps", "4", "--lr", "0.05", "--l2", "0.001",
			    "--lr-schedule", "sqrt", "--shards", "8", "--procs", pt[i][0],
			    "--threads", pt[i][1], "--mem", "64M", "--out", file(i ? "mi.txt" : "m0.txt"),
			    "--loss-log", file("l.csv"), "--quiet");
			ok(&r);
			csv_cut(file("l.csv"), i ? cur : ref, sizeof(ref));
			if (i) {
				ck_assert_msg(same_bytes(file("m0.txt"), file("mi.txt")),
					      "%s: model differs at --procs %s --threads %s",
					      sync[s], pt[i][0], pt[i][1]);
				ck_assert_msg(!strcmp(ref, cur), "%s: loss log differs at --procs %s",
					      sync[s], pt[i][0]);
			}
		}
	}
}
END_TEST

/* ---- logistic on LIBSVM vs an in-memory loop ---- */

struct ds {
	size_t n, d;
	double *x, *y;		/* dense copy */
};

static void load_libsvm(const char *path, size_t d, struct ds *o)
{
	FILE *f = fopen(path, "r");
	char line[65536];
	size_t cap = 1024;

	ck_assert_ptr_nonnull(f);
	o->n = 0;
	o->d = d;
	o->x = calloc(cap * d, sizeof(double));
	o->y = calloc(cap, sizeof(double));
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		double *row;

		if (o->n == cap) {
			cap *= 2;
			o->x = realloc(o->x, cap * d * sizeof(double));
			o->y = realloc(o->y, cap * sizeof(double));
		}
		row = o->x + o->n * d;
		memset(row, 0, d * sizeof(double));
		o->y[o->n] = strtod(p, &end) > 0;
		p = end;
		for (;;) {
			long ix = strtol(p, &end, 10);

			if (end == p || *end != ':')
				break;
			row[ix - 1] = strtod(end + 1, &p);
		}
		o->n++;
	}
	fclose(f);
}

static double ref_accuracy(const struct ds *tr, const struct ds *te)
{
	size_t d = tr->d, i, j, e, c = 0;
	double *w = calloc(d + 1, sizeof(double)), *g = calloc(d + 1, sizeof(double));

	for (e = 0; e < 10; e++) {
		for (i = 0; i < tr->n; i += 64) {
			size_t k, m = tr->n - i < 64 ? tr->n - i : 64;
			double lr = 0.2 / (1 + e);

			memset(g, 0, (d + 1) * sizeof(double));
			for (k = i; k < i + m; k++) {
				const double *x = tr->x + k * d;
				double z = w[d];

				for (j = 0; j < d; j++)
					z += w[j] * x[j];
				z = 1 / (1 + exp(-z)) - tr->y[k];
				for (j = 0; j < d; j++)
					g[j] += z * x[j];
				g[d] += z;
			}
			for (j = 0; j <= d; j++)
				w[j] -= lr * g[j] / m;
		}
	}
	for (i = 0; i < te->n; i++) {
		double z = w[d];

		for (j = 0; j < d; j++)
			z += w[j] * te->x[i * d + j];
		c += (z > 0) == (te->y[i] > 0);
	}
	free(w);
	free(g);
	return (double)c / te->n;
}

START_TEST(logistic_libsvm_matches_in_memory)
{
	struct result r;
	struct ds tr, te;
	double loss, acc, ref;

	RUN(&r, "gen", "--format", "libsvm", "--model", "logistic", "--count", "40000",
	    "--dim", "20", "--nnz", "10", "--seed", "3", "--quiet", file("tr.svm"));
	ok(&r);
	RUN(&r, "gen", "--format", "libsvm", "--model", "logistic", "--count", "20000",
	    "--dim", "20", "--nnz", "10", "--seed", "3", "--row-seed", "4", "--quiet",
	    file("te.svm"));
	ok(&r);
	RUN(&r, "sgd", "--model", "logistic", "--data", file("tr.svm"), "--format", "libsvm",
	    "--dim", "20", "--test", file("te.svm"), "--epochs", "5", "--lr", "0.2",
	    "--lr-schedule", "step", "--lr-decay", "0.7", "--batch", "32", "--local-steps", "16",
	    "--procs", "12", "--threads", "2", "--mem", "64M", "--out", file("m.txt"),
	    "--loss-log", file("l.csv"), "--quiet");
	ok(&r);
	last_eval(file("l.csv"), &loss, &acc);
	load_libsvm(file("tr.svm"), 20, &tr);
	load_libsvm(file("te.svm"), 20, &te);
	ref = ref_accuracy(&tr, &te);
	printf("logistic libsvm: pems-run sgd test accuracy %.4f, in-memory reference %.4f\n",
	       acc, ref);
	ck_assert_msg(fabs(acc - ref) < 0.005, "accuracy %.4f, in-memory reference %.4f", acc, ref);
	free(tr.x); free(tr.y); free(te.x); free(te.y);
}
END_TEST

/* ---- errors ---- */

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(libsvm_errors_name_the_line)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "1 1:0.5\n# comment\n\n-1 2:1 3:x\n", "bad.svm:4: bad value in '3:x'" },
		{ "1 1:0.5\nfoo 1:1\n", "bad.svm:2: bad label 'foo'" },
		{ "1 1:0.5 2:1\n1 2:1 4:2\n", "bad.svm:2: feature index 4 is out of range 1..3; raise --dim" },
		{ "1 1:0.5\n1 1:1\n0 2:nan\n", "bad.svm:3: feature 2 is nan" },
		{ "1 1:0.5\n1 0:1\n", "bad.svm:2: feature index 0 is out of range" },
		{ "1 1:0.5\n1 1=1\n", "bad.svm:2: bad feature '1=1' (expected index:value)" },
	};
	struct result r;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_text(file("bad.svm"), cases[i].text);
		unlink(file("m.txt"));
		RUN(&r, "sgd", "--model", "logistic", "--data", file("bad.svm"), "--format",
		    "libsvm", "--dim", "3", "--procs", "3", "--out", file("m.txt"), "--quiet");
		fails_with(&r, 1, cases[i].msg);
		ck_assert_int_ne(access(file("m.txt"), F_OK), 0);
	}
}
END_TEST

START_TEST(libsvm_error_far_into_a_big_file)
{
	struct result r;
	FILE *f = fopen(file("big.svm"), "w");
	int i;

	ck_assert_ptr_nonnull(f);
	for (i = 0; i < 100000; i++)
		fprintf(f, "%d 1:%d 2:0.5\n", i & 1 ? 1 : -1, i % 7);
	fputs("1 1:inf\n", f);
	for (i = 0; i < 1000; i++)
		fputs("1 1:1\n", f);
	fclose(f);
	RUN(&r, "sgd", "--model", "logistic", "--data", file("big.svm"), "--format", "libsvm",
	    "--dim", "2", "--procs", "7", "--out", file("m.txt"), "--quiet");
	fails_with(&r, 1, "big.svm:100001: feature 1 is inf");
}
END_TEST

START_TEST(dense_nan_is_rejected)
{
	struct result r;
	int fd;
	float nan_f = NAN;

	gen_linear();
	fd = open(file("tr.dense"), O_WRONLY);
	ck_assert_int_ge(fd, 0);
	/* row 1234, feature 5: header + row * 36 + 4 * 5 */
	ck_assert_int_eq(pwrite(fd, &nan_f, 4, 16 + 1234 * 36 + 20), 4);
	close(fd);
	unlink(file("m.txt"));
	RUN(&r, "sgd", "--model", "linear", "--data", file("tr.dense"), "--format", "dense",
	    "--procs", "4", "--out", file("m.txt"), "--quiet");
	fails_with(&r, 1, "tr.dense: row 1234: feature 5 is NaN");
	ck_assert_int_ne(access(file("m.txt"), F_OK), 0);
}
END_TEST

START_TEST(divergence_says_lower_lr)
{
	struct result r;

	gen_linear();
	unlink(file("m.txt"));
	unlink(file("l.csv"));
	RUN(&r, "sgd", "--model", "linear", "--data", file("tr.dense"), "--format", "dense",
	    "--sync", "bsp", "--lr", "40", "--out", file("m.txt"), "--loss-log", file("l.csv"),
	    "--quiet");
	fails_with(&r, 1, "training diverged");
	ck_assert_msg(strstr(r.err, "lower --lr"), "%s", r.err);
	ck_assert_int_ne(access(file("m.txt"), F_OK), 0);
	ck_assert_int_ne(access(file("l.csv"), F_OK), 0);
}
END_TEST

START_TEST(usage_errors)
{
	struct result r;

	RUN(&r, "sgd", "--model", "logistic", "--data", "x", "--format", "libsvm", "--out", "m");
	fails_with(&r, 2, "sgd: --dim is required with --format libsvm");
	RUN(&r, "sgd", "--model", "ridge", "--data", "x", "--format", "dense", "--out", "m");
	fails_with(&r, 2, "sgd: --model ridge: use linear or logistic");
	RUN(&r, "sgd", "--model", "linear", "--data", file("none"), "--format", "dense",
	    "--dim", "3", "--out", file("m"), "--quiet");
	fails_with(&r, 1, "cannot read training data");
	RUN(&r, "sgd", "--help");
	ok(&r);
}
END_TEST

static Suite *sgd_suite(void)
{
	Suite *s = suite_create("sgd");
	TCase *t = tcase_create("train");
	TCase *e = tcase_create("errors");

	tcase_set_timeout(t, 120);
	tcase_add_test(t, linear_converges_under_small_mem);
	tcase_add_test(t, identical_across_procs_threads);
	tcase_add_test(t, logistic_libsvm_matches_in_memory);
	tcase_add_test(e, libsvm_errors_name_the_line);
	tcase_add_test(e, libsvm_error_far_into_a_big_file);
	tcase_add_test(e, dense_nan_is_rejected);
	tcase_add_test(e, divergence_says_lower_lr);
	tcase_add_test(e, usage_errors);
	suite_add_tcase(s, t);
	suite_add_tcase(s, e);
	return s;
}

int main(void)
{
	int rc = cli_test_init("check_sgd");

	if (rc)
		return rc;
	setenv("PEMS_TMP", dir, 1);
	return cli_test_run(sgd_suite());
}
