/*
 * sort.c - `pems-run sort`: the front of pems_sort() (u64, rec100) and
 * pems_textsort() (lines, csv, --record-size).  Takes GNU sort's options
 * (-t -k -n -g -r -f -b -d -i -V -s -u -z -o -S -T --parallel), checks
 * everything it can before the runtime starts (keys, input, output
 * path, --stats-json), runs the sort and reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "sort_io.h"

static const char sort_help_head[] =
	"Usage: pems-run sort [options] [IN [OUT]]\n"
	"       pems-run sort [options] -o OUT [IN]\n"
	"Sort IN (default '-': stdin) into OUT (default '-': stdout) with the BSP\n"
	"sample sort, in external memory: about 4x the input size of disk traffic,\n"
	"memory bounded by --mem.  Text sorts like 'LC_ALL=C sort' with the same\n"
	"options (C-locale byte order, no locale collation).  OUT may be IN; a\n"
	"regular OUT is written under a temporary name and renamed when complete,\n"
	"a symlink is written through, a FIFO or device is streamed in order.\n"
	"\n"
	"  --format FMT      lines (default: newline-terminated text), csv (RFC 4180,\n"
	"                    header kept first), u64 (8-byte native unsigned\n"
	"                    integers), rec100 (100-byte records, 10-byte key) or\n"
	"                    ascii100 (as lines)\n"
	"  --record-size N   fixed-size binary records of N bytes, sorted stably by\n"
	"                    --key-offset O (default 0) and --key-length L (default\n"
	"                    N - O) bytes in memcmp order\n"
	"  -t, --field-separator SEP  field separator (lines), delimiter (csv)\n"
	"  --delimiter SEP   the same, for csv\n"
	"  -k, --key KEYDEF  lines: GNU key POS1[,POS2], POS = F[.C][bdfgnrV];\n"
	"                    csv: COL[:text|num][:asc|desc], COL a header name or\n"
	"                    a 1-based number (repeatable; csv ties keep input order)\n"
	"  --no-header       csv: the first row is data\n"
	"  -b -d -f -g -i -n -r -V  GNU's ordering options (ignore leading blanks,\n"
	"                    dictionary order, fold case, general numeric, ignore\n"
	"                    nonprinting, numeric, reverse, version)\n"
	"  -s, --stable      no last-resort comparison of whole lines\n"
	"  -u, --unique      output only the first of lines with equal keys\n"
	"  -z, --zero-terminated  lines end with NUL, not newline\n"
	"  -o, --output OUT  write to OUT\n"
	"  -S, --buffer-size SIZE  the same as --mem, read as GNU sort does (a bare\n"
	"                    number is KiB, N% a share of the memory)\n"
	"  -T, --temporary-directory DIR  the same as --tmp\n"
	"  --parallel N      the same as --threads\n"
	"  -h, --help        show this help\n"
	"\n";
static const char sort_help_tail[] =
	"\n"
	"Exit status: 0 ok, 1 runtime failure or bad input, 2 usage error.\n";

enum {
	OPT_RECSIZE = CLI_OPT_FIRST_LOCAL, OPT_KEYOFF, OPT_KEYLEN, OPT_DELIM, OPT_NOHDR,
	OPT_PARALLEL,
};

#define MAX_KEYS PEMS_TKEY_MAX

struct sort_args {
	struct cli_runtime rt;
	const char *format;	/* NULL: lines, or --record-size */
	uint64_t rec_size, key_off, key_len;
	bool have_key_len;
	const char *keys[MAX_KEYS];
	unsigned nkeys;
	const char *tab;
	char letters[64];	/* global ordering letters in order */
	bool stable, unique, zero, no_header;
	const char *in, *out;
	uint64_t bytes;		/* input size */
	char spool[4096];	/* stdin copy, or "" */
	struct pems_textspec ts;
	bool text;		/* pems_textsort, not pems_sort */
	enum pems_format fmt;	/* binary: u64 or rec100 */
};

