/*
 * cli.h - shared pieces of the pems-run program: messages, option
 * parsing, record generation and hashing, progress and summaries.
 *
 * The CLI uses only the public headers (pems.h, bsp.h),
 * algorithms/pems_algorithms.h, gen/pems_gen.h and model/pems_model.h
 * (STYLE.md rule 5).  Exit statuses: 0 ok,
 * CLI_EXIT_FAIL runtime failure, CLI_EXIT_USAGE usage error (rule 9).
 */
#ifndef PEMS_CLI_H
#define PEMS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pems.h"
#include "pems_algorithms.h"
#include "pems_gen.h"

#ifndef PEMS_VERSION
#define PEMS_VERSION "0.1.0"
#endif

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

/* read/write block of gen and verify (bounded memory) */
#define CLI_IO_BLOCK ((size_t)8 << 20)

/* ---- messages (opts.c) ---- */

/* "pems-run: error: <fmt>\n" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cli_error, then return CLI_EXIT_USAGE (for "return cli_usage(...)"). */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- option parsing (opts.c) ---- */

/* getopt_long codes of the options shared by the runtime subcommands */
enum cli_opt {
	CLI_OPT_HELP = 'h',
	CLI_OPT_FORMAT = 256,
	CLI_OPT_MEM,
	CLI_OPT_TMP,
	CLI_OPT_PROCS,
	CLI_OPT_THREADS,
	CLI_OPT_IO,
	CLI_OPT_STATS,
	CLI_OPT_STATS_JSON,
	CLI_OPT_QUIET,
	CLI_OPT_CKPT_EVERY,
	CLI_OPT_CKPT_DIR,
	CLI_OPT_RESUME,
	CLI_OPT_COMPRESS,
	CLI_OPT_FIRST_LOCAL = 512,	/* subcommands number theirs from here */
};

#define CLI_LONGOPTS_RUNTIME						\
	{ "mem", required_argument, NULL, CLI_OPT_MEM },		\
	{ "tmp", required_argument, NULL, CLI_OPT_TMP },		\
	{ "procs", required_argument, NULL, CLI_OPT_PROCS },		\
	{ "threads", required_argument, NULL, CLI_OPT_THREADS },	\
	{ "io", required_argument, NULL, CLI_OPT_IO },			\
	{ "compress", required_argument, NULL, CLI_OPT_COMPRESS },	\
	{ "stats", no_argument, NULL, CLI_OPT_STATS },			\
	{ "stats-json", required_argument, NULL, CLI_OPT_STATS_JSON },	\
	{ "checkpoint-every", required_argument, NULL, CLI_OPT_CKPT_EVERY }, \
	{ "checkpoint-dir", required_argument, NULL, CLI_OPT_CKPT_DIR },	\
	{ "resume", no_argument, NULL, CLI_OPT_RESUME }

/* Help text of the shared runtime options (for a subcommand's --help). */
extern const char cli_runtime_help[];

/* Options of a runtime subcommand: cfg starts from pems_config_init()
 * (defaults and PEMS_* environment) and the options override it. */
struct cli_runtime {
	struct pems_config cfg;
	bool stats;		/* --stats: print pems_stats at the end */
	const char *stats_json;	/* --stats-json: write them here */
	bool quiet;		/* --quiet: no progress, no summary */
	bool tmp_given;		/* a --tmp was seen: PEMS_TMP is replaced */
	bool ckpt_off;		/* --checkpoint-every off */
	bool resume;		/* --resume: continue from the checkpoint */
};

/* the process's argv (main.c), for --resume */
extern char **cli_argv;
/* pems-run resume DIR */
int cli_resume_main(int argc, char **argv);
/* True when argv asks for no checkpoints (before the re-exec, main.c). */
bool cli_checkpoints_off(int argc, char **argv);

void cli_runtime_init(struct cli_runtime *rt);
/* Apply option @opt (a CLI_OPT_* runtime code) with @arg for subcommand
 * @cmd.  Returns 0, or CLI_EXIT_USAGE after printing why. */
int cli_runtime_option(struct cli_runtime *rt, const char *cmd, int opt,
		       const char *arg);
/* pems_configure(&rt->cfg); returns 0 or CLI_EXIT_USAGE after a message.
 * With @out (the output file) checkpoints go to --checkpoint-dir or
 * <out>.pems-ckpt, and --resume replaces the process with the resumed
 * run (returning CLI_EXIT_FAIL when it is refused). */
