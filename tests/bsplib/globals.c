/*
 * globals.c - per-process state in globals and statics, as programs for
 * process-based BSPlibs keep it: pid and nprocs in file-scope statics
 * set after bsp_begin, an initialised global, a counter every processor
 * updates, a registered global array other processors put into, a
 * global bsp_get lands in, and a global pointer to a global.  Every
 * processor checks what only its own copy can give; processor 0 prints
 * the count of failed checks and the sum of the counters.  Typed
 * signatures: builds in both dialects.
 *
 *   ./globals P [supersteps]    "globals: p=P bad=0 sum=S", S = T p(p+1)/2
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

static bsp_pid_t s, p;
static int initialised = 7;
static long counter;
static long table[64];
static long got;
static long *pc = &counter;
static long bad;

static void check(int ok)
{
	if (!ok)
		bad++;
}

int main(int argc, char **argv)
{
	bsp_pid_t P = argc > 1 ? (bsp_pid_t)atoi(argv[1]) : bsp_nprocs(), t;
	long T = argc > 2 ? atol(argv[2]) : 10, step, *res, sum = 0, nbad = 0;

	bsp_begin(P);
	s = bsp_pid();
	p = bsp_nprocs();
	check(initialised == 7 && counter == 0 && pc == &counter);
	initialised += (int)s;
	res = calloc(2 * p, sizeof(long));
	bsp_push_reg(table, sizeof(table));
	bsp_push_reg(&counter, sizeof(counter));
	bsp_push_reg(res, 2 * p * sizeof(long));
	bsp_sync();

	for (step = 0; step < T; step++) {
		bsp_pid_t next = (s + 1) % p, prev = (s + p - 1) % p;

		*pc += (long)s + 1;
		bsp_put(next, &counter, table, (step % 32) * sizeof(long), sizeof(long));
		bsp_get(prev, &counter, 0, &got, sizeof(long));
		bsp_sync();
		/* the neighbour's counter, from its own copy */
		check(table[step % 32] == (step + 1) * ((long)prev + 1));
		check(got == (step + 1) * ((long)prev + 1));
		check(s == bsp_pid() && p == bsp_nprocs() && initialised == 7 + (int)s);
	}
	check(counter == T * ((long)s + 1));
	res[2 * s] = bad;
	res[2 * s + 1] = counter;
	bsp_put(0, res + 2 * s, res, 2 * s * sizeof(long), 2 * sizeof(long));
	bsp_sync();
	if (s == 0) {
		for (t = 0; t < p; t++) {
			nbad += res[2 * t];
			sum += res[2 * t + 1];
		}
		printf("globals: p=%u bad=%ld sum=%ld\n", (unsigned)p, nbad, sum);
	}
	bsp_end();
	return 0;
}
