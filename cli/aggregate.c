/*
 * aggregate.c - `pems-run aggregate`: the front of pems_aggregate().
 * Parses the aggregate list and formats, checks the paths, configures
 * the runtime, runs the GROUP BY and reports.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

static const char agg_help_head[] =
	"Usage: pems-run aggregate --agg LIST [options] IN OUT\n"
	"GROUP BY key of IN into OUT, sorted by key, in external memory: rows\n"
	"are pre-aggregated per VP in a bounded table (skipped when a sample\n"
	"shows little reduction; frequent keys always), partial results go to\n"
	"the VP owning their key range, owners merge.  Memory bounded by --mem.\n"
	"OUT is written under a temporary name and renamed when complete.\n"
	"\n"
	"  --agg LIST             comma-separated, in output order: count, sum,\n"
	"                         min, max, avg (default count)\n"
	"  --input-format FMT     kv (default): 16-byte little-endian records\n"
	"                         {u64 key, i64 value}; csv: text with a header\n"
	"                         row, fields separated by ',', optionally quoted\n"
	"                         (\"...\", \"\" inside; no newlines in fields)\n"
	"  --key COL              csv: key column, a header name or a 1-based\n"
	"                         index (default: the column named key); keys\n"
	"                         are unsigned 64-bit integers\n"
	"  --value COL            csv: value column (default: value); values are\n"
	"                         signed 64-bit integers\n"
	"  --output-format FMT    csv (default): header key,<LIST>, one line per\n"
	"                         group; avg is the exact sum/count in decimal,\n"
	"                         rounded to 9 places (half away from zero,\n"
	"                         trailing zeros dropped);\n"
	"                         kv: per group the u64 key, then 8 bytes per\n"
	"                         aggregate in LIST order, little-endian: count\n"
	"                         u64, sum/min/max i64, avg IEEE-754 double\n"
	"                         (nearest to sum/count)\n"
	"  -h, --help             show this help\n"
	"\n"
	"Sums are exact (128-bit accumulators); a sum outside int64 is an error.\n"
	"\n";
static const char agg_help_tail[] =
	"\n"
	"Exit status: 0 ok, 1 runtime failure or bad data, 2 usage error.\n";

enum { OPT_AGG = CLI_OPT_FIRST_LOCAL, OPT_IN_FMT, OPT_OUT_FMT, OPT_KEY, OPT_VALUE };

struct agg_args {
	struct cli_runtime rt;
	struct pems_aggregate_job job;
	const char *in, *out;
	uint64_t bytes;
};

static int parse_aggs(const char *list, struct pems_aggregate_job *job)
{
	char buf[512], *save = NULL, *tok;

	if (strlen(list) >= sizeof(buf))
		return cli_usage("aggregate: --agg %s: too long", list);
	strcpy(buf, list);
	job->naggs = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct pems_aggregate *a = pems_aggregate_builtin(tok);

		if (!a)
			return cli_usage("aggregate: --agg %s: unknown aggregate '%s'; use count, sum, min, max or avg",
					 list, tok);
		if (job->naggs >= PEMS_AGG_MAX)
			return cli_usage("aggregate: --agg %s: at most %d aggregates", list, PEMS_AGG_MAX);
		job->aggs[job->naggs++] = a;
	}
	if (!job->naggs)
		return cli_usage("aggregate: --agg '%s': give at least one of count, sum, min, max, avg",
				 list);
	return 0;
}

static int agg_option(void *ctx, int c, const char *arg)
{
	struct agg_args *a = ctx;
	switch (c) {
	case OPT_AGG:
		return parse_aggs(arg, &a->job);
	case OPT_IN_FMT:
		if (!strcmp(arg, "kv"))
			a->job.in_fmt = PEMS_AGG_IN_KV;
		else if (!strcmp(arg, "csv"))
			a->job.in_fmt = PEMS_AGG_IN_CSV;
		else
			return cli_usage("aggregate: --input-format %s: unknown format; use kv or csv", arg);
		return 0;
	case OPT_OUT_FMT:
		if (!strcmp(arg, "csv"))
			a->job.out_fmt = PEMS_AGG_OUT_CSV;
		else if (!strcmp(arg, "kv"))
			a->job.out_fmt = PEMS_AGG_OUT_KV;
		else
			return cli_usage("aggregate: --output-format %s: unknown format; use csv or kv", arg);
		return 0;
	case OPT_KEY:
		a->job.key_col = arg;
		return 0;
	case OPT_VALUE:
		a->job.value_col = arg;
		return 0;
	default:
		return cli_runtime_option(&a->rt, "aggregate", c, arg);
	}
}

static int agg_parse(int argc, char **argv, struct agg_args *a)
{
	static const struct option longopts[] = {
		{ "agg", required_argument, NULL, OPT_AGG },
		{ "input-format", required_argument, NULL, OPT_IN_FMT },
		{ "output-format", required_argument, NULL, OPT_OUT_FMT },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "value", required_argument, NULL, OPT_VALUE },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		CLI_LONGOPTS_RUNTIME,
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { agg_help_head, cli_runtime_help, agg_help_tail, NULL };
	int rc = cli_getopt(argc, argv, "aggregate", longopts, help, agg_option, a);

	if (rc)
		return rc;
	if (!a->job.naggs)
		parse_aggs("count", &a->job);
	if (a->job.in_fmt == PEMS_AGG_IN_KV && (a->job.key_col || a->job.value_col))
		return cli_usage("aggregate: --key and --value need --input-format csv");
	if (optind != argc - 2)
		return cli_usage("aggregate: expected IN and OUT; see 'pems-run aggregate --help'");
	a->in = argv[optind];
	a->out = argv[optind + 1];
	return 0;
}

static int check_paths(struct agg_args *a)
{
	struct stat in, out;
	int fd = open(a->in, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &in)) {
		cli_error("aggregate: cannot read input '%s': %s", a->in, strerror(errno));
		if (fd >= 0)
			close(fd);
		return CLI_EXIT_FAIL;
	}
	close(fd);
	if (!S_ISREG(in.st_mode)) {
		cli_error("aggregate: input '%s' is not a regular file", a->in);
		return CLI_EXIT_FAIL;
	}
	a->bytes = (uint64_t)in.st_size;
	if (!strcmp(a->in, a->out) ||
	    (!stat(a->out, &out) && out.st_dev == in.st_dev && out.st_ino == in.st_ino))
		return cli_usage("aggregate: output '%s' is the input file; give another output path",
				 a->out);
	if (cli_check_out_dir("aggregate", a->out))
		return CLI_EXIT_FAIL;
	return CLI_EXIT_OK;
}

static int agg_report(const struct agg_args *a, double secs)
{
	struct pems_stats st;

	pems_get_stats(&st);
	if (pems_rank() != 0)
		return CLI_EXIT_OK;
	if (!a->rt.quiet) {
		cli_summary("aggregate", a->bytes, secs, &st);
		fprintf(stderr, "aggregate: %llu rows, %llu groups\n",
			(unsigned long long)a->job.rows, (unsigned long long)a->job.groups);
	}
	if (a->rt.stats)
		cli_stats_print("aggregate", &st);
	if (a->rt.stats_json &&
	    cli_stats_json(a->rt.stats_json, "aggregate", a->bytes, secs, &st))
		return CLI_EXIT_FAIL;
	return CLI_EXIT_OK;
}

int cli_aggregate_main(int argc, char **argv)
{
	static struct agg_args a;
	struct cli_progress prog;
	double t0;
	int rc;

	memset(&a, 0, sizeof(a));
	cli_runtime_init(&a.rt);
	rc = agg_parse(argc, argv, &a);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	rc = check_paths(&a);
	if (!rc)
		rc = cli_runtime_apply(&a.rt, "aggregate", a.out);
	if (rc)
		return rc;
	cli_progress_init(&prog, "aggregate", a.rt.quiet || pems_rank() != 0);
	a.job.in = a.in;
	a.job.out = a.out;
	a.job.cfg = &a.rt.cfg;
	a.job.progress = prog.enabled ? cli_progress_cb : NULL;
	a.job.progress_arg = &prog;
	t0 = cli_now();
	rc = pems_aggregate(&a.job);
	t0 = cli_now() - t0;
	cli_progress_clear(&prog);
	if (rc) {
		if (pems_rank() == 0 && rc != -PEMS_E_BUDGET) {	/* explained already */
			if (a.job.errmsg[0])
				cli_error("aggregate: %s", a.job.errmsg);
			else
				cli_error("aggregate: aggregating '%s' failed: %s", a.in,
					  pems_strerror(rc));
		}
		return CLI_EXIT_FAIL;
	}
	return agg_report(&a, t0);
}
