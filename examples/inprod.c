/* inprod.c - inner product of two vectors of length n (argv[1], default
 * 1000000) distributed cyclically over the VPs, the classic first BSPlib
 * program (Bisseling, "Parallel Scientific Computation", bspinprod). */
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

static long n = 1000000;

static void spmd(void)
{
	bsp_begin(bsp_nprocs());
	bsp_pid_t p = bsp_nprocs(), s = bsp_pid(), t;
	double *partial = malloc(p * sizeof(double)), local = 0, sum = 0;
	long i;

	bsp_push_reg(partial, p * sizeof(double));
	bsp_sync();
	for (i = s; i < n; i += p) {
		double x = (double)(i + 1), y = 1.0;

		local += x * y;
	}
	for (t = 0; t < p; t++)
		bsp_put(t, &local, partial, s * sizeof(double), sizeof(double));
	bsp_sync();
	for (t = 0; t < p; t++)
		sum += partial[t];
	if (s == 0)
		printf("inprod: n=%ld p=%u sum=%.0f expected=%.0f %s\n", n, p, sum,
		       (double)n * (n + 1) / 2, sum == (double)n * (n + 1) / 2 ? "ok" : "WRONG");
	bsp_pop_reg(partial);
	bsp_sync();
	free(partial);
	bsp_end();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n = atol(argv[1]);
	bsp_init(spmd, argc, argv);
	spmd();
	return 0;
}
