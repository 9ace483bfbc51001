/*
 * transport.c - Open MPI between ranks.
 *
 * Rank r hosts VPs [v*r/p, v*(r+1)/p).  Within a superstep, a message
 * chunk whose destination lives on another rank is not written to disk
 * by the sender: the worker hands it to this rank's comm thread, which
 * sends it (MPI_Isend, non-blocking) while the workers go on computing.
 * The receiving comm thread appends it to the stream of its origin
 * (remote rank, worker) and writes it to its own message log, so it lands
 * in the receiver's message store exactly like a local chunk (msg.c).
 *
 * Invariants:
 *  (1) only the comm thread calls MPI during a superstep; the driver
 *      calls MPI only at the barrier, while the comm thread is parked;
 *  (2) chunks between two ranks travel in FIFO order (one tag, one
 *      communicator), so each origin stream stays sorted by source VP;
 *  (3) a superstep's transport ends when every queued chunk is sent, an
 *      END marker from every other rank has arrived (it follows that
 *      rank's last chunk) and every received chunk is written;
 *  (4) a rank that dies makes mpirun end the whole job; pems_die() calls
 *      MPI_Abort so that an error on one rank ends the others at once.
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#define TAG_DATA 17
#define NRECV 4

enum { K_CHUNK = 1, K_END = 2 };

struct tp_hdr {
	uint32_t kind;
	uint32_t origin;	/* sender's worker index */
	uint32_t dst;		/* destination pid */
	uint32_t len;
	uint64_t superstep;
};

struct tp_send {
	struct tp_send *next;
	int rank;
	MPI_Request req;
	size_t len;
	char *buf;		/* header + data */
};

struct pems_tp {
	struct pems_rt *rt;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct tp_send *queue, *queue_tail;	/* to be sent */
	struct tp_send *pending;		/* sent, not complete */
	MPI_Request rreq[NRECV];
	char *rbuf[NRECV];
	size_t rsize;
	int rhead;		/* oldest posted receive */
	unsigned ends;
	bool want_end, parked, resume, quit;
	atomic_size_t queued;		/* bytes copied out and not yet sent */
	size_t queue_limit;
	uint64_t sent_bytes, recv_bytes;
};

static bool mpi_on;
static int mpi_rank, mpi_size;

bool pems_tp_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK");
}

static void mpi_finalize(void)
{
	int fin = 0;

	MPI_Finalized(&fin);
	if (!fin)
		MPI_Finalize();
}

/* MPI_Init once per process, only when started by mpirun. */
int pems_tp_world(unsigned *rank, unsigned *size)
{
	int prov, init = 0;

	if (!pems_tp_launched()) {
		*rank = 0;
		*size = 1;
		return 0;
	}
	MPI_Initialized(&init);
	if (!init) {
		if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &prov) != MPI_SUCCESS)
			return -EIO;
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
		atexit(mpi_finalize);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
	mpi_on = mpi_size > 1;
	*rank = (unsigned)mpi_rank;
	*size = (unsigned)mpi_size;
	return 0;
}

void pems_tp_abort(int status)
{
	if (mpi_on)
		MPI_Abort(MPI_COMM_WORLD, status);
}

unsigned pems_owner(const struct pems_rt *rt, unsigned pid)
{
	return (unsigned)((((uint64_t)pid + 1) * rt->nranks - 1) / rt->v);
}

/* ---- the comm thread ---- */

static void post_recv(struct pems_tp *tp, int i)
{
	MPI_Irecv(tp->rbuf[i], (int)tp->rsize, MPI_BYTE, MPI_ANY_SOURCE, TAG_DATA,
		  MPI_COMM_WORLD, &tp->rreq[i]);
}

static void on_chunk(struct pems_tp *tp, const struct tp_hdr *h, const char *data, int from)
{
	struct pems_rt *rt = tp->rt;
	unsigned origin = (unsigned)from * rt->k + h->origin;
	struct pems_stream *s = &rt->in_next[(size_t)origin * rt->vlocal + (h->dst - rt->first)];

	if (h->superstep != rt->superstep)
		pems_fatal("transport: chunk of superstep %llu from rank %d arrived in superstep %llu",
			   (unsigned long long)h->superstep, from, (unsigned long long)rt->superstep);
	pems_msg_land(rt->tpw, s, data, h->len);
	tp->recv_bytes += h->len;
}

