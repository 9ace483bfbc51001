/*
 * stats.c - run statistics: summed over the workers while the run goes
 * (pems_get_stats), one line per superstep with PEMS_STATS=2, and at
 * the end summed over ranks, printed (PEMS_STATS) and written as JSON
 * (PEMS_STATS_JSON).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "tp.h"
#include "sched_parts.h"
#include "spill.h"
#include "steps.h"

static struct pems_stats last_stats;

static void stats_collect(struct pems_rt *rt, struct pems_stats *st)
{
	unsigned i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < rt->k; i++) {
		struct pems_worker *w = &rt->workers[i];

		st->ctx_read += w->ctx_read;
		st->ctx_written += w->ctx_written;
		st->msg_read += w->msg_read;
		st->msg_written += w->msg_written;
		st->msg_held += w->msg_held;
		st->file_read += w->file_read;
		st->file_written += w->file_written;
		st->h_bytes += w->h_bytes;
		if (w->h_max > st->h_max)
			st->h_max = w->h_max;
		st->compute_secs += (double)w->compute_ns / 1e9;
		st->io_wait_secs += (double)w->io_wait_ns / 1e9;
	}
	if (rt->tpw) {
		st->msg_read += rt->tpw->msg_read;
		st->msg_written += rt->tpw->msg_written;
		st->msg_held += rt->tpw->msg_held;
	}
	st->ctx_read += rt->gets_read;
	st->supersteps = rt->supersteps;
	st->procs = rt->v;
	st->threads = rt->k;
	st->nranks = rt->nranks;
	st->mu = rt->mu;
	st->mem = rt->cfg.mem;
	st->total_secs = pems_now() - rt->t0;
	st->peak_resident = rt->peak_resident + (size_t)rt->k * rt->mu;	/* + run slots */
	pems_spill_totals(PEMS_SPILL_CTX, &st->ctx_raw, &st->ctx_stored);
	pems_spill_totals(PEMS_SPILL_MSG, &st->msg_raw, &st->msg_stored);
}

/* After the run, the statistics of all ranks: bytes summed, times max. */
static void stats_sum_ranks(struct pems_rt *rt, struct pems_stats *st)
{
	uint64_t v[15] = { st->ctx_read, st->ctx_written, st->msg_read, st->msg_written,
			   st->file_read, st->file_written, st->h_bytes, st->peak_resident,
			   (uint64_t)(st->compute_secs * 1e6), (uint64_t)(st->io_wait_secs * 1e6),
			   st->ctx_raw, st->ctx_stored, st->msg_raw, st->msg_stored, st->msg_held };

	if (rt->nranks == 1)
		return;
	pems_tp_sum_u64(rt, v, 15);
	st->ctx_read = v[0];
	st->ctx_written = v[1];
	st->msg_read = v[2];
	st->msg_written = v[3];
	st->file_read = v[4];
	st->file_written = v[5];
	st->h_bytes = v[6];
	st->peak_resident = v[7];
	st->compute_secs = (double)v[8] / 1e6;
	st->io_wait_secs = (double)v[9] / 1e6;
	st->ctx_raw = v[10];
	st->ctx_stored = v[11];
	st->msg_raw = v[12];
	st->msg_stored = v[13];
	st->msg_held = v[14];
}

PEMS_API void pems_get_stats(struct pems_stats *out)
{
	if (pems_rt)
		stats_collect(pems_rt, out);
	else
		*out = last_stats;
}

static void stats_print(const struct pems_rt *rt, const struct pems_stats *st)
{
	fprintf(stderr,
		"pems: stats: v=%u k=%u mu=%zuM mem=%zuM supersteps=%llu time=%.3fs compute=%.3fs io_wait=%.3fs\n"
		"pems: stats: context read=%llu written=%llu; messages read=%llu written=%llu held=%llu; files read=%llu written=%llu (bytes)\n"
		"pems: stats: h total=%llu max=%llu; peak resident contexts=%llu bytes\n",
		rt->v, rt->k, rt->mu >> 20, rt->cfg.mem >> 20,
		(unsigned long long)st->supersteps, st->total_secs, st->compute_secs,
		st->io_wait_secs, (unsigned long long)st->ctx_read,
		(unsigned long long)st->ctx_written, (unsigned long long)st->msg_read,
		(unsigned long long)st->msg_written, (unsigned long long)st->msg_held,
		(unsigned long long)st->file_read,
		(unsigned long long)st->file_written, (unsigned long long)st->h_bytes,
		(unsigned long long)st->h_max, (unsigned long long)st->peak_resident);
}

