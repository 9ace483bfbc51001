/*
 * bench/mpi/alltoallv.c - plain MPI_Alltoallv, the peer of
 * `bsp_params a2a` (bench/bsp-params.sh builds it with mpicc; it is not
 * part of the Makefile's bench/ programs, which link libpems).
 *
 *   mpirun -np P alltoallv --sizes B1,B2,... [--reps R] [--points]
 *
 * For each B: every rank sends an equal block of B/P bytes to every rank
 * (B bytes per rank per exchange, as in bsp_params a2a); one warm-up, then
 * R timed exchanges, each between barriers (a BSP superstep: the pems
 * figure includes its barrier too); the time of one is the slowest
 * rank's, and the figure the median over the R.
 * Rank 0 prints the least-squares fit secs = l + g*B in the format of
 * bsp_params (kind=alltoallv-mpi), and with --points one line per size.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXSIZES 32

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	switch (*end) {
	case 'K': case 'k': v *= 1024; break;
	case 'M': case 'm': v *= 1024 * 1024; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
	default: break;
	}
	return (size_t)v;
}

int main(int argc, char **argv)
{
	size_t sizes[MAXSIZES], bmax = 0;
	double x[MAXSIZES], y[MAXSIZES], mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, res = 0;
	double l, g, r2, d[256];
	unsigned n = 0, reps = 5, i, r;
	int rank, np, q, a, points = 0;
	int *cnt, *dsp;
	char *sb, *rb;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &np);
	for (a = 1; a < argc; a++) {
		if (!strcmp(argv[a], "--points")) {
			points = 1;
		} else if (!strcmp(argv[a], "--reps") && a + 1 < argc) {
			reps = (unsigned)atoi(argv[++a]);
		} else if (!strcmp(argv[a], "--sizes") && a + 1 < argc) {
			char *tok, *save, *dup = strdup(argv[++a]);

			for (tok = strtok_r(dup, ",", &save); tok && n < MAXSIZES;
			     tok = strtok_r(NULL, ",", &save))
				sizes[n++] = parse_size(tok);
			free(dup);
		} else {
			if (!rank)
				fprintf(stderr, "usage: alltoallv --sizes B1,B2,... [--reps R] [--points]\n");
			MPI_Finalize();
			return 2;
		}
	}
	if (n < 2 || !reps || reps > 256) {
		if (!rank)
			fprintf(stderr, "alltoallv: error: give at least two --sizes and --reps >= 1\n");
		MPI_Finalize();
		return 2;
	}
	for (i = 0; i < n; i++)
		if (sizes[i] > bmax)
			bmax = sizes[i];
	sb = malloc(bmax + 1);
	rb = malloc(bmax + 1);
	cnt = calloc((size_t)np, sizeof(int));
	dsp = calloc((size_t)np, sizeof(int));
	memset(sb, rank & 0xff, bmax + 1);
	memset(rb, 0, bmax + 1);
	for (i = 0; i < n; i++) {
		int blk = (int)(sizes[i] / (size_t)np);
		double t0, t, tmax;

		for (q = 0; q < np; q++) {
			cnt[q] = blk;
			dsp[q] = q * blk;
		}
		MPI_Alltoallv(sb, cnt, dsp, MPI_BYTE, rb, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
		for (r = 0; r < reps; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			MPI_Alltoallv(sb, cnt, dsp, MPI_BYTE, rb, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
			MPI_Barrier(MPI_COMM_WORLD);
			t = MPI_Wtime() - t0;
			MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
			d[r] = tmax;
		}
		qsort(d, reps, sizeof(double), cmp_double);
		x[i] = (double)blk * np;
		y[i] = reps % 2 ? d[reps / 2] : (d[reps / 2 - 1] + d[reps / 2]) / 2;
		if (points && !rank)
			printf("bench=bsp-params-point p=%d v=%d kind=alltoallv-mpi h=%.0f secs=%.9f\n",
			       np, np, x[i], y[i]);
	}
	for (i = 0; i < n; i++) {
		mx += x[i] / n;
		my += y[i] / n;
	}
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	g = sxx > 0 ? sxy / sxx : 0;
	l = my - g * mx;
	for (i = 0; i < n; i++)
		res += (y[i] - l - g * x[i]) * (y[i] - l - g * x[i]);
	r2 = syy > 0 ? 1 - res / syy : 1;
	if (!rank)
		printf("bench=bsp-params p=%d v=%d kind=alltoallv-mpi l=%.9f g=%.6e r2=%.4f\n", np, np,
		       l, g, r2);
	free(sb);
	free(rb);
	free(cnt);
	free(dsp);
	MPI_Finalize();
	return 0;
}