int cli_runtime_apply(struct cli_runtime *rt, const char *cmd, const char *out);

/* The option loop of a subcommand: --help / -h prints the strings of
 * @help (NULL-ended) on stdout and returns -1; an option getopt_long
 * refuses is a usage error (CLI_EXIT_USAGE); every other option goes to
 * @opt(@ctx, c, optarg), whose non-zero exit status ends the loop.
 * Returns 0 with optind at the first operand. */
int cli_getopt(int argc, char **argv, const char *cmd, const struct option *longopts,
	       const char *const *help, int (*opt)(void *ctx, int c, const char *arg),
	       void *ctx);
/* cli_getopt with short options @shortopts (getopt syntax, starting
 * with ":h"). */
int cli_getopt_short(int argc, char **argv, const char *cmd, const char *shortopts,
		     const struct option *longopts, const char *const *help,
		     int (*opt)(void *ctx, int c, const char *arg), void *ctx);
/* Message for the option getopt_long just refused (@c is '?' or ':');
 * returns CLI_EXIT_USAGE. */
int cli_bad_option(const char *cmd, int c, char **argv);
/* Parse a decimal or 0x-hex number; K/M/G/T suffixes (powers of 1024)
 * when @suffix.  Returns 0 or -EINVAL/-ERANGE. */
int cli_parse_u64(const char *s, bool suffix, uint64_t *out);
/* --format for @cmd; returns 0 or CLI_EXIT_USAGE after a message. */
int cli_parse_format(const char *cmd, const char *arg, enum pems_format *out);

/* ---- sizes and files (opts.c) ---- */

/* Human size "1.50 GiB" into @buf (at least 16 bytes); returns buf. */
char *cli_human(uint64_t bytes, char *buf, size_t len);
double cli_now(void);
/* Peak resident set of this process in bytes. */
uint64_t cli_peak_rss(void);
/* Check that @path's directory exists and is writable; prints
 * "<cmd>: output directory ..." and returns -errno when not. */
int cli_check_out_dir(const char *cmd, const char *path);

/* Records, kv rows and sgd rows to generate: gen/pems_gen.h; keys,
 * hashes and checksums of records: pems_formats.h. */

/* ---- progress and summary (progress.c) ---- */

struct cli_progress {
	const char *cmd;
	bool enabled;		/* stderr is a terminal and not --quiet */
	double t0, last_draw, phase_t0;
	const char *phase;
	uint64_t done, total;
	bool drawn;
};

void cli_progress_init(struct cli_progress *p, const char *cmd, bool quiet);
/* Redraw "phase [####   ] done/total MB/s ETA" (at most ~5 times/s). */
void cli_progress_update(struct cli_progress *p, const char *phase,
			 uint64_t done, uint64_t total);
/* Erase the bar (before any other output on stderr). */
void cli_progress_clear(struct cli_progress *p);
/* Callback for pems_sort_job.progress etc.; @arg is a cli_progress. */
void cli_progress_cb(const char *phase, uint64_t done, uint64_t total,
		     void *arg);

/* "<cmd>: <bytes> in <s> (<MB/s>); read ..., written ...; <n> supersteps;
 * peak RSS ..." on stderr, from pems_get_stats(). */
void cli_summary(const char *cmd, uint64_t bytes, double secs,
		 const struct pems_stats *st);
void cli_stats_print(const char *cmd, const struct pems_stats *st);
/* Write @st as a JSON object to @path, with @cmd, @bytes and @secs.
 * Returns 0 or -errno (message printed). */
int cli_stats_json(const char *path, const char *cmd, uint64_t bytes,
		   double secs, const struct pems_stats *st);

/* ---- subcommands ---- */

int cli_gen_main(int argc, char **argv);
int cli_verify_main(int argc, char **argv);
int cli_sort_main(int argc, char **argv);
int cli_aggregate_main(int argc, char **argv);
/* gen --format kv (gen_kv.c) */
int cli_gen_kv_main(int argc, char **argv);
/* gen --format groupby: the db-benchmark G1 table (gen_groupby.c) */
int cli_gen_groupby_main(int argc, char **argv);
int cli_sgd_main(int argc, char **argv);
/* gen --format lines|csv (gen_text.c) */
int cli_gen_text_main(int argc, char **argv);
/* gen --format dense|libsvm (gen_sgd.c) */
int cli_gen_sgd_main(int argc, char **argv);
/* model calibrate|predict|project (model.c) */
int cli_model_main(int argc, char **argv);


#endif