static void stats_json(const struct pems_rt *rt, const struct pems_stats *st, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "pems: warning: cannot write stats to %s: %s\n", path, strerror(errno));
		return;
	}
	fprintf(f, "{\"v\": %u, \"k\": %u, \"p\": %u, \"mu\": %zu, \"mem\": %zu, \"supersteps\": %llu,"
		" \"total_secs\": %.6f, \"compute_secs\": %.6f, \"io_wait_secs\": %.6f,"
		" \"ctx_read\": %llu, \"ctx_written\": %llu, \"msg_read\": %llu, \"msg_written\": %llu,"
		" \"file_read\": %llu, \"file_written\": %llu, \"h_bytes\": %llu, \"h_max\": %llu,"
		" \"peak_resident\": %llu, \"ctx_raw\": %llu, \"ctx_stored\": %llu, \"msg_raw\": %llu,"
		" \"msg_stored\": %llu, \"msg_held\": %llu}\n",
		rt->v, rt->k, rt->nranks, rt->mu, rt->cfg.mem, (unsigned long long)st->supersteps,
		st->total_secs, st->compute_secs, st->io_wait_secs,
		(unsigned long long)st->ctx_read, (unsigned long long)st->ctx_written,
		(unsigned long long)st->msg_read, (unsigned long long)st->msg_written,
		(unsigned long long)st->file_read, (unsigned long long)st->file_written,
		(unsigned long long)st->h_bytes, (unsigned long long)st->h_max,
		(unsigned long long)st->peak_resident, (unsigned long long)st->ctx_raw,
		(unsigned long long)st->ctx_stored, (unsigned long long)st->msg_raw,
		(unsigned long long)st->msg_stored, (unsigned long long)st->msg_held);
	fclose(f);
}

/* One line per superstep on stderr with PEMS_STATS=2 (deltas). */
void pems_stats_step(struct pems_rt *rt, double t_start)
{
	static struct pems_stats prev;
	struct pems_stats st;

	if (!getenv("PEMS_STATS") || atoi(getenv("PEMS_STATS")) < 2)
		return;
	if (rt->supersteps == 1)
		memset(&prev, 0, sizeof(prev));
	stats_collect(rt, &st);
	fprintf(stderr, "pems: superstep %llu: %.3fs compute=%.3fs io_wait=%.3fs ctx r/w=%llu/%llu msg r/w=%llu/%llu file r/w=%llu/%llu h=%llu\n",
		(unsigned long long)rt->superstep, pems_now() - t_start,
		st.compute_secs - prev.compute_secs, st.io_wait_secs - prev.io_wait_secs,
		(unsigned long long)(st.ctx_read - prev.ctx_read),
		(unsigned long long)(st.ctx_written - prev.ctx_written),
		(unsigned long long)(st.msg_read - prev.msg_read),
		(unsigned long long)(st.msg_written - prev.msg_written),
		(unsigned long long)(st.file_read - prev.file_read),
		(unsigned long long)(st.file_written - prev.file_written),
		(unsigned long long)(st.h_bytes - prev.h_bytes));
	prev = st;
}

/* At the end of a run: the statistics of all ranks, kept for
 * pems_get_stats() after it, printed and written as asked. */
void pems_stats_final(struct pems_rt *rt)
{
	struct pems_stats st;

	stats_collect(rt, &st);
	stats_sum_ranks(rt, &st);
	last_stats = st;
	pems_steps_end(&st, rt->nranks);
	if (rt->cfg.stats)
		stats_print(rt, &st);
	if (rt->cfg.stats_json)
		stats_json(rt, &st, rt->cfg.stats_json);
}
