/*
 * gen_text.c - `pems-run gen --format lines|csv`: text test data for the
 * text sort, a pure function of (seed, size).
 *
 * lines: "NAME,INT,DEC,WORDS" -- NAME from 50,000 names with a skewed
 *        choice (many duplicates), INT in -10^6..10^7, DEC with 0-4
 *        decimals, WORDS filler up to a length drawn in 20..300 bytes
 *        (newline included); 1 % of the lines repeat an earlier one.
 * csv:   header "id,name,price,qty,comment", the same fields; 3 % of the
 *        comments are quoted and hold the delimiter, "" or a newline.
 * Written to OUT.tmp.<pid> and renamed (or to stdout for '-').
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#define BLOCK (4u << 20)
#define LINE_MAX_LEN 512
#define RING 64

static const char gt_help[] =
	"Usage: pems-run gen --format lines|csv --size SIZE [--seed S] OUT\n"
	"Write about SIZE bytes of text for 'pems-run sort' (OUT may be - for\n"
	"stdout).  lines: NAME,INT,DEC,WORDS lines of 20..300 bytes (sort them\n"
	"with e.g. -t, -k2,2n -k1,1); csv: a header id,name,price,qty,comment\n"
	"and rows whose comment is sometimes quoted with a delimiter, a quote or\n"
	"a newline inside.  Names and numbers repeat; 1 % of the lines are\n"
	"duplicates.  The same arguments give the same bytes.\n"
	"\n"
	"  --size SIZE    bytes to write (K/M/G suffixes); the last line ends\n"
	"                 at or just past SIZE\n"
	"  --seed S       64-bit seed (default 1)\n"
	"  --quiet        no progress bar and no summary\n"
	"  -h, --help     show this help\n"
	"\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

enum { OPT_SIZE = CLI_OPT_FIRST_LOCAL, OPT_SEED };

struct gt {
	bool csv, quiet;
	uint64_t size, seed, s;	/* s: generator state */
	const char *out;
	char ring[RING][LINE_MAX_LEN];
	size_t ring_len[RING];
	uint64_t lines;
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

static int gt_option(void *ctx, int c, const char *arg)
{
	struct gt *g = ctx;

	switch (c) {
	case CLI_OPT_FORMAT:
		g->csv = !strcmp(arg, "csv");
		return 0;
	case OPT_SIZE:
		if (cli_parse_u64(arg, true, &g->size) || !g->size)
			return cli_usage("gen: --size %s: give a size, e.g. --size 256M", arg);
		return 0;
	case OPT_SEED:
		if (cli_parse_u64(arg, false, &g->seed))
			return cli_usage("gen: --seed %s: not a number", arg);
		return 0;
	case CLI_OPT_QUIET:
		g->quiet = true;
		return 0;
	default:
		return cli_usage("gen: internal error: option %d", c);
	}
}

static int gt_parse(int argc, char **argv, struct gt *g)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { gt_help, NULL };
	int rc = cli_getopt(argc, argv, "gen", longopts, help, gt_option, g);

	if (rc)
		return rc;
	if (!g->size)
		return cli_usage("gen: --size is required for --format %s", g->csv ? "csv" : "lines");
	if (optind != argc - 1)
		return cli_usage("gen: expected one output file; see 'pems-run gen --format lines --help'");
	g->out = argv[optind];
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int gt_write(struct gt *g, int fd, struct cli_progress *prog)
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
			rc = write_all(fd, buf, fill);
			done += fill;
			fill = 0;
			cli_progress_update(prog, "gen", done, g->size);
		}
	}
	if (!rc && fill)
		rc = write_all(fd, buf, fill);
	free(buf);
	return rc;
}

int cli_gen_text_main(int argc, char **argv)
{
	struct gt *g = calloc(1, sizeof(*g));
	struct cli_progress prog;
	char tmp[4200];
	int fd, rc;
	bool out = false;

	if (!g)
		return CLI_EXIT_FAIL;
	g->seed = 1;
	rc = gt_parse(argc, argv, g);
	if (rc) {
		free(g);
		return rc < 0 ? CLI_EXIT_OK : rc;
	}
	out = strcmp(g->out, "-") != 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", g->out, (int)getpid());
	if (out && cli_check_out_dir("gen", g->out)) {
		free(g);
		return CLI_EXIT_FAIL;
	}
	fd = out ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : 1;
	cli_progress_init(&prog, "gen", g->quiet || !out);
	rc = fd < 0 ? -errno : gt_write(g, fd, &prog);
	cli_progress_clear(&prog);
	if (out && fd >= 0 && close(fd) && !rc)
		rc = -errno;
	if (out && !rc && rename(tmp, g->out))
		rc = -errno;
	if (rc) {
		if (out)
			unlink(tmp);
		cli_error("gen: writing '%s': %s", g->out, strerror(-rc));
	} else if (!g->quiet && out) {
		fprintf(stderr, "gen: %llu %s lines to %s\n", (unsigned long long)g->lines,
			g->csv ? "csv" : "text", g->out);
	}
	free(g);
	return rc ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}
