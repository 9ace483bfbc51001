/* spill.c - proves that contexts really live on disk: every VP fills its
 * whole context with a pattern derived from its pid, the next superstep
 * checks it.  Run with e.g. PEMS_PROCS=128 PEMS_MU=32M PEMS_MEM=256M
 * (v*mu = 4 GiB of contexts under a 256 MiB budget). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>
#include <pems.h>

static uint64_t pattern(uint64_t pid, uint64_t i)
{
	uint64_t x = pid * 0x9e3779b97f4a7c15ull + i;

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static void spmd(void)
{
	bsp_begin(bsp_nprocs());
	size_t n = (pems_context_avail() - (64 << 10)) / sizeof(uint64_t);
	uint64_t *a = pems_malloc(n * sizeof(*a)), bad = 0, total;
	unsigned pid = bsp_pid();
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = pattern(pid, i);
	bsp_sync();	/* the context goes to disk here */
	for (i = 0; i < n; i++)
		bad += a[i] != pattern(pid, i);
	pems_free(a);	/* freed memory is not written back */
	pems_allreduce(&bad, &total, 1, PEMS_UINT64, PEMS_SUM);
	if (pid == 0) {
		struct pems_stats st;

		pems_get_stats(&st);
		printf("spill: %u VPs x %zu MiB filled and verified: %s (%llu bad words)\n",
		       bsp_nprocs(), (n * sizeof(*a)) >> 20, total ? "FAILED" : "ok",
		       (unsigned long long)total);
		printf("spill: context bytes written %llu, read %llu\n",
		       (unsigned long long)st.ctx_written, (unsigned long long)st.ctx_read);
	}
	bsp_end();
	if (total)
		exit(1);
}

int main(int argc, char **argv)
{
	bsp_init(spmd, argc, argv);
	spmd();
	return 0;
}
