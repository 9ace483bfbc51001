/*
 * ctx_bench.c - context swap throughput and superstep overhead.
 *
 *   ctx_bench swap DIR V MU MEM     V VPs fill contexts of MU bytes under
 *                                   budget MEM; one superstep later they
 *                                   rewrite them: reports context bytes
 *                                   in+out per second over that superstep
 *   ctx_bench steps DIR V STEPS     V VPs with tiny contexts run STEPS
 *                                   empty supersteps: microseconds per VP
 *                                   per superstep
 * One machine-readable line per run (STYLE.md rule 10).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pems.h"

static size_t words;
static unsigned steps;
static double t_mid[2];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void swap_spmd(void *arg)
{
	uint64_t *a = pems_malloc(words * 8), pid = bsp_pid(), s;
	size_t i;

	(void)arg;
	for (i = 0; i < words; i++)
		a[i] = pid ^ i;
	bsp_sync();	/* all contexts written */
	if (pid == 0)
		t_mid[0] = now();
	bsp_sync();	/* a superstep that only swaps: read all, write all */
	for (s = 0, i = 0; i < words; i += 512)
		s += a[i] != (pid ^ i);
	if (pid == 0)
		t_mid[1] = now();
	if (s)
		bsp_abort("ctx_bench: VP %u read back wrong data", (unsigned)pid);
	bsp_sync();
	pems_free(a);
}

static void steps_spmd(void *arg)
{
	unsigned i;

	(void)arg;
	for (i = 0; i < steps; i++)
		bsp_sync();
}

static int configure(const char *dir, unsigned v, size_t mu, size_t mem)
{
	struct pems_config cfg;

	pems_config_init(&cfg);
	cfg.procs = v;
	cfg.mu = mu;
	cfg.mem = mem;
	cfg.tmp[0] = dir;
	cfg.ntmp = 1;
	cfg.quiet = true;
	return pems_configure(&cfg);
}

int main(int argc, char **argv)
{
	struct pems_stats st0, st;
	size_t mu, mem;
	unsigned v;
	double t0;

	if (argc == 6 && !strcmp(argv[1], "swap")) {
		v = (unsigned)atoi(argv[3]);
		if (pems_parse_size(argv[4], &mu) || pems_parse_size(argv[5], &mem))
			return 2;
		words = (mu - (mu / 16) - (512 << 10)) / 8;
		if (configure(argv[2], v, mu, mem) || pems_spmd(NULL, swap_spmd, NULL))
			return 1;
		pems_get_stats(&st);
		(void)st0;
		/* the middle superstep moved every context in and out once */
		printf("bench=ctx_swap v=%u mu=%zu mem=%zu ctx_bytes=%llu secs=%.3f mbps=%.1f total_ctx_read=%llu total_ctx_written=%llu\n",
		       v, mu, mem, (unsigned long long)(2ull * v * words * 8),
		       t_mid[1] - t_mid[0],
		       2.0 * v * words * 8 / (t_mid[1] - t_mid[0]) / 1e6,
		       (unsigned long long)st.ctx_read, (unsigned long long)st.ctx_written);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "steps")) {
		v = (unsigned)atoi(argv[3]);
		steps = (unsigned)atoi(argv[4]);
		if (configure(argv[2], v, 512 << 10, 256u << 20))
			return 1;
		t0 = now();
		if (pems_spmd(NULL, steps_spmd, NULL))
			return 1;
		t0 = now() - t0;
		printf("bench=superstep v=%u steps=%u secs=%.3f us_per_vp_step=%.2f\n", v, steps, t0,
		       t0 / ((double)v * (steps + 1)) * 1e6);
		return 0;
	}
	fprintf(stderr, "usage: ctx_bench swap DIR V MU MEM | ctx_bench steps DIR V STEPS\n");
	return 2;
}
