/*
 * lu.c - LU decomposition without pivoting of a diagonally dominant
 * n x n matrix in a 2D cyclic distribution over an M x N processor grid
 * (M the largest divisor of p not above sqrt(p)), in the style of
 * Bisseling's bsplu: element (i, j) lives on processor (i mod M, j mod N)
 * = (i mod M) * N + j mod N.  Per stage k: the pivot goes to processor
 * column k mod N, which scales column k and sends it along the processor
 * rows, row k goes along the processor columns, and every processor
 * updates its part.  Each element sees the same operations in the same
 * order as in the sequential algorithm, so the result is bitwise equal.
 * Typed signatures: builds in both dialects.
 *
 *   ./lu P n       prints "lu: p=P n=n sum=X" (X: a hash of the bits of
 *                  every element of L\U and its position, mod 2^64)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsp.h>

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 32);
}

static double elem(uint64_t n, uint64_t i, uint64_t j)
{
	double a = (double)(mix(i * n + j) % 1000) / 1000.0;

	return i == j ? a + (double)n : a;
}

int main(int argc, char **argv)
{
	bsp_pid_t P = argc > 1 ? (bsp_pid_t)atoi(argv[1]) : bsp_nprocs(), p, s, t;
	long n = argc > 2 ? atol(argv[2]) : 40, M, N, pr, pc, nr, nc, i, j, k, li, lj;
	double *a, *col, *row, pivot;
	uint64_t *sums, local = 0, sum = 0;

	if (P > bsp_nprocs()) {
		printf("Sorry, only %u processors.\n", (unsigned)bsp_nprocs());
		return 1;
	}
	bsp_begin(P);
	p = bsp_nprocs();
	s = bsp_pid();
	for (M = 1, t = 1; (long)t * t <= (long)p; t++)
		if (p % t == 0)
			M = t;
	N = p / M;
	pr = s / N;
	pc = s % N;
	nr = (n - pr + M - 1) / M;	/* my rows pr, pr + M, ... */
	nc = (n - pc + N - 1) / N;
	if (nr < 0)
		nr = 0;
	if (nc < 0)
		nc = 0;
	a = malloc((nr * nc + 1) * sizeof(double));
	col = malloc((n + 1) * sizeof(double));	/* column k, by global row */
	row = malloc((n + 1) * sizeof(double));	/* row k, by global column */
	sums = malloc(p * sizeof(*sums));
	for (li = 0; li < nr; li++)
		for (lj = 0; lj < nc; lj++)
			a[li * nc + lj] = elem(n, li * M + pr, lj * N + pc);
	bsp_push_reg(&pivot, sizeof(pivot));
	bsp_push_reg(col, n * sizeof(double));
	bsp_push_reg(row, n * sizeof(double));
	bsp_push_reg(sums, p * sizeof(*sums));
	bsp_sync();

	for (k = 0; k < n; k++) {
		long kr = k % M, kc = k % N;

		/* the pivot to processor column kc */
		if (pr == kr && pc == kc)
			for (t = 0; t < (bsp_pid_t)M; t++)
				bsp_put(t * N + kc, &a[(k / M) * nc + k / N], &pivot, 0, sizeof(double));
		bsp_sync();
		/* scale column k; send it along the rows, row k along the columns */
		if (pc == kc)
			for (li = 0; li < nr; li++) {
				i = li * M + pr;
				if (i > k)
					a[li * nc + k / N] = a[li * nc + k / N] / pivot;
				if (i > k)
					for (t = 0; t < (bsp_pid_t)N; t++)
						bsp_put(pr * N + t, &a[li * nc + k / N], col,
							i * sizeof(double), sizeof(double));
			}
		if (pr == kr)
			for (lj = 0; lj < nc; lj++) {
				j = lj * N + pc;
				if (j > k)
					for (t = 0; t < (bsp_pid_t)M; t++)
						bsp_put(t * N + pc, &a[(k / M) * nc + lj], row,
							j * sizeof(double), sizeof(double));
			}
		bsp_sync();
		for (li = 0; li < nr; li++) {
			i = li * M + pr;
			if (i <= k)
				continue;
			for (lj = 0; lj < nc; lj++) {
				j = lj * N + pc;
				if (j > k)
					a[li * nc + lj] = a[li * nc + lj] - col[i] * row[j];
			}
		}
	}
	for (li = 0; li < nr; li++)
		for (lj = 0; lj < nc; lj++) {
			uint64_t bits;

			memcpy(&bits, &a[li * nc + lj], sizeof(bits));
			local += mix(bits ^ (uint64_t)((li * M + pr) * n + lj * N + pc));
		}
	bsp_put(0, &local, sums, s * sizeof(local), sizeof(local));
	bsp_sync();
	if (s == 0) {
		for (t = 0; t < p; t++)
			sum += sums[t];
		printf("lu: p=%u n=%ld sum=%016llx\n", (unsigned)p, n, (unsigned long long)sum);
	}
	bsp_end();
	return 0;
}