/*
 * Invariant (2) needs care here: MPI matches messages to receives in the
 * order the receives were posted, but they can *complete* out of order (a
 * 1 MiB chunk under rendezvous after a small END sent behind it).  So
 * the receives form a ring and are handled strictly oldest first.
 */
static bool poll_recv(struct pems_tp *tp)
{
	bool any = false;
	int done;
	MPI_Status st;

	for (;;) {
		int i = tp->rhead;
		const struct tp_hdr *h = (const struct tp_hdr *)tp->rbuf[i];

		MPI_Test(&tp->rreq[i], &done, &st);
		if (!done)
			return any;
		any = true;
		if (h->kind == K_END)
			tp->ends++;
		else
			on_chunk(tp, h, tp->rbuf[i] + sizeof(*h), st.MPI_SOURCE);
		post_recv(tp, i);	/* now the newest */
		tp->rhead = (i + 1) % NRECV;
	}
}

static bool poll_send(struct pems_tp *tp)
{
	struct tp_send *q, **pp;
	bool any = false;
	int done;

	pthread_mutex_lock(&tp->lock);
	q = tp->queue;
	tp->queue = tp->queue_tail = NULL;
	pthread_mutex_unlock(&tp->lock);
	while (q) {
		struct tp_send *next = q->next;

		MPI_Isend(q->buf, (int)q->len, MPI_BYTE, q->rank, TAG_DATA, MPI_COMM_WORLD, &q->req);
		q->next = tp->pending;
		tp->pending = q;
		q = next;
		any = true;
	}
	for (pp = &tp->pending; *pp;) {
		q = *pp;
		MPI_Test(&q->req, &done, MPI_STATUS_IGNORE);
		if (done) {
			*pp = q->next;
			atomic_fetch_sub(&tp->queued, q->len);
			free(q->buf);
			free(q);
			any = true;
		} else {
			pp = &q->next;
		}
	}
	return any;
}

static void enqueue(struct pems_tp *tp, struct tp_send *s)
{
	pthread_mutex_lock(&tp->lock);
	s->next = NULL;
	if (tp->queue_tail)
		tp->queue_tail->next = s;
	else
		tp->queue = s;
	tp->queue_tail = s;
	pthread_mutex_unlock(&tp->lock);
}

static struct tp_send *make_send(int rank, uint32_t kind, uint32_t origin, uint32_t dst,
				 const void *data, size_t len, uint64_t step)
{
	struct tp_send *s = calloc(1, sizeof(*s));
	struct tp_hdr h = { kind, origin, dst, (uint32_t)len, step };

	if (!s || !(s->buf = malloc(sizeof(h) + len)))
		pems_fatal("transport: out of memory");
	memcpy(s->buf, &h, sizeof(h));
	if (len)
		memcpy(s->buf + sizeof(h), data, len);
	s->len = sizeof(h) + len;
	s->rank = rank;
	return s;
}

static bool superstep_done(struct pems_tp *tp)
{
	bool q;

	pthread_mutex_lock(&tp->lock);
	q = tp->queue != NULL;
	pthread_mutex_unlock(&tp->lock);
	return tp->want_end && !q && !tp->pending &&
	       tp->ends == tp->rt->nranks - 1 && !pems_io_inflight(tp->rt->tpw->io);
}

static void *tp_main(void *arg)
{
	struct pems_tp *tp = arg;
	int i;

	pems_set_thread_worker(tp->rt->tpw);
	for (i = 0; i < NRECV; i++)
		post_recv(tp, i);
	for (;;) {
		bool sent = poll_send(tp), recvd = poll_recv(tp);	/* both, always */
		bool busy = sent || recvd;

		pems_worker_reap(tp->rt->tpw, 0);
		if (superstep_done(tp)) {
			pthread_mutex_lock(&tp->lock);
			tp->parked = true;
			pthread_cond_broadcast(&tp->cond);
			while (!tp->resume && !tp->quit)
				pthread_cond_wait(&tp->cond, &tp->lock);
			tp->resume = false;
			tp->parked = false;
			tp->want_end = false;
			tp->ends = 0;
			pthread_cond_broadcast(&tp->cond);
			if (tp->quit) {
				pthread_mutex_unlock(&tp->lock);
				break;
			}
			pthread_mutex_unlock(&tp->lock);
			continue;
		}
		if (!busy)
			usleep(20);
	}
	for (i = 0; i < NRECV; i++) {
		MPI_Cancel(&tp->rreq[i]);
		MPI_Request_free(&tp->rreq[i]);
	}
	return NULL;
}

