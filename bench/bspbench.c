/*
 * bspbench.c - the BSP parameters r, g and l of the machine pems makes,
 * measured the classic way (Bisseling's bspbench): r from DAXPY loops on
 * every VP, then for every h = 0..H an h-relation repeated NITERS times,
 * each word a separate bsp_put of 8 bytes to one of the other VPs in
 * turn, and g, l fitted by least squares to time(h) = l + g h over
 * h = H/2..H (h-relations below H/2 are too noisy on most machines).  A
 * plain BSPlib program: only <bsp.h>, P asked for on the command line.
 *
 *   bspbench P [H [NITERS]]        (defaults H = 256, NITERS = 100)
 *
 * Processor 0 prints one line per h and a summary (STYLE.md rule 10):
 *   bench=bspbench-point p=.. h=.. secs=..
 *   bench=bspbench p=.. H=.. iters=.. r=..Mflops g=..us l=..us g_flops=.. l_flops=.. secs=..
 * bench/bspbench.sh runs it beside Open MPI's MPI_Barrier and
 * MPI_Alltoallv at the same p.
 */
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

#define NMAX 1024	/* longest DAXPY vector */
#define MEGA 1000000.0

static volatile double sink;	/* keeps the DAXPY loops */

static double *vec(size_t n)
{
	double *v = malloc((n ? n : 1) * sizeof(double));

	if (!v)
		bsp_abort("bspbench: out of memory");
	return v;
}

/* Least-squares fit of t = l + g h over h = h0..h1 (t[h] given). */
static void fit(const double *t, long h0, long h1, double *g, double *l)
{
	double n = (double)(h1 - h0 + 1), sh = 0, st = 0, shh = 0, sht = 0;
	long h;

	for (h = h0; h <= h1; h++) {
		sh += (double)h;
		st += t[h];
		shh += (double)h * (double)h;
		sht += (double)h * t[h];
	}
	*g = n * shh - sh * sh > 0 ? (n * sht - sh * st) / (n * shh - sh * sh) : 0;
	*l = (st - *g * sh) / n;
}

/* Flops per second of this VP: DAXPY on vectors of 1..NMAX words. */
static double measure_r(void)
{
	double *x = vec(NMAX), *y = vec(NMAX), *z = vec(NMAX), alpha = 1.0 / 3.0, t0, t;
	long n, i, iter, niters = 100, flops = 0;

	for (i = 0; i < NMAX; i++)
		x[i] = y[i] = z[i] = (double)i;
	t0 = bsp_time();
	for (n = 1; n <= NMAX; n *= 2) {
		for (iter = 0; iter < niters; iter++) {
			for (i = 0; i < n; i++)
				y[i] += alpha * x[i];
			for (i = 0; i < n; i++)
				z[i] -= alpha * x[i];
		}
		flops += 4 * n * niters;
	}
	t = bsp_time() - t0;
	sink = y[NMAX - 1] + z[NMAX - 1];
	free(x);
	free(y);
	free(z);
	return t > 0 ? (double)flops / t : 0;
}

int main(int argc, char **argv)
{
	bsp_pid_t P = argc > 1 ? (bsp_pid_t)atoi(argv[1]) : 2, p, s, t;
	long H = argc > 2 ? atol(argv[2]) : 256, niters = argc > 3 ? atol(argv[3]) : 100, h, i, it;
	double *src, *dest, *times, *rs, r, g, l, t0, start;
	bsp_pid_t *destproc;
	long *destindex;

	if (P < 1 || P > bsp_nprocs() || H < 2 || niters < 1) {
		printf("usage: bspbench P [H [NITERS]]  (P <= %u, H >= 2)\n", (unsigned)bsp_nprocs());
		return 2;
	}
	bsp_begin(P);
	p = bsp_nprocs();
	s = bsp_pid();
	start = bsp_time();
	rs = vec(p);
	bsp_push_reg(rs, p * sizeof(double));
	src = vec(H);
	dest = vec(p * H);
	bsp_push_reg(dest, p * H * sizeof(double));
	times = vec(H + 1);
	destproc = malloc((H + 1) * sizeof(*destproc));
	destindex = malloc((H + 1) * sizeof(*destindex));
	bsp_sync();

	r = measure_r();
	for (t = 0; t < p; t++)
		bsp_put(t, &r, rs, s * sizeof(double), sizeof(double));
	bsp_sync();
	for (r = 0, t = 0; t < p; t++)
		r += rs[t] / p;

	/* word i goes to the i-th other processor in turn (itself when p = 1) */
	for (i = 0; i < H; i++) {
		src[i] = (double)i;
		destproc[i] = p == 1 ? 0 : (s + 1 + (bsp_pid_t)(i % (p - 1))) % p;
		destindex[i] = (long)s + (p == 1 ? i : i / (p - 1)) * p;
	}
	for (h = 0; h <= H; h++) {
		bsp_sync();
		t0 = bsp_time();
		for (it = 0; it < niters; it++) {
			for (i = 0; i < h; i++)
				bsp_put(destproc[i], &src[i], dest, destindex[i] * sizeof(double),
					sizeof(double));
			bsp_sync();
		}
		times[h] = (bsp_time() - t0) / (double)niters;
		if (s == 0)
			printf("bench=bspbench-point p=%u h=%ld secs=%.9f\n", (unsigned)p, h, times[h]);
	}
	fit(times, H / 2, H, &g, &l);
	if (s == 0)
		printf("bench=bspbench p=%u H=%ld iters=%ld r=%.1fMflops g=%.4fus l=%.3fus g_flops=%.1f l_flops=%.1f secs=%.3f\n",
		       (unsigned)p, H, niters, r / MEGA, g * MEGA, l * MEGA, g * r, l * r,
		       bsp_time() - start);
	bsp_pop_reg(dest);
	bsp_pop_reg(rs);
	bsp_end();
	return 0;
}
