/*
 * steps.c - per-superstep statistics (pems_steps_record and pems_steps in
 * pems.h).  With recording on, the scheduler hands this file its rank's
 * counters after every barrier and the run's totals at the end; each
 * record is the difference to the one before.  The counters are
 * cumulative for the section, so a record costs one pems_get_stats and
 * one clock read per barrier, and a failed allocation loses only the
 * records after it.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "steps.h"

static struct {
	bool on;
	struct pems_step *s;
	size_t n, cap;
	struct pems_stats last;	/* the counters at the last record */
	double last_cpu;	/* the process's CPU seconds then */
} rec;

static double cpu_secs(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the byte counters a record takes from pems_stats */
static const struct { size_t st, step; } ctr[] = {
#define C(f) { offsetof(struct pems_stats, f), offsetof(struct pems_step, f) }
	C(ctx_read), C(ctx_written), C(msg_read), C(msg_written), C(file_read), C(file_written),
	C(h_bytes),
#undef C
};

static uint64_t *u64_at(const void *base, size_t off)
{
	return (uint64_t *)(void *)((char *)(uintptr_t)base + off);
}

/* One record from cumulative counters @st, of which this rank's share is
 * 1/@scale (the totals of all ranks at the end, 1 at a barrier). */
static void rec_add(const struct pems_stats *st, double scale)
{
	struct pems_step *x;
	unsigned i;

	if (rec.n == rec.cap) {
		size_t cap = rec.cap ? rec.cap * 2 : 64;
		struct pems_step *n = realloc(rec.s, cap * sizeof(*n));

		if (!n)
			return;
		rec.s = n;
		rec.cap = cap;
	}
	x = &rec.s[rec.n++];
	x->secs = st->total_secs - rec.last.total_secs;
	x->cpu = cpu_secs() - rec.last_cpu;
	rec.last_cpu += x->cpu;
	x->compute_secs = st->compute_secs / scale - rec.last.compute_secs;
	x->io_wait_secs = st->io_wait_secs / scale - rec.last.io_wait_secs;
	for (i = 0; i < sizeof(ctr) / sizeof(ctr[0]); i++) {
		double a = *u64_at(st, ctr[i].st) / scale;
		uint64_t b = *u64_at(&rec.last, ctr[i].st);

		*u64_at(x, ctr[i].step) = a > b ? (uint64_t)a - b : 0;
	}
	rec.last = *st;
}

PEMS_API void pems_steps_record(bool on)
{
	rec.on = on;
}

PEMS_API const struct pems_step *pems_steps(size_t *n)
{
	*n = rec.n;
	return rec.s;
}

void pems_steps_start(void)
{
	if (!rec.on)
		return;
	rec.n = 0;
	memset(&rec.last, 0, sizeof(rec.last));
	rec.last_cpu = cpu_secs();
}

void pems_steps_barrier(void)
{
	struct pems_stats st;

	if (!rec.on)
		return;
	pems_get_stats(&st);
	rec_add(&st, 1);
}

void pems_steps_end(const struct pems_stats *sum, unsigned nranks)
{
	if (rec.on)
		rec_add(sum, nranks ? nranks : 1);
}
