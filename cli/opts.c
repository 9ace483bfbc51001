/*
 * opts.c - messages, option parsing and small helpers shared by the
 * pems-run subcommands.
 */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"

/* one line, formatted whole first so that concurrent writers to stderr
 * cannot split it */
static void verror(const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	fprintf(stderr, "pems-run: error: %s\n", msg);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
}

int cli_usage(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(fmt, ap);
	va_end(ap);
	return CLI_EXIT_USAGE;
}

int cli_getopt(int argc, char **argv, const char *cmd, const struct option *longopts,
	       const char *const *help, int (*opt)(void *ctx, int c, const char *arg),
	       void *ctx)
{
	return cli_getopt_short(argc, argv, cmd, ":h", longopts, help, opt, ctx);
}

int cli_getopt_short(int argc, char **argv, const char *cmd, const char *shortopts,
		     const struct option *longopts, const char *const *help,
		     int (*opt)(void *ctx, int c, const char *arg), void *ctx)
{
	int c, rc;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == CLI_OPT_HELP) {
			for (; *help; help++)
				fputs(*help, stdout);
			return -1;
		}
		if (c == '?' || c == ':')
			return cli_bad_option(cmd, c, argv);
		rc = opt(ctx, c, optarg);
		if (rc)
			return rc;
	}
	return 0;
}

int cli_bad_option(const char *cmd, int c, char **argv)
{
	const char *opt = argv[optind - 1];

	if (c == ':')
		return cli_usage("%s: option '%s' needs a value; see 'pems-run %s --help'",
				 cmd, opt, cmd);
	if (optopt && optopt < 256 && opt[0] == '-' && opt[1] != '-')
		return cli_usage("%s: unknown option '-%c'; see 'pems-run %s --help'",
				 cmd, optopt, cmd);
	return cli_usage("%s: unknown option '%s'; see 'pems-run %s --help'",
			 cmd, opt, cmd);
}

int cli_parse_u64(const char *s, bool suffix, uint64_t *out)
{
	unsigned long long v;
	size_t sz;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;	/* decimal, or hex with 0x; never octal */
	v = strtoull(s, &end, strncmp(s, "0x", 2) ? 10 : 16);
	if (errno)
		return -errno;
	if (end != s && !*end) {
		*out = v;
		return 0;
	}
	if (!suffix || end == s || strncmp(s, "0x", 2) == 0)
		return -EINVAL;
	if (pems_parse_size(s, &sz))
		return -EINVAL;
	*out = sz;
	return 0;
}

int cli_parse_format(const char *cmd, const char *arg, enum pems_format *out)
{
	if (pems_format_parse(arg, out))
		return cli_usage("%s: --format %s: unknown format; use %s", cmd, arg,
				 pems_format_names());
	return 0;
}

/* ---- runtime options ---- */

const char cli_runtime_help[] =
	"Runtime options (0 or unset: the runtime chooses; PEMS_* environment\n"
	"variables give the defaults):\n"
	"  --mem SIZE        memory budget M, e.g. 512M, 4G\n"
	"  --tmp DIR         scratch directory, one per disk (repeatable, up to 16)\n"
	"  --procs V         number of virtual processors\n"
	"  --threads K       worker threads (VPs computing at once)\n"
	"  --io KIND         I/O backend: uring (default), aio or sync\n"
	"  --compress MODE   spilled contexts and messages: off (default), zstd,\n"
	"                    zstd:LEVEL (-7..19), or auto (zstd where a sample pays)\n"
	"  --stats           print the runtime statistics at the end\n"
	"  --stats-json FILE write the runtime statistics as JSON to FILE\n"
	"  --quiet           no progress bar and no summary\n"
	"  --checkpoint-every N|auto|off\n"
	"                    checkpoint every N supersteps; auto (default): at\n"
	"                    the first barrier 60 s after the last checkpoint\n"
	"  --checkpoint-dir DIR  where checkpoints go (default OUT.pems-ckpt)\n"
	"  --resume          continue the interrupted run of this same command\n"
	"                    from its checkpoint (or: pems-run resume DIR)\n";

void cli_runtime_init(struct cli_runtime *rt)
{
	memset(rt, 0, sizeof(*rt));
	/* a malformed PEMS_* variable: pems_config_init said which */
	if (pems_config_init(&rt->cfg))
		exit(CLI_EXIT_FAIL);
	/* PEMS_STATS, PEMS_STATS_JSON and PEMS_QUIET act like the options */
	rt->stats = rt->cfg.stats;
	rt->stats_json = rt->cfg.stats_json;
	rt->quiet = rt->cfg.quiet;
}

