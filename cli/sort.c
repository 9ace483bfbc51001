/*
 * sort.c - `pems-run sort`: the front of pems_sort().  Checks the
 * arguments (so that common mistakes get a clear message before the
 * runtime starts), configures the runtime, runs the sort and reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

static const char sort_help_head[] =
	"Usage: pems-run sort --format FMT [options] IN OUT\n"
	"Sort the records of IN into OUT with the BSP sample sort, in external\n"
	"memory: about 4x the input size of disk traffic (down to 2x when --mem has\n"
	"room to keep the exchanged records), memory bounded by --mem.\n"
	"OUT is written under a temporary name and renamed when complete.\n"
	"\n"
	"  --format FMT      u64 (8-byte native unsigned integers) or rec100\n"
	"                    (100-byte records, 10-byte key, stable)\n"
	"  -h, --help        show this help\n"
	"\n";
static const char sort_help_tail[] =
	"\n"
	"Exit status: 0 ok, 1 runtime failure, 2 usage error.\n";

struct sort_args {
	struct cli_runtime rt;
	enum pems_format fmt;
	bool have_format;
	const char *in, *out;
	uint64_t bytes;		/* input size */
};

static int sort_option(void *ctx, int c, const char *arg)
{
	struct sort_args *a = ctx;

	if (c == CLI_OPT_FORMAT) {
		if (cli_parse_format("sort", arg, &a->fmt))
			return CLI_EXIT_USAGE;
		a->have_format = true;
		return 0;
	}
	return cli_runtime_option(&a->rt, "sort", c, arg);
}

static int sort_parse(int argc, char **argv, struct sort_args *a)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		CLI_LONGOPTS_RUNTIME,
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { sort_help_head, cli_runtime_help, sort_help_tail, NULL };
	int rc = cli_getopt(argc, argv, "sort", longopts, help, sort_option, a);

	if (rc)
		return rc;
	if (!a->have_format)
		return cli_usage("sort: --format is required (u64 or rec100)");
	if (a->fmt != PEMS_FMT_U64 && a->fmt != PEMS_FMT_REC100)
		return cli_usage("sort: --format %s is not supported; use u64 or rec100",
				 pems_format_name(a->fmt));
	if (optind != argc - 2)
		return cli_usage("sort: expected IN and OUT; see 'pems-run sort --help'");
	a->in = argv[optind];
	a->out = argv[optind + 1];
	return 0;
}

/* Input readable, a regular file of whole records; returns exit status. */
static int check_input(struct sort_args *a, struct stat *st)
{
	size_t rsz = pems_format_size(a->fmt);
	int fd = open(a->in, O_RDONLY | O_NONBLOCK | O_CLOEXEC);	/* a FIFO must not hang */

	if (fd < 0) {
		cli_error("sort: cannot read input '%s': %s", a->in, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (fstat(fd, st)) {
		cli_error("sort: cannot read input '%s': %s", a->in, strerror(errno));
		close(fd);
		return CLI_EXIT_FAIL;
	}
	close(fd);
	if (!S_ISREG(st->st_mode)) {
		cli_error("sort: input '%s' is %s; sort reads a regular file, at offsets and more than once: save the data to a file first",
			  a->in, S_ISBLK(st->st_mode) ? "a block device" : pems_input_kind(st->st_mode));
		return CLI_EXIT_FAIL;
	}
	a->bytes = (uint64_t)st->st_size;
	if (a->bytes % rsz) {
		cli_error("sort: input '%s' is %llu bytes, not a multiple of the %zu-byte %s record",
			  a->in, (unsigned long long)a->bytes, rsz,
			  pems_format_name(a->fmt));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int check_output(const struct sort_args *a, const struct stat *in)
{
	struct stat st;

	if (!strcmp(a->in, a->out) ||
	    (!stat(a->out, &st) && st.st_dev == in->st_dev &&
	     st.st_ino == in->st_ino))
		return cli_usage("sort: output '%s' is the input file; give another output path",
				 a->out);
	if (cli_check_out_dir("sort", a->out))
		return CLI_EXIT_FAIL;
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

int cli_sort_main(int argc, char **argv)
{
	struct sort_args a = { 0 };
	struct cli_progress prog;
	struct pems_sort_job job = { 0 };
	struct stat in_st;
	double t0;
	int rc;

	cli_runtime_init(&a.rt);
	rc = sort_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	rc = check_input(&a, &in_st);
	if (!rc)
		rc = check_output(&a, &in_st);
	if (!rc)
		rc = cli_runtime_apply(&a.rt, "sort", a.out);
	if (rc)
		return rc;
	cli_progress_init(&prog, "sort", a.rt.quiet || pems_rank() != 0);
	job.in = a.in;
	job.out = a.out;
	job.fmt = a.fmt;
	job.progress = prog.enabled ? cli_progress_cb : NULL;
	job.progress_arg = &prog;
	t0 = cli_now();
	rc = pems_sort(&job);
	t0 = cli_now() - t0;
	cli_progress_clear(&prog);
	if (rc) {
		if (rc != -PEMS_E_BUDGET)	/* that one was explained already */
			cli_error("sort: sorting '%s' failed: %s", a.in, pems_strerror(rc));
		return CLI_EXIT_FAIL;
	}
	return sort_report(&a, t0);
}
