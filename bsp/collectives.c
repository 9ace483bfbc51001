/*
 * collectives.c - pems collectives: each is one superstep (it includes a
 * bsp_sync); the runtime combines contributions on the rank (pems/coll.c)
 * and delivers results straight into the caller's buffer at swap-in.
 */
#include <string.h>

#include "pems_rt.h"

static struct pems_vp *self_or_abort(const char *fn)
{
	struct pems_vp *vp = pems_self();

	if (!vp)
		bsp_abort("%s: called outside the SPMD section (before bsp_begin or after bsp_end)", fn);
	return vp;
}

static void wait_for(struct pems_vp *vp, enum pems_coll_kind kind, void *out, size_t bytes)
{
	vp->coll.kind = kind;
	vp->coll.out = pems_globals_addr(vp, out);	/* delivered before it runs again */
	vp->coll.bytes = bytes;
	bsp_sync();
}

PEMS_API void pems_allreduce(const void *in, void *out, size_t count, enum pems_type type,
			     enum pems_op op)
{
	struct pems_vp *vp = self_or_abort("pems_allreduce");
	size_t e = pems_type_size(type);

	pems_coll_contribute(vp, "pems_allreduce", COLL_REDUCE, in, count, e, type, op, NULL, 0);
	wait_for(vp, COLL_REDUCE, out, count * e);
}

PEMS_API void pems_allreduce_user(const void *in, void *out, size_t count, size_t elem_size,
				  pems_user_op op)
{
	struct pems_vp *vp = self_or_abort("pems_allreduce_user");

	if (!op)
		bsp_abort("pems_allreduce_user: op is NULL");
	pems_coll_contribute(vp, "pems_allreduce_user", COLL_REDUCE, in, count, elem_size,
			     PEMS_BYTE, PEMS_SUM, op, 0);
	wait_for(vp, COLL_REDUCE, out, count * elem_size);
}

static void check_root(const char *fn, bsp_pid_t root)
{
	if (root >= pems_rt_procs())
		bsp_abort("%s: root %u is out of range; there are %u VPs", fn, root, pems_rt_procs());
}

PEMS_API void pems_reduce(bsp_pid_t root, const void *in, void *out, size_t count,
			  enum pems_type type, enum pems_op op)
{
	struct pems_vp *vp = self_or_abort("pems_reduce");
	size_t e = pems_type_size(type);

	check_root("pems_reduce", root);
	pems_coll_contribute(vp, "pems_reduce", COLL_REDUCE, in, count, e, type, op, NULL, root);
	wait_for(vp, COLL_REDUCE, vp->pid == root ? out : NULL, count * e);
}

PEMS_API void pems_broadcast(bsp_pid_t root, void *buf, size_t nbytes)
{
	struct pems_vp *vp = self_or_abort("pems_broadcast");

	check_root("pems_broadcast", root);
	pems_coll_contribute(vp, "pems_broadcast", COLL_BCAST, vp->pid == root ? buf : NULL,
			     nbytes, 1, PEMS_BYTE, PEMS_SUM, NULL, root);
	wait_for(vp, COLL_BCAST, buf, nbytes);
}

PEMS_API void pems_gather(bsp_pid_t root, const void *in, void *out, size_t nbytes)
{
	struct pems_vp *vp = self_or_abort("pems_gather");

	check_root("pems_gather", root);
	pems_coll_contribute(vp, "pems_gather", COLL_GATHER, in, nbytes, 1, PEMS_BYTE,
			     PEMS_SUM, NULL, root);
	wait_for(vp, COLL_GATHER, vp->pid == root ? out : NULL, nbytes * pems_rt_procs());
}

PEMS_API void pems_allgather(const void *in, void *out, size_t nbytes)
{
	struct pems_vp *vp = self_or_abort("pems_allgather");

	pems_coll_contribute(vp, "pems_allgather", COLL_GATHER, in, nbytes, 1, PEMS_BYTE,
			     PEMS_SUM, NULL, 0);
	wait_for(vp, COLL_GATHER, out, nbytes * pems_rt_procs());
}

PEMS_API void pems_exscan(const void *in, void *out, size_t count, enum pems_type type,
			  enum pems_op op)
{
	struct pems_vp *vp = self_or_abort("pems_exscan");
	size_t e = pems_type_size(type);

	pems_coll_contribute(vp, "pems_exscan", COLL_EXSCAN, in, count, e, type, op, NULL, 0);
	wait_for(vp, COLL_EXSCAN, out, count * e);
}

static void send_parts(struct pems_vp *vp, const char *buf, const size_t *counts,
		       const size_t *displs)
{
	unsigned j, v = pems_rt_procs();
	size_t off = 0;

	for (j = 0; j < v; j++) {
		size_t n = counts[j];
		struct pems_rec rec = { .type = REC_XCHG, .src = vp->pid, .len = n };

		if (n) {
			pems_msg_append(pems_self_worker(), j, &rec,
					buf + (displs ? displs[j] : off), n, NULL, 0);
			pems_msg_count(j, false, n);
			vp->sent_bytes += n;
		}
		off += n;
	}
}

PEMS_API void pems_alltoallv(const void *sendbuf, const size_t *sendcounts,
			     const size_t *sdispls, void *recvbuf, const size_t *recvcounts,
			     const size_t *rdispls)
{
	struct pems_vp *vp = self_or_abort("pems_alltoallv");

	if (!sendcounts || !sdispls || !rdispls || !recvcounts)
		bsp_abort("pems_alltoallv: sendcounts, sdispls, recvcounts and rdispls must not be NULL");
	if (vp->xchg.kind)
		bsp_abort("pems_alltoallv: called twice in one superstep");
	send_parts(vp, sendbuf, sendcounts, sdispls);
	vp->xchg.kind = COLL_ALLTOALLV;
	/* read and written at delivery, before the VP runs again: globals
	 * in its copy */
	vp->xchg.abuf = pems_globals_addr(vp, recvbuf);
	vp->xchg.rdispls = pems_globals_addr(vp, rdispls);
	vp->xchg.acounts = pems_globals_addr(vp, recvcounts);
}

PEMS_API void pems_exchange(const void *sendbuf, const size_t *sendcounts, void **recvbuf,
			    size_t *recvbytes, size_t *recvcounts)
{
	struct pems_vp *vp = self_or_abort("pems_exchange");

	if (!sendcounts || !recvbuf || !recvbytes)
		bsp_abort("pems_exchange: sendcounts, recvbuf and recvbytes must not be NULL");
	if (vp->xchg.kind)
		bsp_abort("pems_exchange: called twice in one superstep");
	send_parts(vp, sendbuf, sendcounts, NULL);
	vp->xchg.kind = COLL_EXCHANGE;
	vp->xchg.recvbuf = pems_globals_addr(vp, recvbuf);
	vp->xchg.recvbytes = pems_globals_addr(vp, recvbytes);
	vp->xchg.recvcounts = pems_globals_addr(vp, recvcounts);
}
