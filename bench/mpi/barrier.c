/*
 * bench/mpi/barrier.c - the cost of MPI_Barrier, the peer of the l that
 * bench/bspbench.c measures (bench/bspbench.sh builds it with mpicc).
 *
 *   mpirun -np P barrier [N]     (N timed barriers, default 10000)
 *
 * Rank 0 prints: bench=mpi-barrier p=.. n=.. secs=.. (mean seconds per
 * barrier over N, after 100 warm-up ones)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rank, size, i, n = argc > 1 ? atoi(argv[1]) : 10000;
	double t0, t;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (i = 0; i < 100; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (i = 0; i < n; i++)
		MPI_Barrier(MPI_COMM_WORLD);
	t = (MPI_Wtime() - t0) / n;
	MPI_Reduce(rank ? &t : MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("bench=mpi-barrier p=%d n=%d secs=%.9f\n", size, n, t);
	MPI_Finalize();
	return 0;
}