static int letter(struct sort_args *a, int c)
{
	size_t n = strlen(a->letters);

	if (n + 1 < sizeof(a->letters)) {
		a->letters[n] = (char)c;
		a->letters[n + 1] = 0;
	}
	return 0;
}

static int opt_u64(const char *name, const char *arg, uint64_t *v)
{
	if (cli_parse_u64(arg, true, v))
		return cli_usage("sort: --%s %s: not a number", name, arg);
	return 0;
}

/* -S SIZE as GNU sort reads it: a bare number is KiB, 'b' bytes, N%
 * that share of the physical memory; K/M/G/T as for --mem. */
static int buffer_size(struct sort_args *a, const char *arg)
{
	char buf[64];
	size_t n = strlen(arg);
	uint64_t pct;

	if (n && n < sizeof(buf) - 2 && arg[n - 1] == '%') {
		snprintf(buf, sizeof(buf), "%.*s", (int)(n - 1), arg);
		if (cli_parse_u64(buf, false, &pct) || !pct || pct > 100)
			return cli_usage("sort: -S %s: give a size or a percentage of memory", arg);
		a->rt.cfg.mem = (size_t)((uint64_t)sysconf(_SC_PHYS_PAGES) *
					 (uint64_t)sysconf(_SC_PAGESIZE) / 100 * pct);
		return 0;
	}
	if (n && n < sizeof(buf) - 2 && strspn(arg, "0123456789") == n)
		snprintf(buf, sizeof(buf), "%sK", arg);
	else if (n > 1 && n < sizeof(buf) - 2 && arg[n - 1] == 'b' &&
		 strspn(arg, "0123456789") == n - 1)
		snprintf(buf, sizeof(buf), "%.*s", (int)(n - 1), arg);
	else
		snprintf(buf, sizeof(buf), "%s", arg);
	return cli_runtime_option(&a->rt, "sort", CLI_OPT_MEM, buf);
}

static int sort_option(void *ctx, int c, const char *arg)
{
	struct sort_args *a = ctx;

	switch (c) {
	case CLI_OPT_FORMAT: a->format = arg; return 0;
	case OPT_RECSIZE: return opt_u64("record-size", arg, &a->rec_size);
	case OPT_KEYOFF: return opt_u64("key-offset", arg, &a->key_off);
	case OPT_KEYLEN: a->have_key_len = true; return opt_u64("key-length", arg, &a->key_len);
	case 'k':
		if (a->nkeys >= MAX_KEYS)
			return cli_usage("sort: at most %d keys", MAX_KEYS);
		a->keys[a->nkeys++] = arg;
		return 0;
	case 't': case OPT_DELIM: a->tab = arg; return 0;
	case OPT_NOHDR: a->no_header = true; return 0;
	case 's': a->stable = true; return 0;
	case 'u': a->unique = true; return 0;
	case 'z': a->zero = true; return 0;
	case 'o': a->out = arg; return 0;
	case 'S': return buffer_size(a, arg);
	case 'T': return cli_runtime_option(&a->rt, "sort", CLI_OPT_TMP, arg);
	case OPT_PARALLEL: return cli_runtime_option(&a->rt, "sort", CLI_OPT_THREADS, arg);
	case 'b': case 'd': case 'f': case 'g': case 'i': case 'n': case 'r': case 'V':
	case 'M': case 'R':
		return letter(a, c);
	default:
		return cli_runtime_option(&a->rt, "sort", c, arg);
	}
}

static int operands(struct sort_args *a, int argc, char **argv)
{
	int left = argc - optind;

	if (a->out) {
		if (left > 1)
			return cli_usage("sort: with -o give at most one input; see 'pems-run sort --help'");
		a->in = left ? argv[optind] : "-";
		return 0;
	}
	if (left > 2)
		return cli_usage("sort: expected IN and OUT; see 'pems-run sort --help'");
	a->in = left ? argv[optind] : "-";
	a->out = left > 1 ? argv[optind + 1] : "-";
	return 0;
}

