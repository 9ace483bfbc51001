/*
 * gen_sgd.c - `pems-run gen --format dense|libsvm`: training data for
 * `pems-run sgd` drawn from known true weights, which are written too
 * (OUT.weights, in the model-file format of pems_sgd_model_write).
 *
 * True model (seeded by --seed): w_j ~ N(0,1) * s / sqrt(q*D), bias
 * b = 0.25 * N(0,1), where q*D is the expected number of nonzero
 * features per row and s = 1 (linear) or 2 (logistic).  Row i (seeded by
 * --row-seed and i only, so files of any size agree on their common
 * rows): each feature is nonzero with probability q (dense: q = 1) and
 * then N(0,1); z = w.x + b;
 *   linear:   y = z + noise * N(0,1)           (noise variance: the floor)
 *   logistic: y = +1 if z + noise * L > 0 else -1, L ~ Logistic(0,1);
 *             the log-odds are z / noise, so OUT.weights holds w/noise,
 *             b/noise (noise 0: separable, OUT.weights holds w, b).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#define GS_THREADS 8
#define GS_ROWS 8192		/* rows per block */

static const char gen_sgd_help[] =
	"Usage: pems-run gen --format dense|libsvm --count N --dim D\n"
	"                    [--model linear|logistic] [--noise S] [--seed S]\n"
	"                    [--row-seed R] [--nnz K] OUT\n"
	"Write N training rows for 'pems-run sgd' drawn from known true weights,\n"
	"and those weights to OUT.weights (the sgd model-file format).\n"
	"\n"
	"  --format dense    16-byte header \"PEMSDENS\", u32 D, u32 0, then rows of\n"
	"                    1 + D little-endian float32 (label, features)\n"
	"  --format libsvm   text lines 'label idx:val ...' (idx 1..D)\n"
	"  --model M         linear (default): y = w.x + b + S*N(0,1);\n"
	"                    logistic: y = +1/-1 by the sign of w.x + b + S*Logistic\n"
	"  --count N         rows; K/M/G suffixes\n"
	"  --dim D           features per row\n"
	"  --noise S         noise scale (default 0.1 linear, 1 logistic)\n"
	"  --seed S          seed of the true weights (default 1)\n"
	"  --row-seed R      seed of the rows (default: --seed); a test set is the\n"
	"                    same --seed with another --row-seed\n"
	"  --nnz K           libsvm: expected nonzero features per row (default\n"
	"                    min(D, 16)); dense rows are all nonzero\n"
	"  --quiet           no summary\n"
	"  -h, --help        show this help\n"
	"\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

enum { GS_COUNT = CLI_OPT_FIRST_LOCAL, GS_DIM, GS_MODEL, GS_NOISE, GS_SEED,
	GS_ROWSEED, GS_NNZ, GS_FORMAT };

struct gs {
	bool libsvm, logistic, quiet;
	uint64_t count, seed, row_seed;
	uint32_t dim;
	double noise, q;
	bool have_noise, have_rowseed, have_count, have_dim, have_format;
	uint64_t nnz;
	const char *out;
	double *w;		/* dim + 1, bias last (generator's z) */
	int fd;
	atomic_uint_fast64_t next;
	atomic_int err;
};

static uint64_t gs_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct rng { uint64_t s; };

static double unif(struct rng *r)	/* (0, 1) */
{
	r->s = gs_mix(r->s);
	return ((r->s >> 11) + 0.5) / 9007199254740992.0;
}

