/*
 * fft.c - butterfly exchanges as in a parallel FFT: p2 = the largest
 * power of two <= p; processors p2..p-1 first fold their vector into
 * processor s - p2, then log2(p2) rounds exchange whole vectors with
 * partner s ^ 2^r (bsp_hpget: the partner's value before this round's
 * puts), then the folded processors get their result back (bsp_hpput).
 * Arithmetic is mod 2^64, so any p gives exact results.  Typed
 * signatures: builds in both dialects.
 *
 *   ./fft P m      prints "fft: p=P m=m sum=X"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 32);
}

int main(int argc, char **argv)
{
	bsp_pid_t P = argc > 1 ? (bsp_pid_t)atoi(argv[1]) : bsp_nprocs(), p, s, p2, t;
	size_t m = argc > 2 ? (size_t)atol(argv[2]) : 64, j, r;
	uint64_t *x, *tmp, *sums, local = 0, sum = 0;

	if (P > bsp_nprocs()) {
		printf("Sorry, only %u processors.\n", (unsigned)bsp_nprocs());
		return 1;
	}
	bsp_begin(P);
	p = bsp_nprocs();
	s = bsp_pid();
	for (p2 = 1; p2 * 2 <= p; p2 *= 2)
		;
	x = malloc(m * sizeof(*x));
	tmp = malloc(m * sizeof(*tmp));
	sums = malloc(p * sizeof(*sums));
	for (j = 0; j < m; j++)
		x[j] = mix((uint64_t)s * m + j);
	bsp_push_reg(x, m * sizeof(*x));
	bsp_push_reg(tmp, m * sizeof(*tmp));
	bsp_push_reg(sums, p * sizeof(*sums));
	bsp_sync();

	if (s >= p2)
		bsp_hpput(s - p2, x, tmp, 0, m * sizeof(*x));
	bsp_sync();
	if (s + p2 < p)
		for (j = 0; j < m; j++)
			x[j] += 3 * tmp[j];
	for (r = 1; r < (size_t)p2; r *= 2) {
		bsp_pid_t partner = s ^ (bsp_pid_t)r;

		if (s < p2)
			bsp_hpget(partner, x, 0, tmp, m * sizeof(*x));
		bsp_sync();
		if (s < p2)
			for (j = 0; j < m; j++) {
				uint64_t w = mix(r * 1000003 + j) | 1;

				x[j] = s < partner ? x[j] + w * tmp[j] : tmp[j] - w * x[j];
			}
	}
	if (s + p2 < p)
		bsp_hpput(s + p2, x, x, 0, m * sizeof(*x));
	bsp_sync();
	for (j = 0; j < m; j++)
		local += x[j] * mix(((uint64_t)s << 32) + j);
	bsp_put(0, &local, sums, s * sizeof(local), sizeof(local));
	bsp_sync();
	if (s == 0) {
		for (t = 0; t < p; t++)
			sum += sums[t];
		printf("fft: p=%u m=%zu sum=%016llx\n", (unsigned)p, m, (unsigned long long)sum);
	}
	bsp_end();
	return 0;
}