int pems_tp_start(struct pems_rt *rt)
{
	struct pems_tp *tp;
	int i;

	if (rt->nranks == 1)
		return 0;
	tp = calloc(1, sizeof(*tp));
	if (!tp)
		return -ENOMEM;
	tp->rt = rt;
	tp->rsize = sizeof(struct tp_hdr) + rt->chunk_size;
	tp->queue_limit = 8 * rt->k * tp->rsize;
	for (i = 0; i < NRECV; i++)
		if (!(tp->rbuf[i] = malloc(tp->rsize)))
			return -ENOMEM;
	pthread_mutex_init(&tp->lock, NULL);
	pthread_cond_init(&tp->cond, NULL);
	rt->tp = tp;
	return -pthread_create(&tp->thread, NULL, tp_main, tp);
}

void pems_tp_stop(struct pems_rt *rt)
{
	struct pems_tp *tp = rt->tp;
	int i;

	if (!tp)
		return;
	pthread_mutex_lock(&tp->lock);
	tp->quit = true;
	pthread_cond_broadcast(&tp->cond);
	pthread_mutex_unlock(&tp->lock);
	pthread_join(tp->thread, NULL);
	for (i = 0; i < NRECV; i++)
		free(tp->rbuf[i]);
	free(tp);
	rt->tp = NULL;
}

/* A worker's chunk for a VP on another rank (full, or the last partial
 * one of the superstep): copied into a send and queued.  Returns with the
 * chunk's buffer free for reuse. */
void pems_tp_send_chunk(struct pems_worker *w, unsigned dst, const char *data, size_t len)
{
	struct pems_rt *rt = w->rt;
	struct pems_tp *tp = rt->tp;
	struct tp_send *s;

	/* bounded: a sender faster than the network waits, with its own
	 * disk I/O still progressing */
	while (atomic_load(&tp->queued) > tp->queue_limit) {
		if (pems_io_inflight(w->io))
			pems_worker_reap(w, 0);
		usleep(50);
	}
	s = make_send((int)pems_owner(rt, dst), K_CHUNK, w->id, dst, data, len, rt->superstep);
	atomic_fetch_add(&tp->queued, s->len);
	enqueue(tp, s);
	w->net_sent += len;
}

/* Driver, after the local workers are done: END markers out, then wait
 * for invariant (3).  MPI is the driver's afterwards (invariant 1). */
void pems_tp_end_superstep(struct pems_rt *rt)
{
	struct pems_tp *tp = rt->tp;
	unsigned r;

	if (!tp)
		return;
	for (r = 0; r < rt->nranks; r++) {
		struct tp_send *s;

		if (r == rt->rank)
			continue;
		s = make_send((int)r, K_END, 0, 0, NULL, 0, rt->superstep);
		atomic_fetch_add(&tp->queued, s->len);
		enqueue(tp, s);
	}
	pthread_mutex_lock(&tp->lock);
	tp->want_end = true;
	while (!tp->parked)
		pthread_cond_wait(&tp->cond, &tp->lock);
	pthread_mutex_unlock(&tp->lock);
}

void pems_tp_resume(struct pems_rt *rt)
{
	struct pems_tp *tp = rt->tp;

	if (!tp)
		return;
	pthread_mutex_lock(&tp->lock);
	tp->resume = true;
	pthread_cond_broadcast(&tp->cond);
	pthread_mutex_unlock(&tp->lock);
	/* wait until it runs again, so the next end finds it unparked */
	pthread_mutex_lock(&tp->lock);
	while (tp->parked)
		pthread_cond_wait(&tp->cond, &tp->lock);
	pthread_mutex_unlock(&tp->lock);
}

/* ---- collectives for the barrier (driver only) ---- */

void pems_tp_sum_u64(struct pems_rt *rt, uint64_t *v, size_t n)
{
	if (rt->nranks > 1 && n)
		MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
}