static double normal(struct rng *r)
{
	double u1 = unif(r), u2 = unif(r);

	return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

static void make_weights(struct gs *g)
{
	struct rng r = { gs_mix(g->seed ^ 0x5eed5eed5eedull) };
	double scale = (g->logistic ? 2.0 : 1.0) / sqrt(g->q * g->dim);
	uint32_t j;

	for (j = 0; j < g->dim; j++)
		g->w[j] = normal(&r) * scale;
	g->w[g->dim] = 0.25 * normal(&r);
}

/*
 * Row @i: its label, and its features into x.  Dense rows (q = 1) fill
 * x[0..dim).  Sparse rows (q < 1) keep each feature with probability q;
 * the gaps between kept features are drawn as geometric skips, so a row
 * costs O(nnz) rather than O(dim), and the kept ones go to idx[0..*k) and
 * x[0..*k) in ascending index order.
 */
static double make_row(const struct gs *g, uint64_t i, uint32_t *idx, double *x,
		       uint32_t *k)
{
	struct rng r = { gs_mix(g->row_seed * 0x100000001b3ull + i) };
	double z = g->w[g->dim], u, lq = g->q < 1 ? log1p(-g->q) : 0;
	uint64_t j = 0;

	*k = 0;
	while (j < g->dim) {
		if (g->q < 1) {
			j += (uint64_t)floor(log(unif(&r)) / lq);
			if (j >= g->dim)
				break;
			idx[*k] = (uint32_t)j;
		}
		x[*k] = normal(&r);
		z += g->w[j] * x[*k];
		++*k;
		j++;
	}
	if (!g->logistic)
		return z + g->noise * normal(&r);
	u = unif(&r);
	return z + g->noise * log(u / (1 - u)) > 0 ? 1 : -1;
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len) {
		n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static void *dense_thread(void *arg)
{
	struct gs *g = arg;
	size_t rowf = (size_t)g->dim + 1;
	float *buf = malloc(GS_ROWS * rowf * sizeof(float));
	double *x = malloc(((size_t)g->dim + 1) * sizeof(double));
	uint64_t b, i, first, n;
	uint32_t j, k;
	int rc;

	if (!buf || !x) {
		atomic_store(&g->err, -ENOMEM);
		goto out;
	}
	while (!atomic_load(&g->err)) {
		b = atomic_fetch_add(&g->next, 1);
		first = b * GS_ROWS;
		if (first >= g->count)
			break;
		n = g->count - first < GS_ROWS ? g->count - first : GS_ROWS;
		for (i = 0; i < n; i++) {
			float *row = buf + i * rowf;

			row[0] = (float)make_row(g, first + i, NULL, x, &k);
			for (j = 0; j < g->dim; j++)
				row[1 + j] = (float)x[j];
		}
		rc = write_all(g->fd, buf, n * rowf * sizeof(float),
			       PEMS_SGD_DENSE_HEADER + first * rowf * sizeof(float));
		if (rc)
			atomic_store(&g->err, rc);
	}
out:
	free(buf);
	free(x);
	return NULL;
}

static int write_dense(struct gs *g)
{
	uint8_t hdr[PEMS_SGD_DENSE_HEADER] = { 0 };
	pthread_t tid[GS_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned nt = cpus > 0 ? (unsigned)cpus : 1, i, started = 0;
	int rc;

	memcpy(hdr, PEMS_SGD_DENSE_MAGIC, 8);
	memcpy(hdr + 8, &g->dim, 4);
	rc = write_all(g->fd, hdr, sizeof(hdr), 0);
	if (rc)
		return rc;
	if (nt > GS_THREADS)
		nt = GS_THREADS;
	for (i = 1; i < nt; i++)
		if (!pthread_create(&tid[started], NULL, dense_thread, g))
			started++;
	dense_thread(g);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	return atomic_load(&g->err);
}

static int write_libsvm(struct gs *g)
{
	FILE *f = fdopen(dup(g->fd), "w");
	double *x = malloc(((size_t)g->dim + 1) * sizeof(double));
	uint32_t *idx = malloc(((size_t)g->dim + 1) * sizeof(uint32_t));
	uint64_t i;
	uint32_t j, k;
	int rc = 0;

	if (!f || !x || !idx) {
		if (f)
			fclose(f);
		free(x);
		free(idx);
		return -ENOMEM;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	for (i = 0; i < g->count; i++) {
		double y = make_row(g, i, idx, x, &k);

		if (g->logistic)
			fputs(y > 0 ? "+1" : "-1", f);
		else
			fprintf(f, "%.7g", y);
		for (j = 0; j < k; j++)
			fprintf(f, " %u:%.6g", (g->q < 1 ? idx[j] : j) + 1, x[j]);
		fputc('\n', f);
	}
	if (fflush(f) || ferror(f))
		rc = errno ? -errno : -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	free(x);
	free(idx);
	return rc;
}

static int gs_option(void *ctx, int c, const char *arg)
{
	struct gs *g = ctx;
	uint64_t v;
	char *end;

	switch (c) {
	case GS_FORMAT:
		g->have_format = true;
		g->libsvm = !strcmp(arg, "libsvm");
		return 0;
	case GS_COUNT:
		g->have_count = true;
		if (cli_parse_u64(arg, true, &g->count) || g->count > (1ull << 40))
			return cli_usage("gen: --count %s: not a row count; give e.g. --count 1M", arg);
		return 0;
	case GS_DIM:
		g->have_dim = true;
		if (cli_parse_u64(arg, false, &v) || !v || v > (1u << 24))
			return cli_usage("gen: --dim %s: give a dimension between 1 and 16777216", arg);
		g->dim = (uint32_t)v;
		return 0;
	case GS_MODEL:
		if (strcmp(arg, "linear") && strcmp(arg, "logistic"))
			return cli_usage("gen: --model %s: use linear or logistic", arg);
		g->logistic = !strcmp(arg, "logistic");
		return 0;
	case GS_NOISE:
		g->noise = strtod(arg, &end);
		if (end == arg || *end || !(g->noise >= 0) || !isfinite(g->noise))
			return cli_usage("gen: --noise %s: give a scale >= 0, e.g. --noise 0.1", arg);
		g->have_noise = true;
		return 0;
	case GS_SEED:
	case GS_ROWSEED:
		if (cli_parse_u64(arg, false, &v))
			return cli_usage("gen: --%s %s: not a 64-bit number",
					 c == GS_SEED ? "seed" : "row-seed", arg);
		if (c == GS_SEED)
			g->seed = v;
		else {
			g->row_seed = v;
			g->have_rowseed = true;
		}
		return 0;
	case GS_NNZ:
		if (cli_parse_u64(arg, false, &g->nnz) || !g->nnz)
			return cli_usage("gen: --nnz %s: give a positive count", arg);
		return 0;
	case CLI_OPT_QUIET:
		g->quiet = true;
		return 0;
	default:
		return CLI_EXIT_USAGE;
	}
}

static int gs_parse(int argc, char **argv, struct gs *g)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, GS_FORMAT },
		{ "count", required_argument, NULL, GS_COUNT },
		{ "dim", required_argument, NULL, GS_DIM },
		{ "model", required_argument, NULL, GS_MODEL },
		{ "noise", required_argument, NULL, GS_NOISE },
		{ "seed", required_argument, NULL, GS_SEED },
		{ "row-seed", required_argument, NULL, GS_ROWSEED },
		{ "nnz", required_argument, NULL, GS_NNZ },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { gen_sgd_help, NULL };
	int rc;

	optind = 1;
	rc = cli_getopt(argc, argv, "gen", longopts, help, gs_option, g);
	if (rc)
		return rc;
	if (!g->have_count)
		return cli_usage("gen: --count is required");
	if (!g->have_dim)
		return cli_usage("gen: --dim is required with --format %s",
				 g->libsvm ? "libsvm" : "dense");
	if (optind != argc - 1)
		return cli_usage("gen: expected one output file; see 'pems-run gen --help'");
	g->out = argv[optind];
	return 0;
}

static int gs_file(struct gs *g, const char *path, bool weights)
{
	char tmp[4200];
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (weights) {
		double *w = malloc(((size_t)g->dim + 1) * sizeof(double));
		double s = g->logistic && g->noise > 0 ? 1 / g->noise : 1;
		uint32_t j;

		if (!w)
			return -ENOMEM;
		for (j = 0; j <= g->dim; j++)
			w[j] = g->w[j] * s;
		rc = pems_sgd_model_write(tmp, g->logistic ? PEMS_SGD_LOGISTIC : PEMS_SGD_LINEAR,
					  g->dim, w);
		free(w);
	} else {
		g->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (g->fd < 0)
			return -errno;
		rc = g->libsvm ? write_libsvm(g) : write_dense(g);
		if (close(g->fd) && !rc)
			rc = -errno;
	}
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

int cli_gen_sgd_main(int argc, char **argv)
{
	struct gs g = { .seed = 1 };
	char wpath[4200], size[32];
	double t0 = cli_now();
	int rc;

	rc = gs_parse(argc, argv, &g);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (!g.have_noise)
		g.noise = g.logistic ? 1.0 : 0.1;
	if (!g.have_rowseed)
		g.row_seed = g.seed;
	if (!g.nnz)
		g.nnz = g.dim < 16 ? g.dim : 16;
	g.q = g.libsvm ? fmin(1.0, (double)g.nnz / g.dim) : 1.0;
	if (cli_check_out_dir("gen", g.out))
		return CLI_EXIT_FAIL;
	g.w = malloc(((size_t)g.dim + 1) * sizeof(double));
	if (!g.w)
		return CLI_EXIT_FAIL;
	make_weights(&g);
	snprintf(wpath, sizeof(wpath), "%s.weights", g.out);
	rc = gs_file(&g, g.out, false);
	if (!rc)
		rc = gs_file(&g, wpath, true);
	free(g.w);
	if (rc) {
		cli_error("gen: cannot write '%s': %s", g.out, strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	if (!g.quiet) {
		uint64_t bytes = g.libsvm ? 0 : PEMS_SGD_DENSE_HEADER +
			g.count * ((uint64_t)g.dim + 1) * 4;

		t0 = cli_now() - t0;
		fprintf(stderr, "gen: %llu %s %s rows of %u features%s%s%s to %s (weights: %s) in %.2f s\n",
			(unsigned long long)g.count, g.logistic ? "logistic" : "linear",
			g.libsvm ? "libsvm" : "dense", g.dim, bytes ? " (" : "",
			bytes ? cli_human(bytes, size, sizeof(size)) : "", bytes ? ")" : "",
			g.out, wpath, t0);
	}
	return CLI_EXIT_OK;
}
