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
	"Usage: pems-run aggregate --by COLS --agg EXPRS [options] IN OUT\n"
	"       pems-run aggregate --agg LIST [--input-format kv|csv] [options] IN OUT\n"
	"\n"
	"SQL GROUP BY over a CSV file larger than memory (IN and OUT may be -):\n"
	"  SELECT COLS, EXPRS FROM IN GROUP BY COLS ORDER BY COLS (NULLS LAST)\n"
	"  --by COLS              group columns by header name (or 1-based index),\n"
	"                         comma-separated; none: one group\n"
	"  --agg EXPRS            output columns: count(*), count(c), count(distinct c),\n"
	"                         sum, min, max, avg/mean, median, sd/stddev (sample),\n"
	"                         corr(a,b), r2(a,b), topN(c), bottomN(c) (N lines per\n"
	"                         group), and + - * / pow(x,n) of them; NULLs skipped\n"
	"  --as NAMES             names of the output columns (default: sum_v1 ...)\n"
	"  --schema COL:TYPE,...  types str, i64, f64 (default: inferred from the\n"
	"                         first MiB)\n"
	"  --delimiter C          field delimiter: one character, or tab (default ,)\n"
	"  --no-header            the first line is data; columns are c1, c2, ...\n"
	"  --null TOKEN           a field equal to TOKEN is NULL too (empty always is)\n"
	"  --on-error stop|skip   a bad row ends the run (default: line, column and\n"
	"                         reason, exit 1, no OUT) or is skipped and counted\n"
	"The db-benchmark groupby questions (pems-run gen --format groupby):\n"
	"  q1  --by id1 --agg 'sum(v1)'\n"
	"  q2  --by id1,id2 --agg 'sum(v1)'\n"
	"  q3  --by id3 --agg 'sum(v1),mean(v3)'\n"
	"  q4  --by id4 --agg 'mean(v1),mean(v2),mean(v3)'\n"
	"  q5  --by id6 --agg 'sum(v1),sum(v2),sum(v3)'\n"
	"  q6  --by id4,id5 --agg 'median(v3),sd(v3)'\n"
	"  q7  --by id3 --agg 'max(v1)-min(v2)' --as range_v1_v2\n"
	"  q8  --by id6 --agg 'top2(v3)' --as largest2_v3\n"
	"  q9  --by id2,id4 --agg 'pow(corr(v1,v2),2)' --as r2\n"
	"  q10 --by id1,id2,id3,id4,id5,id6 --agg 'sum(v3),count(*)' --as v3,count\n"
	"\n"
	"The older form: GROUP BY one unsigned-integer key of binary kv rows or\n"
	"a CSV with key and value columns.\n"
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

enum {
	OPT_AGG = CLI_OPT_FIRST_LOCAL, OPT_IN_FMT, OPT_OUT_FMT, OPT_KEY, OPT_VALUE,
	OPT_BY, OPT_AS, OPT_SCHEMA, OPT_DELIM, OPT_NO_HEADER, OPT_NULL, OPT_ON_ERROR
};

struct agg_args {
	struct cli_runtime rt;
	struct pems_aggregate_job job;
	struct pems_csv_groupby_job gjob;	/* the --by form */
	bool typed;
	const char *in, *out;
	uint64_t bytes;
};