static int opt_uint(const char *cmd, const char *name, const char *arg,
		    unsigned *out)
{
	uint64_t v;

	if (cli_parse_u64(arg, false, &v) || v > 1u << 30)
		return cli_usage("%s: --%s %s: not a number; give e.g. --%s 4",
				 cmd, name, arg, name);
	*out = (unsigned)v;
	return 0;
}

static int opt_io(const char *cmd, const char *arg, enum pems_io_kind *out)
{
	if (pems_parse_io(arg, out))
		return cli_usage("%s: --io %s: unknown backend; use uring, aio or sync",
				 cmd, arg);
	return 0;
}

static int opt_tmp(struct cli_runtime *rt, const char *cmd, const char *arg)
{
	if (!rt->tmp_given) {	/* the first --tmp replaces PEMS_TMP */
		rt->cfg.ntmp = 0;
		rt->tmp_given = true;
	}
	if (rt->cfg.ntmp >= PEMS_MAX_TMP)
		return cli_usage("%s: --tmp %s: at most %d scratch directories",
				 cmd, arg, PEMS_MAX_TMP);
	rt->cfg.tmp[rt->cfg.ntmp++] = arg;
	return 0;
}

static int opt_ckpt_every(struct cli_runtime *rt, const char *cmd, const char *arg)
{
	uint64_t v;

	rt->ckpt_off = false;
	rt->cfg.ckpt_every = 0;
	if (!strcmp(arg, "off"))
		rt->ckpt_off = true;
	else if (strcmp(arg, "auto") && (cli_parse_u64(arg, false, &v) || !v || v > 1u << 30))
		return cli_usage("%s: --checkpoint-every %s: give a number of supersteps, auto or off",
				 cmd, arg);
	else if (strcmp(arg, "auto"))
		rt->cfg.ckpt_every = (unsigned)v;
	return 0;
}

/* True when the run takes no checkpoints: --checkpoint-every off; or a
 * rank started by mpirun (the launcher's variables, as transport.c reads
 * them) without --checkpoint-every N|auto or --resume: with several
 * ranks checkpoints are asked for explicitly (docs/checkpoint.md). */
bool cli_checkpoints_off(int argc, char **argv)
{
	bool asked = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--checkpoint-every=off") ||
		    (!strcmp(argv[i], "--checkpoint-every") && i + 1 < argc &&
		     !strcmp(argv[i + 1], "off")))
			return true;
		if (!strncmp(argv[i], "--checkpoint-every", 18) || !strcmp(argv[i], "--resume"))
			asked = true;
	}
	return !asked && (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK"));
}

/* --resume: the same command line without --resume must be the one the
 * checkpoint recorded (checkpoint.c compares them). */
static int resume(struct cli_runtime *rt, const char *cmd)
{
	char **av;
	int n = 0, i, j = 0, rc;

	while (cli_argv[n])
		n++;
	av = calloc((size_t)n + 1, sizeof(*av));
	if (!av)
		return CLI_EXIT_FAIL;
	for (i = 0; i < n; i++)
		if (strcmp(cli_argv[i], "--resume"))
			av[j++] = cli_argv[i];
	rc = pems_checkpoint_resume(rt->cfg.ckpt_dir, av);
	free(av);
	(void)rc;	/* the reason is printed */
	(void)cmd;
	return CLI_EXIT_FAIL;
}

int cli_runtime_option(struct cli_runtime *rt, const char *cmd, int opt,
		       const char *arg)
{
	switch (opt) {
	case CLI_OPT_MEM:
		if (pems_parse_size(arg, &rt->cfg.mem))
			return cli_usage("%s: --mem %s: not a size; give e.g. --mem 512M",
					 cmd, arg);
		return 0;
	case CLI_OPT_TMP:
		return opt_tmp(rt, cmd, arg);
	case CLI_OPT_PROCS:
		return opt_uint(cmd, "procs", arg, &rt->cfg.procs);
	case CLI_OPT_THREADS:
		return opt_uint(cmd, "threads", arg, &rt->cfg.threads);
	case CLI_OPT_IO:
		return opt_io(cmd, arg, &rt->cfg.io);
	case CLI_OPT_COMPRESS:
		if (pems_parse_compress(arg, &rt->cfg.compress, &rt->cfg.compress_level))
			return cli_usage("%s: --compress %s: use off, zstd, zstd:LEVEL (-7..19, not 0) or auto",
					 cmd, arg);
		return 0;
	case CLI_OPT_STATS:
		rt->stats = true;
		return 0;
	case CLI_OPT_STATS_JSON:
		rt->stats_json = arg;
		return 0;
	case CLI_OPT_QUIET:
		rt->quiet = true;
		rt->cfg.quiet = true;
		return 0;
	case CLI_OPT_CKPT_EVERY:
		return opt_ckpt_every(rt, cmd, arg);
	case CLI_OPT_CKPT_DIR:
		rt->cfg.ckpt_dir = arg;
		return 0;
	case CLI_OPT_RESUME:
		rt->resume = true;
		return 0;
	default:
		return cli_usage("%s: internal error: option %d", cmd, opt);
	}
}