void pems_tp_allgather(struct pems_rt *rt, const void *in, void *out, size_t bytes)
{
	if (rt->nranks > 1)
		MPI_Allgather(in, (int)bytes, MPI_BYTE, out, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
	else
		memcpy(out, in, bytes);
}

/* Rank r contributes counts[r] bytes; out gets all, in rank order. */
void pems_tp_allgatherv(struct pems_rt *rt, const void *in, size_t bytes, void *out)
{
	int *cnt, *dsp;
	unsigned r;
	int mine = (int)bytes;

	if (rt->nranks == 1) {
		memcpy(out, in, bytes);
		return;
	}
	cnt = calloc(rt->nranks, sizeof(int));
	dsp = calloc(rt->nranks, sizeof(int));
	MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD);
	for (r = 1; r < rt->nranks; r++)
		dsp[r] = dsp[r - 1] + cnt[r - 1];
	MPI_Allgatherv(in, mine, MPI_BYTE, out, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
	free(cnt);
	free(dsp);
}

void pems_tp_bcast(struct pems_rt *rt, void *buf, size_t bytes, unsigned root_rank)
{
	if (rt->nranks > 1)
		MPI_Bcast(buf, (int)bytes, MPI_BYTE, (int)root_rank, MPI_COMM_WORLD);
}

/* Personalised exchange of byte blocks: send[r] (scount[r] bytes) to rank
 * r; returns a malloc'd buffer with what every rank sent us, rank order,
 * and fills rcount. */
char *pems_tp_alltoallv(struct pems_rt *rt, const char *send, const size_t *scount,
			size_t *rcount)
{
	unsigned p = rt->nranks, r;
	int *sc = calloc(p, sizeof(int)), *rc = calloc(p, sizeof(int));
	int *sd = calloc(p, sizeof(int)), *rd = calloc(p, sizeof(int));
	size_t total = 0;
	char *out;

	for (r = 0; r < p; r++)
		sc[r] = (int)scount[r];
	MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
	for (r = 0; r < p; r++) {
		if (r) {
			sd[r] = sd[r - 1] + sc[r - 1];
			rd[r] = rd[r - 1] + rc[r - 1];
		}
		rcount[r] = (size_t)rc[r];
		total += (size_t)rc[r];
	}
	out = malloc(total + 1);
	if (!out)
		pems_fatal("transport: out of memory");
	MPI_Alltoallv(send, sc, sd, MPI_BYTE, out, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
	free(sc);
	free(rc);
	free(sd);
	free(rd);
	return out;
}

/* MPI starts on first use (under mpirun only), so these are right before
 * the first SPMD section too. */
PEMS_API unsigned pems_rank(void)
{
	unsigned r, n;

	if (!mpi_on && pems_tp_launched())
		pems_tp_world(&r, &n);
	return mpi_on ? (unsigned)mpi_rank : 0;
}

PEMS_API unsigned pems_nranks(void)
{
	unsigned r, n;

	if (!mpi_on && pems_tp_launched())
		pems_tp_world(&r, &n);
	return mpi_on ? (unsigned)mpi_size : 1;
}

PEMS_API void pems_rank_barrier(void)
{
	unsigned r, n;

	if (!mpi_on && pems_tp_launched())
		pems_tp_world(&r, &n);
	if (mpi_on)
		MPI_Barrier(MPI_COMM_WORLD);
}

/* Every rank must agree on what shapes the streams: v, k and the chunk
 * size (set by --threads and --mem, whose defaults differ per node). */
int pems_tp_check_uniform(struct pems_rt *rt, unsigned v, unsigned k, size_t chunk)
{
	uint64_t me[3] = { v, k, chunk }, *all;
	unsigned r;
	int rc = 0;

	if (rt->nranks == 1)
		return 0;
	all = calloc(3 * rt->nranks, sizeof(uint64_t));
	if (!all)
		return -ENOMEM;
	MPI_Allgather(me, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, MPI_COMM_WORLD);
	for (r = 0; r < rt->nranks && !rc; r++) {
		const char *what = all[3 * r] != v ? "--procs" :
				   all[3 * r + 1] != k ? "--threads" :
				   all[3 * r + 2] != chunk ? "--mem (message chunk size)" : NULL;

		if (what) {
			if (rt->rank == 0)
				fprintf(stderr, "pems: error: ranks 0 and %u were given different %s; give every rank the same --procs, --threads and --mem\n",
					r, what);
			rc = -PEMS_E_CONFIG;
		}
	}
	free(all);
	return rc;
}
