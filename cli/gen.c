/*
 * gen.c - `pems-run gen`: write deterministic test records.
 *
 * Blocks of CLI_IO_BLOCK bytes are generated and written by a few
 * threads in any order (records are a pure function of their index, see
 * records.c); the file is written as OUT.tmp.<pid> and renamed at the
 * end, so a failure leaves nothing under OUT.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#define GEN_MAX_THREADS 8

static const char gen_help[] =
	"Usage: pems-run gen --format FMT --count N [--seed S] [--skew SKEW] OUT\n"
	"Write N deterministic records to OUT (same arguments, same bytes).\n"
	"Training data for sgd: --format dense|libsvm (see\n"
	"'pems-run gen --format dense --help'); GROUP BY data: --format kv\n"
	"and --format groupby (the db-benchmark G1 CSV; see their --help).\n"
	"Text for sort: --format lines|csv (see 'pems-run gen --format lines --help').\n"
	"\n"
	"  --format FMT   u64 (8-byte native integers), rec100 (10-byte key,\n"
	"                 90-byte payload) or ascii100 (the same keys as 99\n"
	"                 printable bytes and a newline, for sort(1) with LC_ALL=C)\n"
	"  --count N      number of records; K/M/G suffixes (powers of 1024)\n"
	"  --seed S       64-bit seed (default 1)\n"
	"  --skew SKEW    key distribution: uniform (default), zipf (Zipf(1.1),\n"
	"                 heavy repeats), dup (16 distinct keys), sorted, reverse,\n"
	"                 equal (all keys equal)\n"
	"  --quiet        no progress bar and no summary\n"
	"  -h, --help     show this help\n"
	"\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

enum { OPT_COUNT = CLI_OPT_FIRST_LOCAL, OPT_SEED, OPT_SKEW };

struct gen_run {
	struct cli_gen g;
	size_t rsz;		/* record bytes */
	size_t per_block;	/* records per block */
	uint64_t nblocks;
	int fd;
	const char *tmp;
	atomic_uint_fast64_t next;	/* next block to generate */
	atomic_uint_fast64_t done;	/* bytes written */
	atomic_int err;			/* first -errno */
	struct cli_progress prog;
};

struct gen_args {
	const char *out;
	bool quiet;
	bool have_format, have_count;
};

