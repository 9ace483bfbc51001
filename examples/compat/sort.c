/*
 * sort.c - parallel sorting by regular sampling (PSRS), a classic BSPlib
 * program: sort locally, gather p regular samples from everyone with
 * bsp_put, choose p-1 splitters, exchange bucket sizes, send every bucket
 * with bsp_put into its destination's receive area (registered with a
 * different size on every process, as BSPlib allows), sort again; then
 * process 0 checks the result, fetching every process's summary with
 * bsp_get.  Only <bsp.h>, bsp_init + an SPMD function, plain malloc.
 *
 *   ./sort [n]          (default n = 200000 keys; PEMS_PROCS sets p)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsp.h>

static long n_total = 200000;

static uint64_t key_of(uint64_t i)	/* the i-th input key */
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull + 12345;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		bsp_abort("sort: out of memory\n");
	return p;
}

/* summary of one process's final keys, fetched by process 0 */
enum { S_COUNT, S_MIN, S_MAX, S_SUM, S_SORTED, S_WORDS };

static void spmd(void)
{
	bsp_begin(bsp_nprocs());
	long p = bsp_nprocs(), s = bsp_pid();
	long n = n_total, nl = n / p + (s < n % p), i, j, t, total, off;
	uint64_t *keys = xmalloc(nl * sizeof(uint64_t));
	uint64_t *samples = xmalloc(p * sizeof(uint64_t));
	uint64_t *all_samples = xmalloc(p * p * sizeof(uint64_t));
	uint64_t *splitters = xmalloc(p * sizeof(uint64_t));
	long *cnt = xmalloc(p * sizeof(long)), *start = xmalloc(p * sizeof(long));
	long *all_cnt = xmalloc(p * p * sizeof(long));
	uint64_t *recv, summary[S_WORDS];

	/* block distribution of the keys: process s generates its share */
	for (i = 0, j = s; i < nl; i++, j += p)
		keys[i] = key_of((uint64_t)j);
	qsort(keys, nl, sizeof(uint64_t), cmp_u64);

	/* 1. regular samples to everyone */
	for (i = 0; i < p; i++)
		samples[i] = nl ? keys[i * nl / p] : UINT64_MAX;
	bsp_push_reg(all_samples, p * p * sizeof(uint64_t));
	bsp_push_reg(all_cnt, p * p * sizeof(long));
	bsp_sync();
	for (t = 0; t < p; t++)
		bsp_put(t, samples, all_samples, s * p * sizeof(uint64_t), p * sizeof(uint64_t));
	bsp_sync();

	/* 2. splitters, buckets, bucket sizes to everyone */
	qsort(all_samples, p * p, sizeof(uint64_t), cmp_u64);
	for (i = 0; i + 1 < p; i++)
		splitters[i] = all_samples[(i + 1) * p];
	for (t = 0, i = 0; t < p; t++) {
		start[t] = i;
		while (i < nl && (t == p - 1 || keys[i] < splitters[t]))
			i++;
		cnt[t] = i - start[t];
	}
	for (t = 0; t < p; t++)
		bsp_put(t, cnt, all_cnt, s * p * sizeof(long), p * sizeof(long));
	bsp_sync();

	/* 3. receive area sized for what comes here, then the buckets */
	for (i = 0, total = 0; i < p; i++)
		total += all_cnt[i * p + s];
	recv = xmalloc(total * sizeof(uint64_t));
	bsp_push_reg(recv, total * sizeof(uint64_t));
	bsp_sync();
	for (t = 0; t < p; t++) {
		for (i = 0, off = 0; i < s; i++)
			off += all_cnt[i * p + t];	/* lower pids land first */
		if (cnt[t])
			bsp_put(t, keys + start[t], recv, off * sizeof(uint64_t),
				cnt[t] * sizeof(uint64_t));
	}
	bsp_sync();
	qsort(recv, total, sizeof(uint64_t), cmp_u64);

	/* 4. check: process 0 gets every summary */
	summary[S_COUNT] = (uint64_t)total;
	summary[S_MIN] = total ? recv[0] : UINT64_MAX;
	summary[S_MAX] = total ? recv[total - 1] : 0;
	summary[S_SUM] = 0;
	summary[S_SORTED] = 1;
	for (i = 0; i < total; i++) {
		summary[S_SUM] += recv[i];
		if (i && recv[i - 1] > recv[i])
			summary[S_SORTED] = 0;
	}
	bsp_push_reg(summary, sizeof(summary));
	bsp_sync();
	uint64_t *sums = NULL;

	if (s == 0) {
		sums = xmalloc(p * sizeof(summary));
		for (t = 0; t < p; t++)
			bsp_get(t, summary, 0, sums + t * S_WORDS, sizeof(summary));
	}
	bsp_sync();
	if (s == 0) {
		uint64_t count = 0, sum = 0, want = 0, last = 0;
		int ok = 1;

		for (t = 0; t < p; t++) {
			uint64_t *u = sums + t * S_WORDS;

			ok &= u[S_SORTED] == 1;
			if (u[S_COUNT]) {	/* keys of process t follow those before it */
				ok &= count == 0 || u[S_MIN] >= last;
				last = u[S_MAX];
			}
			count += u[S_COUNT];
			sum += u[S_SUM];
		}
		for (i = 0; i < n; i++)
			want += key_of((uint64_t)i);
		ok &= count == (uint64_t)n && sum == want;
		printf("sort: p=%ld n=%ld keys sorted across %ld processes %s\n", p, n, p,
		       ok ? "ok" : "WRONG");
		free(sums);
	}
	bsp_pop_reg(summary);
	bsp_pop_reg(recv);
	bsp_pop_reg(all_cnt);
	bsp_pop_reg(all_samples);
	bsp_sync();
	free(recv);
	free(keys);
	free(samples);
	free(all_samples);
	free(splitters);
	free(cnt);
	free(start);
	free(all_cnt);
	bsp_end();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n_total = atol(argv[1]);
	bsp_init(spmd, argc, argv);
	spmd();
	return 0;
}