/* the --by form's options */
static int typed_option(struct agg_args *a, int c, const char *arg)
{
	struct pems_csv_groupby_job *g = &a->gjob;

	a->typed = true;
	switch (c) {
	case OPT_BY:
		g->by = arg;
		return 0;
	case OPT_AS:
		g->as = arg;
		return 0;
	case OPT_SCHEMA:
		g->schema = arg;
		return 0;
	case OPT_DELIM:
		if (!strcmp(arg, "tab") || !strcmp(arg, "\\t"))
			arg = "\t";
		if (strlen(arg) != 1 || arg[0] == '"' || arg[0] == '\n' || arg[0] == '\r')
			return cli_usage("aggregate: --delimiter %s: give one character (not a quote or newline), or tab",
					 arg);
		g->delim = arg[0];
		return 0;
	case OPT_NO_HEADER:
		g->no_header = true;
		return 0;
	case OPT_NULL:
		g->null_token = arg;
		return 0;
	default:	/* OPT_ON_ERROR */
		if (strcmp(arg, "stop") && strcmp(arg, "skip"))
			return cli_usage("aggregate: --on-error %s: use stop or skip", arg);
		g->skip_errors = !strcmp(arg, "skip");
		return 0;
	}
}

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
	if (c >= OPT_BY)
		return typed_option(a, c, arg);
	switch (c) {
	case OPT_AGG:
		a->gjob.agg = arg;
		if (strchr(arg, '('))
			a->typed = true;
		return a->typed ? 0 : parse_aggs(arg, &a->job);
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
		{ "by", required_argument, NULL, OPT_BY },
		{ "as", required_argument, NULL, OPT_AS },
		{ "schema", required_argument, NULL, OPT_SCHEMA },
		{ "delimiter", required_argument, NULL, OPT_DELIM },
		{ "no-header", no_argument, NULL, OPT_NO_HEADER },
		{ "null", required_argument, NULL, OPT_NULL },
		{ "on-error", required_argument, NULL, OPT_ON_ERROR },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		CLI_LONGOPTS_RUNTIME,
		{ NULL, 0, NULL, 0 }
	};
	static const char *const help[] = { agg_help_head, cli_runtime_help, agg_help_tail, NULL };
	int rc = cli_getopt(argc, argv, "aggregate", longopts, help, agg_option, a);

	if (rc)
		return rc;
	if (a->typed) {
		if (a->job.key_col || a->job.value_col || a->job.in_fmt != PEMS_AGG_IN_KV ||
		    a->job.out_fmt != PEMS_AGG_OUT_CSV)
			return cli_usage("aggregate: --key, --value, --input-format and --output-format belong to the older form, not to --by");
		if (!a->gjob.agg)
			return cli_usage("aggregate: --by needs --agg, e.g. --agg 'sum(v1),mean(v3)'");
		if (pems_csv_groupby_check(&a->gjob))
			return cli_usage("aggregate: %s", a->gjob.errmsg);
		if (optind != argc - 2)
			return cli_usage("aggregate: expected IN and OUT; see 'pems-run aggregate --help'");
		a->in = argv[optind];
		a->out = argv[optind + 1];
		return 0;
	}
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
	int fd;

	if (a->typed && !strcmp(a->out, "-"))
		return CLI_EXIT_OK;
	if (a->typed && !lstat(a->out, &out) && !S_ISREG(out.st_mode)) {
		cli_error("aggregate: output '%s' exists and is not a regular file (a symlink, FIFO, device or directory is never replaced)",
			  a->out);
		return CLI_EXIT_FAIL;
	}
	if (a->typed && !strcmp(a->in, "-"))
		return cli_check_out_dir("aggregate", a->out) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
	fd = open(a->in, O_RDONLY | O_NONBLOCK | O_CLOEXEC);	/* a FIFO must not hang */

	if (fd < 0 || fstat(fd, &in)) {
		cli_error("aggregate: cannot read input '%s': %s", a->in, strerror(errno));
		if (fd >= 0)
			close(fd);
		return CLI_EXIT_FAIL;
	}
	close(fd);
	if (!S_ISREG(in.st_mode)) {
		cli_error("aggregate: input '%s' is %s; aggregate reads a regular file, at offsets and more than once: save the data to a file first",
			  a->in, S_ISBLK(in.st_mode) ? "a block device" : pems_input_kind(in.st_mode));
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
			a->typed ? (unsigned long long)a->gjob.rows : (unsigned long long)a->job.rows,
			a->typed ? (unsigned long long)a->gjob.groups : (unsigned long long)a->job.groups);
	}
	if (a->typed && a->gjob.skipped)
		fprintf(stderr, "aggregate: %llu bad rows skipped, the first:\n%s\n",
			(unsigned long long)a->gjob.skipped, a->gjob.skipmsg);
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
	a.job.in = a.gjob.in = a.in;
	a.job.out = a.gjob.out = a.out;
	a.job.cfg = a.gjob.cfg = &a.rt.cfg;
	a.job.progress = a.gjob.progress = prog.enabled ? cli_progress_cb : NULL;
	a.job.progress_arg = a.gjob.progress_arg = &prog;
	t0 = cli_now();
	rc = a.typed ? pems_csv_groupby(&a.gjob) : pems_aggregate(&a.job);
	t0 = cli_now() - t0;
	cli_progress_clear(&prog);
	if (rc) {
		if (pems_rank() == 0 && rc != -PEMS_E_BUDGET) {	/* explained already */
			if (a.typed && a.gjob.errmsg[0])
				cli_error("aggregate: %s", a.gjob.errmsg);
			else if (a.job.errmsg[0])
				cli_error("aggregate: %s", a.job.errmsg);
			else
				cli_error("aggregate: aggregating '%s' failed: %s", a.in,
					  pems_strerror(rc));
		}
		return CLI_EXIT_FAIL;
	}
	return agg_report(&a, t0);
}
