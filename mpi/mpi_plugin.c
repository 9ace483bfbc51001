/*
 * mpi_plugin.c - the MPI transport plugin, built into libpems-mpi.so.
 *
 * The only file of pems that includes <mpi.h> or links libmpi.  Every
 * function is a direct MPI call on MPI_COMM_WORLD (mpi_plugin.h says why
 * it stays this thin); transport.c dlopen()s this under mpirun only.
 */
#include <errno.h>
#include <mpi.h>
#include <stdlib.h>

#include "mpi_plugin.h"

#define TAG_DATA 17

_Static_assert(sizeof(MPI_Request) <= sizeof(struct pems_mpi_req),
	       "MPI_Request does not fit struct pems_mpi_req");

static MPI_Request *req_of(struct pems_mpi_req *r)
{
	return (MPI_Request *)(void *)r->opaque;
}

static bool p_initialized(void)
{
	int init = 0;

	MPI_Initialized(&init);
	return init;
}

static int p_init(void)
{
	int prov;

	if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &prov) != MPI_SUCCESS)
		return -EIO;
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
	return 0;
}

static void p_touch_peers(void)
{
	int n = 0, *b;

	if (MPI_Comm_size(MPI_COMM_WORLD, &n) == MPI_SUCCESS &&
	    (b = calloc(2 * (size_t)n, sizeof(int)))) {
		MPI_Alltoall(b, 1, MPI_INT, b + n, 1, MPI_INT, MPI_COMM_WORLD);
		free(b);
	}
}

static void p_world(int *rank, int *size)
{
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
}

static void p_finalize(void)
{
	int fin = 0;

	MPI_Finalized(&fin);
	if (!fin)
		MPI_Finalize();
}

static void p_abort(int status)
{
	MPI_Abort(MPI_COMM_WORLD, status);
}

static void p_isend(const void *buf, size_t len, int rank, struct pems_mpi_req *req)
{
	MPI_Isend(buf, (int)len, MPI_BYTE, rank, TAG_DATA, MPI_COMM_WORLD, req_of(req));
}

static void p_irecv_any(void *buf, size_t len, struct pems_mpi_req *req)
{
	MPI_Irecv(buf, (int)len, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA, MPI_COMM_WORLD, req_of(req));
}

static bool p_test(struct pems_mpi_req *req, int *source)
{
	int done = 0;
	MPI_Status st;

	MPI_Test(req_of(req), &done, &st);
	if (done && source)
		*source = st.MPI_SOURCE;
	return done;
}

static void p_cancel(struct pems_mpi_req *req)
{
	MPI_Cancel(req_of(req));
	MPI_Request_free(req_of(req));
}

static void p_sum_u64(uint64_t *v, int n)
{
	MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}

static void p_allgather(const void *in, void *out, int bytes)
{
	MPI_Allgather(in, bytes, MPI_BYTE, out, bytes, MPI_BYTE, MPI_COMM_WORLD);
}

static void p_allgatherv(const void *in, int bytes, void *out, int *cnt, int *dsp)
{
	int n = 0, r;

	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Allgather(&bytes, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD);
	dsp[0] = 0;
	for (r = 1; r < n; r++)
		dsp[r] = dsp[r - 1] + cnt[r - 1];
	MPI_Allgatherv(in, bytes, MPI_BYTE, out, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
}

static void p_bcast(void *buf, int bytes, int root)
{
	MPI_Bcast(buf, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
}

static void p_alltoall_int(const int *in, int *out)
{
	MPI_Alltoall(in, 1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
}

static void p_alltoallv(const void *in, const int *scnt, const int *sdsp,
			void *out, const int *rcnt, const int *rdsp)
{
	MPI_Alltoallv(in, scnt, sdsp, MPI_BYTE, out, rcnt, rdsp, MPI_BYTE, MPI_COMM_WORLD);
}

static void p_barrier(void)
{
	MPI_Barrier(MPI_COMM_WORLD);
}

static const struct pems_mpi_ops ops = {
	.version = PEMS_MPI_PLUGIN_VERSION,
	.size = sizeof(struct pems_mpi_ops),
	.initialized = p_initialized,
	.init = p_init,
	.touch_peers = p_touch_peers,
	.world = p_world,
	.finalize = p_finalize,
	.abort = p_abort,
	.isend = p_isend,
	.irecv_any = p_irecv_any,
	.test = p_test,
	.cancel = p_cancel,
	.sum_u64 = p_sum_u64,
	.allgather = p_allgather,
	.allgatherv = p_allgatherv,
	.bcast = p_bcast,
	.alltoall_int = p_alltoall_int,
	.alltoallv = p_alltoallv,
	.barrier = p_barrier,
};

__attribute__((visibility("default"))) const struct pems_mpi_ops *pems_mpi_plugin(void)
{
	return &ops;
}
