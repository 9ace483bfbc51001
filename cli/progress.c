/*
 * progress.c - progress bar, end-of-run summary and statistics output.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

#define REDRAW_SECS 0.2
#define BAR_WIDTH 24

void cli_progress_init(struct cli_progress *p, const char *cmd, bool quiet)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	p->enabled = !quiet && isatty(STDERR_FILENO);
	p->t0 = p->phase_t0 = cli_now();
	p->last_draw = 0;
}

static void fmt_eta(double secs, char *buf, size_t len)
{
	unsigned long s = secs > 0 && secs < 1e7 ? (unsigned long)secs : 0;

	if (s >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", s / 3600, s / 60 % 60, s % 60);
	else
		snprintf(buf, len, "%lu:%02lu", s / 60, s % 60);
}

static void draw(struct cli_progress *p, double now)
{
	char bar[BAR_WIDTH + 1], done[32], total[32], eta[32];
	double frac = p->total ? (double)p->done / p->total : 0, secs, rate;
	unsigned fill, i;

	if (frac > 1)
		frac = 1;
	fill = (unsigned)(frac * BAR_WIDTH);
	for (i = 0; i < BAR_WIDTH; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[BAR_WIDTH] = '\0';
	secs = now - p->phase_t0;
	rate = secs > 0 ? p->done / secs : 0;
	fmt_eta(rate > 0 ? (p->total - p->done) / rate : 0, eta, sizeof(eta));
	fprintf(stderr, "\r\033[K%s: %s [%s] %3.0f%% %s / %s  %.0f MB/s  ETA %s",
		p->cmd, p->phase ? p->phase : "", bar, frac * 100,
		cli_human(p->done, done, sizeof(done)),
		cli_human(p->total, total, sizeof(total)), rate / 1e6, eta);
	fflush(stderr);
	p->last_draw = now;
	p->drawn = true;
}

void cli_progress_update(struct cli_progress *p, const char *phase,
			 uint64_t done, uint64_t total)
{
	double now;

	if (!p->enabled)
		return;
	now = cli_now();
	if (!p->phase || !phase || strcmp(p->phase, phase)) {
		p->phase_t0 = now;
		p->last_draw = 0;
	}
	p->phase = phase;
	p->done = done;
	p->total = total;
	if (now - p->last_draw >= REDRAW_SECS)
		draw(p, now);
}

void cli_progress_clear(struct cli_progress *p)
{
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->drawn = false;
	}
}

void cli_progress_cb(const char *phase, uint64_t done, uint64_t total,
		     void *arg)
{
	cli_progress_update(arg, phase, done, total);
}

/* ---- summary and statistics ---- */

static uint64_t st_read(const struct pems_stats *st)
{
	return st->ctx_read + st->msg_read + st->file_read;
}

static uint64_t st_written(const struct pems_stats *st)
{
	return st->ctx_written + st->msg_written + st->file_written;
}

void cli_summary(const char *cmd, uint64_t bytes, double secs,
		 const struct pems_stats *st)
{
	char b[32], r[32], w[32], rss[32];

	fprintf(stderr, "%s: %s in %.2f s (%.1f MB/s); read %s, written %s; %llu supersteps; peak RSS %s\n",
		cmd, cli_human(bytes, b, sizeof(b)), secs,
		secs > 0 ? bytes / secs / 1e6 : 0.0,
		cli_human(st_read(st), r, sizeof(r)),
		cli_human(st_written(st), w, sizeof(w)),
		(unsigned long long)st->supersteps,
		cli_human(cli_peak_rss(), rss, sizeof(rss)));
}

#define U(x) ((unsigned long long)(x))

