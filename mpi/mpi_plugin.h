/*
 * mpi_plugin.h - the MPI transport plugin's interface (layer mpi/).
 *
 * Loading Open MPI costs a process about 0.4 s of dynamic linking with a
 * cold page cache (libmpi, open-rte, open-pal, hwloc, pmix, libevent...),
 * and most pems runs are one rank and never call MPI.  So no pems program
 * links libmpi: the MPI calls live in build/libpems-mpi.so (mpi_plugin.c,
 * the only file that includes <mpi.h>), which pems/transport.c dlopen()s
 * when, and only when, the process was started by mpirun.
 *
 * The plugin is a thin, stateless shim over MPI_COMM_WORLD: it knows
 * nothing of the runtime (it cannot: the Makefile gives it no include
 * path but this folder), and the runtime keeps every policy (threads,
 * ordering, chunk framing) in transport.c.  All calls use MPI_BYTE
 * buffers, one tag and MPI_COMM_WORLD; errors are fatal inside MPI
 * (init sets MPI_ERRORS_ARE_FATAL), so the data calls return nothing.
 *
 * The plugin exports one symbol, PEMS_MPI_PLUGIN_ENTRY, a function
 * returning its table; the caller checks version (== PEMS_MPI_PLUGIN_VERSION)
 * and size (>= what it uses) before calling anything.  Bump the version
 * whenever a member changes meaning; appending members keeps it.
 */
#ifndef PEMS_MPI_PLUGIN_H
#define PEMS_MPI_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PEMS_MPI_PLUGIN_VERSION 1u
#define PEMS_MPI_PLUGIN_FILE "libpems-mpi.so"
#define PEMS_MPI_PLUGIN_ENTRY "pems_mpi_plugin"

/* An MPI_Request, opaque to the caller (Open MPI's is a pointer,
 * MPICH's an int; the plugin asserts it fits).  Caller-owned storage. */
struct pems_mpi_req {
	uint64_t opaque[2];
};

struct pems_mpi_ops {
	unsigned version;	/* PEMS_MPI_PLUGIN_VERSION */
	unsigned size;		/* sizeof(struct pems_mpi_ops) of the plugin */

	/* -- setup; world rank and size are MPI_COMM_WORLD's -- */
	bool (*initialized)(void);
	/* MPI_Init_thread(MPI_THREAD_MULTIPLE), then errors made fatal on
	 * MPI_COMM_WORLD; 0, or -EIO when MPI_Init_thread fails. */
	int (*init)(void);
	/* One small message to and from every rank: Open MPI sets up a
	 * peer's endpoint at the first message to it (see transport.c). */
	void (*touch_peers)(void);
	void (*world)(int *rank, int *size);
	void (*finalize)(void);		/* MPI_Finalize unless done already */
	void (*abort)(int status);	/* MPI_Abort; does not return */

	/* -- point to point (the comm thread), bytes, one tag -- */
	void (*isend)(const void *buf, size_t len, int rank, struct pems_mpi_req *req);
	void (*irecv_any)(void *buf, size_t len, struct pems_mpi_req *req);
	/* true when req completed (then it is freed); *source, if not NULL,
	 * gets the sender's rank */
	bool (*test)(struct pems_mpi_req *req, int *source);
	void (*cancel)(struct pems_mpi_req *req);	/* cancel and free */

	/* -- collectives over all ranks (the driver), counts as in MPI -- */
	void (*sum_u64)(uint64_t *v, int n);		/* in place */
	void (*allgather)(const void *in, void *out, int bytes);
	/* each rank gives bytes; cnt and dsp (nranks ints each, caller's)
	 * get every rank's count and offset in out */
	void (*allgatherv)(const void *in, int bytes, void *out, int *cnt, int *dsp);
	void (*bcast)(void *buf, int bytes, int root);
	void (*alltoall_int)(const int *in, int *out);	/* one int each way */
	void (*alltoallv)(const void *in, const int *scnt, const int *sdsp,
			  void *out, const int *rcnt, const int *rdsp);
	void (*barrier)(void);
};

/* The plugin's one export: its table (static storage, never NULL). */
typedef const struct pems_mpi_ops *(*pems_mpi_plugin_fn)(void);

#endif
