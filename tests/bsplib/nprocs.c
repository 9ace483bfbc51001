/*
 * nprocs.c - the machine-size rule, in the bsp_init form: main prints
 * bsp_nprocs() before bsp_begin, processor 0 the number of processors
 * bsp_begin(P) granted.
 *
 *   ./nprocs [P]    (default: bsp_begin(bsp_nprocs()))
 */
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

static bsp_pid_t P;

static void spmd(void)
{
	bsp_begin(P);
	if (bsp_pid() == 0)
		printf("granted=%u\n", (unsigned)bsp_nprocs());
	bsp_end();
}

int main(int argc, char **argv)
{
	bsp_init(spmd, argc, argv);
	P = argc > 1 ? (bsp_pid_t)atoi(argv[1]) : bsp_nprocs();
	printf("machine=%u\n", (unsigned)bsp_nprocs());
	fflush(stdout);
	spmd();
	printf("main goes on\n");	/* after the SPMD function, once */
	return 3;
}
