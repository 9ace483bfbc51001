/*
 * inprod.c - inner product of two vectors, in the style of bspinprod
 * (Bisseling, "Parallel Scientific Computation"): the vectors are
 * distributed cyclically, each process computes its local sum, puts it
 * into every process's array of partial sums, and every process adds
 * them up.  A plain BSPlib program: only <bsp.h>, main() is the SPMD
 * function, plain malloc.
 *
 *   ./inprod [n]        (default n = 100000; PEMS_PROCS sets p)
 */
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

/* number of vector components of process s among p (cyclic) */
static long nloc(long p, long s, long n)
{
	return (n + p - s - 1) / p;
}

static double bspip(long p, long s, long n, const double *x, const double *y)
{
	double inprod = 0.0, alpha = 0.0;
	double *partial = malloc(p * sizeof(double));
	long i, t;

	if (!partial)
		bsp_abort("inprod: out of memory\n");
	bsp_push_reg(partial, p * sizeof(double));
	bsp_sync();

	for (i = 0; i < nloc(p, s, n); i++)
		inprod += x[i] * y[i];
	for (t = 0; t < p; t++)
		bsp_put(t, &inprod, partial, s * sizeof(double), sizeof(double));
	bsp_sync();

	for (t = 0; t < p; t++)
		alpha += partial[t];
	bsp_pop_reg(partial);
	free(partial);
	return alpha;
}

int main(int argc, char **argv)
{
	long p, s, n, nl, i;
	double *x, *y, alpha, expected, t0, t1;

	bsp_begin(bsp_nprocs());
	p = bsp_nprocs();
	s = bsp_pid();
	n = argc > 1 ? atol(argv[1]) : 100000;
	nl = nloc(p, s, n);
	x = malloc((nl > 0 ? nl : 1) * sizeof(double));
	y = malloc((nl > 0 ? nl : 1) * sizeof(double));
	if (!x || !y)
		bsp_abort("inprod: out of memory\n");
	for (i = 0; i < nl; i++) {
		long global = i * p + s;	/* cyclic distribution */

		x[i] = (double)(global + 1);
		y[i] = (double)(global % 3);
	}
	t0 = bsp_time();
	alpha = bspip(p, s, n, x, y);
	t1 = bsp_time();
	if (s == 0) {
		/* the same sum, sequentially: exact, all terms are integers < 2^53 */
		expected = 0.0;
		for (i = 0; i < n; i++)
			expected += (double)(i + 1) * (double)(i % 3);
		printf("inprod: p=%ld n=%ld sum=%.0f expected=%.0f time=%.6fs %s\n", p, n, alpha,
		       expected, t1 - t0, alpha == expected ? "ok" : "WRONG");
	}
	free(x);
	free(y);
	bsp_end();
	return 0;
}
