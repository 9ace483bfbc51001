/*
 * count.c - code before bsp_begin in a program whose main is the SPMD
 * function: as on a process-based BSPlib, it runs once per processor
 * (the initial thread goes on as processor 0, the others start main
 * afresh).  Each prints "before"; processor 0 prints what it saw.
 *
 *   ./count P
 */
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

int main(int argc, char **argv)
{
	bsp_pid_t P = argc > 1 ? (bsp_pid_t)atoi(argv[1]) : bsp_nprocs();

	printf("before\n");
	fflush(stdout);
	bsp_begin(P);
	bsp_sync();
	if (bsp_pid() == 0)
		printf("after: p=%u\n", (unsigned)bsp_nprocs());
	bsp_end();
	if (bsp_nprocs() != P)
		return 1;
	return 5;	/* main's status is the process's */
}