void cli_stats_print(const char *cmd, const struct pems_stats *st)
{
	fprintf(stderr,
		"%s: stats: supersteps=%llu total_secs=%.3f compute_secs=%.3f io_wait_secs=%.3f\n"
		"%s: stats: ctx_read=%llu ctx_written=%llu msg_read=%llu msg_written=%llu file_read=%llu file_written=%llu\n"
		"%s: stats: h_bytes=%llu h_max=%llu peak_resident=%llu peak_rss=%llu\n"
		"%s: stats: ctx_raw=%llu ctx_stored=%llu msg_raw=%llu msg_stored=%llu msg_held=%llu\n",
		cmd, U(st->supersteps), st->total_secs, st->compute_secs,
		st->io_wait_secs,
		cmd, U(st->ctx_read), U(st->ctx_written), U(st->msg_read),
		U(st->msg_written), U(st->file_read), U(st->file_written),
		cmd, U(st->h_bytes), U(st->h_max), U(st->peak_resident),
		U(cli_peak_rss()),
		cmd, U(st->ctx_raw), U(st->ctx_stored), U(st->msg_raw), U(st->msg_stored),
		U(st->msg_held));
}

/* ", \"v\": .., \"steps\": [...]": the run's shape and pems_steps() */
static void steps_json(FILE *f, const struct pems_stats *st)
{
	size_t i, n;
	const struct pems_step *s = pems_steps(&n);

	fprintf(f, ", \"v\": %u, \"k\": %u, \"p\": %u, \"mem\": %zu, \"steps\": [",
		st->procs, st->threads, pems_nranks(), st->mem);
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n  {\"secs\": %.6f, \"cpu\": %.6f, \"compute\": %.6f, \"io_wait\": %.6f,"
			" \"ctx_read\": %llu, \"ctx_written\": %llu, \"msg_read\": %llu,"
			" \"msg_written\": %llu, \"file_read\": %llu, \"file_written\": %llu,"
			" \"h\": %llu}", i ? "," : "", s[i].secs, s[i].cpu, s[i].compute_secs,
			s[i].io_wait_secs, U(s[i].ctx_read), U(s[i].ctx_written), U(s[i].msg_read),
			U(s[i].msg_written), U(s[i].file_read), U(s[i].file_written), U(s[i].h_bytes));
	fputs("]", f);
}

int cli_stats_json(const char *path, const char *cmd, uint64_t bytes,
		   double secs, const struct pems_stats *st)
{
	FILE *f = fopen(path, "w");
	int rc = 0;

	if (!f) {
		rc = -errno;
		cli_error("%s: --stats-json %s: %s", cmd, path, strerror(-rc));
		return rc;
	}
	fprintf(f, "{\"cmd\": \"%s\", \"bytes\": %llu, \"secs\": %.6f, \"peak_rss\": %llu,"
		" \"supersteps\": %llu, \"total_secs\": %.6f, \"compute_secs\": %.6f,"
		" \"io_wait_secs\": %.6f, \"ctx_read\": %llu, \"ctx_written\": %llu,"
		" \"msg_read\": %llu, \"msg_written\": %llu, \"file_read\": %llu,"
		" \"file_written\": %llu, \"h_bytes\": %llu, \"h_max\": %llu,"
		" \"peak_resident\": %llu, \"ctx_raw\": %llu, \"ctx_stored\": %llu,"
		" \"msg_raw\": %llu, \"msg_stored\": %llu, \"msg_held\": %llu",
		cmd, U(bytes), secs, U(cli_peak_rss()), U(st->supersteps),
		st->total_secs, st->compute_secs, st->io_wait_secs,
		U(st->ctx_read), U(st->ctx_written), U(st->msg_read),
		U(st->msg_written), U(st->file_read), U(st->file_written),
		U(st->h_bytes), U(st->h_max), U(st->peak_resident),
		U(st->ctx_raw), U(st->ctx_stored), U(st->msg_raw), U(st->msg_stored),
		U(st->msg_held));
	steps_json(f, st);
	fputs("}\n", f);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) && !rc)
		rc = -errno;
	if (rc)
		cli_error("%s: --stats-json %s: %s", cmd, path, strerror(-rc));
	return rc;
}