static int write_all(int fd, const uint8_t *buf, size_t len, uint64_t off)
{
	ssize_t n;

	while (len) {
		n = pwrite(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		buf += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Generate and write blocks until none is left; thread 0 draws progress. */
static void gen_blocks(struct gen_run *r, uint8_t *buf, bool draw)
{
	uint64_t b, first, total = r->g.count * r->rsz;
	size_t n;
	int rc;

	while (!atomic_load(&r->err)) {
		b = atomic_fetch_add(&r->next, 1);
		if (b >= r->nblocks)
			break;
		first = b * r->per_block;
		n = r->g.count - first < r->per_block ? r->g.count - first
						      : r->per_block;
		cli_gen_records(&r->g, first, n, buf);
		rc = write_all(r->fd, buf, n * r->rsz, first * r->rsz);
		if (rc) {
			atomic_store(&r->err, rc);
			break;
		}
		atomic_fetch_add(&r->done, n * r->rsz);
		if (draw)
			cli_progress_update(&r->prog, "writing",
					    atomic_load(&r->done), total);
	}
}

static void *gen_thread(void *arg)
{
	struct gen_run *r = arg;
	uint8_t *buf = malloc(CLI_IO_BLOCK);

	if (!buf) {
		atomic_store(&r->err, -ENOMEM);
		return NULL;
	}
	gen_blocks(r, buf, false);
	free(buf);
	return NULL;
}

static unsigned gen_threads(const struct gen_run *r)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t n = cpus > 0 ? (uint64_t)cpus : 1;

	if (n > GEN_MAX_THREADS)
		n = GEN_MAX_THREADS;
	if (n > r->nblocks)
		n = r->nblocks ? r->nblocks : 1;
	return (unsigned)n;
}

/* Run the generator threads (the caller is one of them). */
static int gen_write(struct gen_run *r)
{
	pthread_t tid[GEN_MAX_THREADS];
	unsigned nt = gen_threads(r), started = 0, i;
	uint8_t *buf = malloc(CLI_IO_BLOCK);

	if (!buf)
		return -ENOMEM;
	for (i = 1; i < nt; i++) {
		if (pthread_create(&tid[started], NULL, gen_thread, r))
			break;
		started++;
	}
	gen_blocks(r, buf, true);
	for (i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	free(buf);
	return atomic_load(&r->err);
}

static int gen_file(struct gen_run *r, const char *out)
{
	char tmp[4096];
	int rc;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", out, (long)getpid()) >=
	    (int)sizeof(tmp)) {
		cli_error("gen: output path '%s' is too long", out);
		return CLI_EXIT_FAIL;
	}
	r->fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (r->fd < 0) {
		cli_error("gen: cannot create '%s': %s", tmp, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	rc = gen_write(r);
	if (!rc && ftruncate(r->fd, (off_t)(r->g.count * r->rsz)))
		rc = -errno;
	if (close(r->fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, out))
		rc = -errno;
	cli_progress_clear(&r->prog);
	if (rc) {
		cli_error("gen: cannot write '%s': %s", out, strerror(-rc));
		unlink(tmp);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int gen_option(struct gen_run *r, struct gen_args *a, int c,
		      const char *arg)
{
	switch (c) {
	case CLI_OPT_FORMAT:
		a->have_format = true;
		return cli_parse_format("gen", arg, &r->g.fmt);
	case OPT_COUNT:
		a->have_count = true;
		if (cli_parse_u64(arg, true, &r->g.count) ||
		    r->g.count > UINT64_MAX / 128)
			return cli_usage("gen: --count %s: not a record count; give e.g. --count 1M",
					 arg);
		return 0;
	case OPT_SEED:
		if (cli_parse_u64(arg, false, &r->g.seed))
			return cli_usage("gen: --seed %s: not a 64-bit number", arg);
		return 0;
	case OPT_SKEW:
		if (cli_skew_parse(arg, &r->g.skew))
			return cli_usage("gen: --skew %s: unknown distribution; use uniform, zipf, dup, sorted, reverse or equal",
					 arg);
		return 0;
	case CLI_OPT_QUIET:
		a->quiet = true;
		return 0;
	default:
		return CLI_EXIT_USAGE;
	}
}

static int gen_parse(int argc, char **argv, struct gen_run *r,
		     struct gen_args *a)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "count", required_argument, NULL, OPT_COUNT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "skew", required_argument, NULL, OPT_SKEW },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c == CLI_OPT_HELP) {
			fputs(gen_help, stdout);
			return -1;
		}
		if (c == '?' || c == ':')
			return cli_bad_option("gen", c, argv);
		rc = gen_option(r, a, c, optarg);
		if (rc)
			return rc;
	}
	if (!a->have_format)
		return cli_usage("gen: --format is required (u64, rec100 or ascii100)");
	if (!a->have_count)
		return cli_usage("gen: --count is required");
	if (optind != argc - 1)
		return cli_usage("gen: expected one output file; see 'pems-run gen --help'");
	a->out = argv[optind];
	return 0;
}

/* The value of --format on a gen command line ("" if none): kv and the
 * SGD formats have generators of their own, with options of their own. */
static const char *gen_format_arg(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--format=", 9))
			return argv[i] + 9;
	}
	return "";
}

int cli_gen_main(int argc, char **argv)
{
	struct gen_run r = { .g = { .seed = 1, .skew = CLI_SKEW_UNIFORM } };
	struct gen_args a = { 0 };
	char size[32];
	double t0;
	const char *fmt = gen_format_arg(argc, argv);
	int rc;

	if (!strcmp(fmt, "dense") || !strcmp(fmt, "libsvm"))
		return cli_gen_sgd_main(argc, argv);	/* gen_sgd.c */
	if (!strcmp(fmt, "kv"))
		return cli_gen_kv_main(argc, argv);	/* gen_kv.c */
	if (!strcmp(fmt, "groupby"))
		return cli_gen_groupby_main(argc, argv);	/* gen_groupby.c */
	if (!strcmp(fmt, "lines") || !strcmp(fmt, "csv"))
		return cli_gen_text_main(argc, argv);	/* gen_text.c */
	rc = gen_parse(argc, argv, &r, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	if (cli_check_out_dir("gen", a.out))
		return CLI_EXIT_FAIL;
	r.rsz = pems_format_size(r.g.fmt);
	r.per_block = CLI_IO_BLOCK / r.rsz;
	r.nblocks = (r.g.count + r.per_block - 1) / r.per_block;
	cli_progress_init(&r.prog, "gen", a.quiet);
	t0 = cli_now();
	rc = gen_file(&r, a.out);
	if (rc || a.quiet)
		return rc;
	t0 = cli_now() - t0;
	fprintf(stderr, "gen: %llu %s records (%s) to %s in %.2f s (%.1f MB/s)\n",
		(unsigned long long)r.g.count, pems_format_name(r.g.fmt),
		cli_human(r.g.count * r.rsz, size, sizeof(size)), a.out, t0,
		t0 > 0 ? r.g.count * r.rsz / t0 / 1e6 : 0.0);
	return CLI_EXIT_OK;
}
