/*
 * sort.c - sample sort by regular sampling, written against the typed
 * BSPlib signatures (bsp_pid_t, bsp_size_t) so that it builds in both
 * dialects of bsp.h.  main() is the SPMD function; the number of
 * processors is asked for on the command line and checked against
 * bsp_nprocs() before bsp_begin.
 *
 *   ./sort P n     prints "sort: p=P n=n sum=X" where X = sum over the
 *                  sorted sequence of key * (position + 1), mod 2^64,
 *                  keys mix(i) for i < n
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsp.h>

#define OVERSAMPLE 8

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 32);
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* first index of keys[0..n) not below @key */
static size_t lower(const uint64_t *keys, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (keys[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int main(int argc, char **argv)
{
	bsp_pid_t P = argc > 1 ? (bsp_pid_t)atoi(argv[1]) : bsp_nprocs(), p, s, t;
	uint64_t n = argc > 2 ? strtoull(argv[2], NULL, 10) : 100000, lo, hi, i;
	uint64_t *keys, *samples, *splitters, *recv, res[3], *all;
	size_t nl, *start, ns, total;
	uint64_t *cnt, *offs;

	if (P > bsp_nprocs()) {
		printf("Sorry, only %u processors.\n", (unsigned)bsp_nprocs());
		return 1;
	}
	bsp_begin(P);
	p = bsp_nprocs();
	s = bsp_pid();
	lo = n * s / p;
	hi = n * (s + 1) / p;
	nl = hi - lo;
	keys = malloc((nl + 1) * sizeof(*keys));
	for (i = lo; i < hi; i++)
		keys[i - lo] = mix(i);
	qsort(keys, nl, sizeof(*keys), cmp);

	/* superstep 0: registrations; samples to processor 0 */
	ns = (size_t)p * OVERSAMPLE;
	samples = malloc(ns * sizeof(*samples));
	splitters = malloc(p * sizeof(*splitters));
	cnt = calloc(p, sizeof(*cnt));
	offs = calloc(p, sizeof(*offs));
	start = malloc((p + 1) * sizeof(*start));
	all = malloc(3 * p * sizeof(*all));
	bsp_push_reg(samples, ns * sizeof(*samples));
	bsp_push_reg(splitters, p * sizeof(*splitters));
	bsp_push_reg(cnt, p * sizeof(*cnt));
	bsp_push_reg(offs, p * sizeof(*offs));
	bsp_push_reg(all, 3 * p * sizeof(*all));
	bsp_sync();

	for (t = 0; t < OVERSAMPLE; t++) {
		/* an empty part samples the largest key, which sorts last */
		uint64_t k = nl ? keys[nl * t / OVERSAMPLE] : UINT64_MAX;

		bsp_put(0, &k, samples, (s * OVERSAMPLE + t) * sizeof(k), sizeof(k));
	}
	bsp_sync();

	/* processor 0 picks p - 1 splitters and sends them to everyone */
	if (s == 0) {
		qsort(samples, ns, sizeof(*samples), cmp);
		for (t = 1; t < p; t++)
			splitters[t] = samples[t * OVERSAMPLE];
		for (t = 0; t < p; t++)
			bsp_put(t, splitters + 1, splitters, sizeof(*splitters),
				(p - 1) * sizeof(*splitters));
	}
	bsp_sync();

	/* bucket t gets keys in [splitters[t], splitters[t+1]) */
	start[0] = 0;
	for (t = 1; t < p; t++)
		start[t] = lower(keys, nl, splitters[t]);
	start[p] = nl;
	for (t = 0; t < p; t++) {
		uint64_t c = start[t + 1] - start[t];

		if (c)
			bsp_put(t, &c, cnt, s * sizeof(c), sizeof(c));
	}
	bsp_sync();

	/* where each source's keys go in my receive buffer */
	total = 0;
	for (t = 0; t < p; t++) {
		uint64_t o = total;

		if (cnt[t])
			bsp_put(t, &o, offs, s * sizeof(o), sizeof(o));
		total += cnt[t];
	}
	recv = malloc((total + 1) * sizeof(*recv));
	bsp_push_reg(recv, total * sizeof(*recv));
	bsp_sync();

	for (t = 0; t < p; t++)
		if (start[t + 1] > start[t])
			bsp_put(t, keys + start[t], recv, offs[t] * sizeof(*recv),
				(start[t + 1] - start[t]) * sizeof(*recv));
	bsp_sync();

	qsort(recv, total, sizeof(*recv), cmp);
	res[0] = total;
	res[1] = 0;	/* sum of key * (local position + 1) */
	res[2] = 0;	/* sum of keys */
	for (i = 0; i < total; i++) {
		res[1] += recv[i] * (i + 1);
		res[2] += recv[i];
	}
	bsp_put(0, res, all, 3 * s * sizeof(*all), sizeof(res));
	bsp_sync();
	if (s == 0) {
		uint64_t sum = 0, pos = 0;

		for (t = 0; t < p; t++) {
			sum += all[3 * t + 1] + pos * all[3 * t + 2];
			pos += all[3 * t];
		}
		printf("sort: p=%u n=%llu sum=%016llx%s\n", (unsigned)p, (unsigned long long)n,
		       (unsigned long long)sum, pos == n ? "" : " LOST KEYS");
	}
	bsp_pop_reg(recv);
	bsp_end();
	return 0;
}