/* A number in a cgroup file ("max" and unreadable: none) */
static uint64_t cgroup_value(const char *path)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	uint64_t v;

	if (!f)
		return UINT64_MAX;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	v = strtoull(buf, NULL, 10);
	return buf[0] >= '0' && buf[0] <= '9' && v ? v : UINT64_MAX;
}

/* The memory this process may use: physical memory, or less under a
 * cgroup limit (v2 at the root of this namespace or this process's
 * group, v1's memory controller). */
static uint64_t memory_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	uint64_t lim = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : UINT64_MAX, v;
	char line[4096], path[4200];
	FILE *f;

	v = cgroup_value("/sys/fs/cgroup/memory.max");
	lim = v < lim ? v : lim;
	v = cgroup_value("/sys/fs/cgroup/memory/memory.limit_in_bytes");
	lim = v < lim ? v : lim;
	f = fopen("/proc/self/cgroup", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::/", 4))
			continue;
		line[strcspn(line, "\n")] = 0;
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", line + 3);
		v = cgroup_value(path);
		lim = v < lim ? v : lim;
	}
	if (f)
		fclose(f);
	return lim;
}

/* A budget beyond what the machine (or the cgroup) has would be met by
 * swapping or the OOM killer, not by the runtime: clamp it to 3/4 of it. */
static void clamp_mem(struct cli_runtime *rt, const char *cmd)
{
	uint64_t lim = memory_limit(), use;
	char a[32], b[32], c[32];

	if (!rt->cfg.mem || lim == UINT64_MAX || rt->cfg.mem <= lim)
		return;
	use = lim / 4 * 3 / (1u << 20) * (1u << 20);
	fprintf(stderr, "pems-run: warning: %s: --mem %s is more than this machine's memory (%s, its limit here); using %s\n",
		cmd, cli_human(rt->cfg.mem, a, sizeof(a)), cli_human(lim, b, sizeof(b)),
		cli_human(use, c, sizeof(c)));
	rt->cfg.mem = (size_t)use;
}

int cli_runtime_apply(struct cli_runtime *rt, const char *cmd, const char *out)
{
	static char dir[4096];
	int rc;

	if (!out || rt->ckpt_off) {
		rt->cfg.ckpt_dir = NULL;
	} else if (!rt->cfg.ckpt_dir) {
		snprintf(dir, sizeof(dir), "%s.pems-ckpt", out);
		rt->cfg.ckpt_dir = dir;
	}
	if (rt->resume && !rt->cfg.ckpt_dir)
		return cli_usage("%s: --resume needs checkpoints (not --checkpoint-every off)", cmd);
	if (rt->resume)
		return resume(rt, cmd);

	/* the CLI prints and writes the statistics itself (cli_stats_*) */
	rt->cfg.stats = false;
	rt->cfg.stats_json = NULL;
	clamp_mem(rt, cmd);
	rc = pems_configure(&rt->cfg);
	if (rc)
		return cli_usage("%s: the runtime refused the configuration: %s",
				 cmd, pems_strerror(rc));
	pems_steps_record(true);	/* per-superstep lines of --stats-json */
	return 0;
}

/* ---- sizes, time, files ---- */

char *cli_human(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.2f %s", v, unit[u]);
	return buf;
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

uint64_t cli_peak_rss(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_maxrss * 1024;
}

int cli_check_out_dir(const char *cmd, const char *path)
{
	char *copy = strdup(path);
	const char *dir;
	int rc = 0;

	if (!copy) {
		cli_error("%s: %s", cmd, strerror(ENOMEM));
		return -ENOMEM;
	}
	dir = dirname(copy);
	if (access(dir, W_OK | X_OK)) {
		rc = -errno;
		if (rc == -ENOENT || rc == -ENOTDIR)
			cli_error("%s: output directory '%s' does not exist", cmd, dir);
		else
			cli_error("%s: output directory '%s' is not writable: %s",
				  cmd, dir, strerror(-rc));
	}
	free(copy);
	return rc;
}