static int sort_parse(int argc, char **argv, struct sort_args *a)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "record-size", required_argument, NULL, OPT_RECSIZE },
		{ "key-offset", required_argument, NULL, OPT_KEYOFF },
		{ "key-length", required_argument, NULL, OPT_KEYLEN },
		{ "key", required_argument, NULL, 'k' },
		{ "field-separator", required_argument, NULL, 't' },
		{ "delimiter", required_argument, NULL, OPT_DELIM },
		{ "no-header", no_argument, NULL, OPT_NOHDR },
		{ "ignore-leading-blanks", no_argument, NULL, 'b' },
		{ "dictionary-order", no_argument, NULL, 'd' },
		{ "ignore-case", no_argument, NULL, 'f' },
		{ "general-numeric-sort", no_argument, NULL, 'g' },
		{ "ignore-nonprinting", no_argument, NULL, 'i' },
		{ "numeric-sort", no_argument, NULL, 'n' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "version-sort", no_argument, NULL, 'V' },
		{ "stable", no_argument, NULL, 's' },
		{ "unique", no_argument, NULL, 'u' },
		{ "zero-terminated", no_argument, NULL, 'z' },
		{ "output", required_argument, NULL, 'o' },
		{ "buffer-size", required_argument, NULL, 'S' },
		{ "temporary-directory", required_argument, NULL, 'T' },
		{ "parallel", required_argument, NULL, OPT_PARALLEL },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		CLI_LONGOPTS_RUNTIME,
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { sort_help_head, cli_runtime_help, sort_help_tail, NULL };
	int rc = cli_getopt_short(argc, argv, "sort", ":ht:k:bdfginrVMRsuzo:S:T:", longopts,
				  help, sort_option, a);

	return rc ? rc : operands(a, argc, argv);
}

/* ---- what to sort ---- */

static int binary_format(struct sort_args *a)
{
	if (a->nkeys || a->tab || a->letters[0] || a->stable || a->unique || a->zero)
		return cli_usage("sort: key options (-k -t -n -r ...) apply to --format lines and csv and to --record-size; %s records sort by their built-in key",
				 a->format);
	a->fmt = !strcmp(a->format, "u64") ? PEMS_FMT_U64 : PEMS_FMT_REC100;
	return 0;
}

static int fixed_format(struct sort_args *a, char *err, size_t n)
{
	if (a->format)
		return cli_usage("sort: --record-size and --format %s do not go together", a->format);
	if (!a->rec_size || a->key_off >= a->rec_size)
		return cli_usage("sort: --record-size %llu --key-offset %llu: the key must start inside the record",
				 (unsigned long long)a->rec_size, (unsigned long long)a->key_off);
	if (!a->have_key_len)
		a->key_len = a->rec_size - a->key_off;
	if (!a->key_len || a->key_off + a->key_len > a->rec_size)
		return cli_usage("sort: --key-length %llu: the key must end inside the %llu-byte record",
				 (unsigned long long)a->key_len, (unsigned long long)a->rec_size);
	if (a->rec_size == 100 && a->key_off == 0 && a->key_len == 10 && !a->unique) {
		a->text = false;	/* rec100's own sort: stable, 10-byte key */
		a->fmt = PEMS_FMT_REC100;
		return 0;
	}
	pems_textspec_init(&a->ts, PEMS_TEXT_FIXED);
	a->ts.rec_size = a->rec_size;
	a->ts.key_off = a->key_off;
	a->ts.key_len = a->key_len;
	a->ts.unique = a->unique;
	if (a->nkeys || a->tab || a->letters[0])
		return cli_usage("sort: --record-size records sort by --key-offset and --key-length, not -k -t or ordering letters");
	(void)err;
	(void)n;
	return 0;
}

