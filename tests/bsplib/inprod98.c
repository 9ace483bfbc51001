/*
 * inprod98.c - inner product in the style of Bisseling's bspinprod
 * (BSPedupack): the BSPlib-1998 int dialect, bsp_init form, the number
 * of processors asked for on stdin and checked against bsp_nprocs()
 * before bsp_begin, n read by processor 0 inside the SPMD section and
 * fetched by the others with bsp_get from a registered stack variable.
 *
 *   printf 'P\nn\n' | ./inprod98
 *
 * Prints "inprod: p=P n=n sum=S" (S = sum of (i+1)^2, exact in double).
 */
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

static int P;	/* number of processors requested */

static int nloc(int p, int s, int n)
{
	return (n + p - s - 1) / p;
}

static double bspip(int p, int s, int n, double *x, double *y)
{
	double inprod, *Inprod, alpha;
	int i, t;

	Inprod = malloc(p * sizeof(double));
	if (Inprod == NULL)
		bsp_abort("bspip: not enough memory");
	bsp_push_reg(Inprod, p * sizeof(double));
	bsp_sync();

	inprod = 0.0;
	for (i = 0; i < nloc(p, s, n); i++)
		inprod += x[i] * y[i];
	for (t = 0; t < p; t++)
		bsp_put(t, &inprod, Inprod, s * sizeof(double), sizeof(double));
	bsp_sync();

	alpha = 0.0;
	for (t = 0; t < p; t++)
		alpha += Inprod[t];
	bsp_pop_reg(Inprod);
	free(Inprod);
	return alpha;
}

static void bspinprod(void)
{
	double *x, alpha;
	int p, s, n, nl, i, iglob;

	bsp_begin(P);
	p = bsp_nprocs();
	s = bsp_pid();
	if (s == 0) {
		if (scanf("%d", &n) != 1 || n < 0)
			bsp_abort("inprod: no valid n on stdin");
	}
	bsp_push_reg(&n, sizeof(int));
	bsp_sync();

	bsp_get(0, &n, 0, &n, sizeof(int));
	bsp_sync();
	bsp_pop_reg(&n);

	nl = nloc(p, s, n);
	x = malloc((nl > 0 ? nl : 1) * sizeof(double));
	for (i = 0; i < nl; i++) {
		iglob = i * p + s;
		x[i] = iglob + 1;
	}
	alpha = bspip(p, s, n, x, x);
	if (s == 0)
		printf("inprod: p=%d n=%d sum=%.0f\n", p, n, alpha);
	free(x);
	bsp_end();
}

int main(int argc, char **argv)
{
	bsp_init(bspinprod, argc, argv);

	/* sequential part */
	printf("How many processors do you want to use?\n");
	fflush(stdout);
	if (scanf("%d", &P) != 1 || P < 1) {
		printf("Give a number of processors\n");
		exit(2);
	}
	if (P > bsp_nprocs()) {
		printf("Sorry, not enough processors available.\n");
		exit(1);
	}

	/* SPMD part */
	bspinprod();

	/* sequential part */
	exit(0);
}