/* Lines: GNU's options into a->ts.  Returns an exit status. */
static int lines_format(struct sort_args *a, char *err, size_t n)
{
	unsigned i;

	pems_textspec_init(&a->ts, PEMS_TEXT_LINES);
	a->ts.eol = a->zero ? 0 : '\n';
	a->ts.stable = a->stable;
	a->ts.unique = a->unique;
	if (a->tab && pems_textspec_tab(&a->ts, a->tab, err, n))
		return cli_usage("sort: %s", err);
	for (i = 0; a->letters[i]; i++)
		if (pems_textspec_flag(&a->ts, a->letters[i], err, n))
			return cli_usage("sort: %s", err);
	for (i = 0; i < a->nkeys; i++)
		if (pems_textspec_key(&a->ts, a->keys[i], err, n))
			return cli_usage("sort: %s", err);
	if (pems_textspec_finish(&a->ts, err, n))
		return cli_usage("sort: %s", err);
	return 0;
}

/* CSV: the header names the key columns, so IN must be readable. */
static int csv_format(struct sort_args *a, char *err, size_t n)
{
	static uint8_t hdr[1u << 20];
	size_t hl = 0;
	unsigned i;
	int rc;

	pems_textspec_init(&a->ts, PEMS_TEXT_CSV);
	a->ts.header = !a->no_header;
	a->ts.stable = true;
	a->ts.unique = a->unique;
	if (a->tab && pems_textspec_tab(&a->ts, a->tab, err, n))
		return cli_usage("sort: --delimiter: %s", err);
	if (a->letters[0] || a->zero)
		return cli_usage("sort: csv keys take their type and direction in --key COL[:text|num][:asc|desc], not -%c",
				 a->zero ? 'z' : a->letters[0]);
	rc = a->ts.header ? pems_text_first_record(a->in, &a->ts, hdr, sizeof(hdr), &hl) : 0;
	if (rc && rc != -ENOENT) {
		cli_error("sort: cannot read the header of '%s': %s", a->in,
			  rc == -E2BIG ? "longer than 1 MiB" : strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	for (i = 0; i < a->nkeys; i++)
		if (pems_textspec_csv_key(&a->ts, a->keys[i], rc ? NULL : hdr, hl, err, n))
			return cli_usage("sort: %s", err);
	if (pems_textspec_finish(&a->ts, err, n))
		return cli_usage("sort: %s", err);
	return 0;
}

static int choose_format(struct sort_args *a)
{
	char err[512];
	const char *f = a->format;

	a->text = true;
	if (a->rec_size)
		return fixed_format(a, err, sizeof(err));
	if (!f || !strcmp(f, "lines") || !strcmp(f, "ascii100"))
		return lines_format(a, err, sizeof(err));
	if (!strcmp(f, "csv"))
		return csv_format(a, err, sizeof(err));
	if (!strcmp(f, "u64") || !strcmp(f, "rec100")) {
		a->text = false;
		return binary_format(a);
	}
	return cli_usage("sort: --format %s: unknown format; use lines, csv, u64, rec100 or ascii100, or --record-size N",
			 f);
}

/* Input readable, a regular file (binary: of whole records). */
static int check_input(struct sort_args *a)
{
	struct stat st;
	int fd = open(a->in, O_RDONLY | O_NONBLOCK | O_CLOEXEC);	/* a FIFO must not hang */
	size_t rsz;

	if (fd < 0 || fstat(fd, &st)) {
		cli_error("sort: cannot read input '%s': %s", a->in, strerror(errno));
		if (fd >= 0)
			close(fd);
		return CLI_EXIT_FAIL;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		cli_error("sort: input '%s' is %s, not a regular file (give '-' to read a pipe)", a->in,
			  S_ISBLK(st.st_mode) ? "a block device" : pems_input_kind(st.st_mode));
		return CLI_EXIT_FAIL;
	}
	a->bytes = (uint64_t)st.st_size;
	rsz = a->text ? 0 : pems_format_size(a->fmt);
	if (rsz && a->bytes % rsz) {
		cli_error("sort: input '%s' is %llu bytes, not a multiple of the %zu-byte %s record",
			  a->in, (unsigned long long)a->bytes, rsz, pems_format_name(a->fmt));
		return CLI_EXIT_FAIL;
	}
	if (a->text && a->ts.kind == PEMS_TEXT_FIXED && a->bytes % a->rec_size) {
		cli_error("sort: input '%s' is %llu bytes, not a multiple of the %llu-byte record",
			  a->in, (unsigned long long)a->bytes, (unsigned long long)a->rec_size);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int sort_report(const struct sort_args *a, double secs)
{
	struct pems_stats st;

	pems_get_stats(&st);	/* all ranks' sums */
	if (pems_rank() != 0)
		return CLI_EXIT_OK;	/* one report per job */
	if (!a->rt.quiet)
		cli_summary("sort", a->bytes, secs, &st);
	if (a->rt.stats)
		cli_stats_print("sort", &st);
	if (a->rt.stats_json &&
	    cli_stats_json(a->rt.stats_json, "sort", a->bytes, secs, &st))
		return CLI_EXIT_FAIL;
	return CLI_EXIT_OK;
}

static int run_sort(struct sort_args *a, const char *out, struct cli_progress *prog)
{
	struct pems_sort_job job = { 0 };
	struct pems_textsort_job tj = { 0 };

	if (a->text) {
		tj.in = a->in;
		tj.out = out;
		tj.ts = &a->ts;
		tj.cfg = &a->rt.cfg;
		tj.progress = prog->enabled ? cli_progress_cb : NULL;
		tj.progress_arg = prog;
		return pems_textsort(&tj);
	}
	job.in = a->in;
	job.out = out;
	job.fmt = a->fmt;
	job.cfg = &a->rt.cfg;
	job.progress = prog->enabled ? cli_progress_cb : NULL;
	job.progress_arg = prog;
	return pems_sort(&job);
}

/* Checks before any work, stdin spooled; returns an exit status. */
static int prepare(struct sort_args *a, struct sort_out *o)
{
	int rc;

	if (a->rt.stats_json && sort_check_writable("sort", "--stats-json file", a->rt.stats_json))
		return CLI_EXIT_FAIL;
	rc = sort_out_prepare(o, a->out, &a->rt.cfg);
	if (!rc && !strcmp(a->in, "-")) {
		rc = sort_spool_stdin(&a->rt.cfg, a->spool, sizeof(a->spool));
		a->in = a->spool;
	}
	if (!rc)
		rc = choose_format(a);
	if (!rc)
		rc = check_input(a);
	return rc;
}

int cli_sort_main(int argc, char **argv)
{
	struct sort_args a;
	struct sort_out o;
	struct cli_progress prog;
	double t0;
	int rc;

	memset(&a, 0, sizeof(a));
	memset(&o, 0, sizeof(o));
	cli_runtime_init(&a.rt);
	rc = sort_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	rc = prepare(&a, &o);
	if (!rc)
		rc = cli_runtime_apply(&a.rt, "sort", o.path);
	if (rc)
		goto out;
	cli_progress_init(&prog, "sort", a.rt.quiet || pems_rank() != 0);
	t0 = cli_now();
	rc = run_sort(&a, o.path, &prog);
	t0 = cli_now() - t0;
	cli_progress_clear(&prog);
	if (rc && rc != -PEMS_E_BUDGET && rc != -EINVAL)	/* those were explained */
		cli_error("sort: sorting '%s' failed: %s", a.in, pems_strerror(rc));
	if (sort_out_finish(&o, !rc) && !rc)
		rc = -EIO;
	if (!rc)
		rc = sort_report(&a, t0);
	else
		rc = CLI_EXIT_FAIL;
out:
	if (a.spool[0])
		unlink(a.spool);
	return rc;
}
