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
 *      MPI_Abort so that an error on one rank ends the others at once;
 *  (5) MPI is reached only through the plugin's table (mpi/mpi_plugin.h),
 *      loaded by load_plugin() under mpirun and never otherwise: a process
 *      that was not started by mpirun never maps libmpi, and one that was
 *      either loads the plugin or exits 1 (it never goes on as one of p
 *      independent one-rank jobs).
 */
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"
#include "ctx.h"
#include "msg.h"
#include "tp.h"
#include "ckpt.h"
#include "mpi_plugin.h"

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
	struct pems_mpi_req req;
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
	struct pems_mpi_req rreq[NRECV];
	char *rbuf[NRECV];
	size_t rsize;
	int rhead;		/* oldest posted receive */
	unsigned ends;
	bool want_end, parked, resume, quit;
	atomic_size_t queued;		/* bytes copied out and not yet sent */
	size_t queue_limit;
	uint64_t sent_bytes, recv_bytes;
};

static const struct pems_mpi_ops *mpi;	/* the plugin's table, once loaded */
static bool mpi_on;
static int mpi_rank, mpi_size;
/* mpi_on, mpi_rank and mpi_size are written once, under world_lock, and
 * then world_known is set (release): VPs of a job of one rank may all ask
 * pems_rank() at once as their first call, and must neither start MPI
 * twice nor write those three while others read them (found by make tsan
 * in check_mpi_bsp -np 1, where mpi_on stays false). */
static pthread_mutex_t world_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool world_known;

static void on_mpi(void (*fn)(void *), void *arg);

bool pems_tp_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK");
}

/* ---- finding and loading the plugin (invariant 5) ---- */

#ifndef PEMS_BUILD_DIR
#define PEMS_BUILD_DIR "build"
#endif
#ifndef PEMS_LIBDIR
#define PEMS_LIBDIR "/usr/local/lib/pems"
#endif

static _Noreturn void plugin_fail(const char *path, const char *why)
{
	fprintf(stderr, "pems: error: cannot load the MPI transport %s: %s\n", path, why);
	exit(1);
}

/* Append dir (+ sub) to the places looked at; true if the plugin is
 * there, with its path in out. */
static bool look_in(char *out, size_t n, char *tried, size_t tn, const char *dir, const char *sub)
{
	size_t used = strlen(tried);

	snprintf(out, n, "%s%s/%s", dir, sub, PEMS_MPI_PLUGIN_FILE);
	if (!access(out, R_OK))
		return true;
	snprintf(tried + used, tn - used, "%s%s%s", used ? ", " : "", dir, sub);
	return false;
}

/*
 * Where the plugin is, in this order: $PEMS_MPI_PLUGIN; next to the
 * executable, and in ../lib/pems from it (an installed pems-run); in
 * pems/ beside libpems.so when the runtime is that shared library; the
 * build directory this runtime was compiled in (programs linked against
 * build/libpems.a, the tests); the install libdir given to make.
 */
static void find_plugin(char *out, size_t n)
{
	static char tried[4 * PATH_MAX], why[sizeof(tried) + 64];
	char exe[PATH_MAX], lib[PATH_MAX];
	const char *env = getenv("PEMS_MPI_PLUGIN");
	struct link_map *lm = NULL;
	Dl_info info;
	ssize_t len;

	if (env && *env) {
		snprintf(out, n, "%s", env);
		return;
	}
	tried[0] = 0;
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		const char *dir;

		exe[len] = 0;
		dir = dirname(exe);
		if (look_in(out, n, tried, sizeof(tried), dir, "") ||
		    look_in(out, n, tried, sizeof(tried), dir, "/../lib/pems"))
			return;
	}
	/* the main program's link map has an empty name */
	if (dladdr1((void *)pems_tp_world, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm &&
	    lm->l_name && lm->l_name[0]) {
		snprintf(lib, sizeof(lib), "%s", lm->l_name);
		if (look_in(out, n, tried, sizeof(tried), dirname(lib), "/pems"))
			return;
	}
	if (look_in(out, n, tried, sizeof(tried), PEMS_BUILD_DIR, "") ||
	    look_in(out, n, tried, sizeof(tried), PEMS_LIBDIR, ""))
		return;
	snprintf(why, sizeof(why), "not found in %s; set PEMS_MPI_PLUGIN to its path", tried);
	plugin_fail(PEMS_MPI_PLUGIN_FILE, why);
}

/* dlopen the plugin and check its table; exits 1 on any failure.
 * RTLD_GLOBAL: the components of Open MPI before 3.0 (mca_*.so, which
 * it dlopen()s) found libmpi's symbols only in the global scope, and some
 * still do not name libmpi as a dependency (4.1 works with RTLD_LOCAL). */
static void load_plugin(void)
{
	char path[PATH_MAX], why[160];
	pems_mpi_plugin_fn entry;
	void *h;

	find_plugin(path, sizeof(path));
	h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (!h)
		plugin_fail(path, dlerror());
	*(void **)&entry = dlsym(h, PEMS_MPI_PLUGIN_ENTRY);
	if (!entry)
		plugin_fail(path, dlerror());
	mpi = entry();
	if (mpi->version != PEMS_MPI_PLUGIN_VERSION || mpi->size < sizeof(*mpi)) {
		snprintf(why, sizeof(why), "its interface is version %u (%u bytes), this program needs version %u (%zu bytes): a plugin of another pems build?",
			 mpi->version, mpi->size, PEMS_MPI_PLUGIN_VERSION, sizeof(*mpi));
		plugin_fail(path, why);
	}
}

static void finalize_fn(void *arg)
{
	(void)arg;
	mpi->finalize();
}

static void mpi_finalize(void)
{
	on_mpi(finalize_fn, NULL);
}

/*
 * The MPI thread.  In a process that may checkpoint, MPI runs on a thread
 * of its own: MPI_Init_thread, then every MPI call the driver would make
 * (the collectives below, MPI_Finalize) is handed to it.  glibc gives
 * that thread its own malloc arena, so what Open MPI allocates (strings
 * of ports, job ids and paths whose lengths differ from job to job, event
 * queues whose growth depends on timing) stays out of the main arena, and
 * the runtime's tables land where they did in the checkpointed run
 * (checkpoint.c invariants 1 and 5).  The comm thread calls MPI itself.
 */
static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	void (*fn)(void *);
	void *arg;
	uint64_t asked, done;
	bool on;
} mt = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* Load the plugin and start MPI unless the program did: 1 if started
 * here, 0 if it was running, -EIO if MPI_Init_thread failed. */
static int mpi_start(void)
{
	load_plugin();
	if (mpi->initialized())
		return 0;
	return mpi->init() ? -EIO : 1;
}

static void *mpi_main(void *arg)
{
	/* the plugin's dlopen too allocates in this thread's arena */
	*(int *)arg = mpi_start();
	/* talk to every rank once here: Open MPI sets up a peer's endpoint
	 * (its address strings included) at the first message to it */
	if (*(int *)arg >= 0)
		mpi->touch_peers();
	pthread_mutex_lock(&mt.lock);
	mt.done = mt.asked = 1;	/* started */
	pthread_cond_broadcast(&mt.cond);
	for (;;) {
		while (mt.done == mt.asked)
			pthread_cond_wait(&mt.cond, &mt.lock);
		pthread_mutex_unlock(&mt.lock);
		mt.fn(mt.arg);
		pthread_mutex_lock(&mt.lock);
		mt.done = mt.asked;
		pthread_cond_broadcast(&mt.cond);
	}
	return NULL;
}

/* Run fn(arg) on the MPI thread if there is one (one caller: the driver). */
static void on_mpi(void (*fn)(void *), void *arg)
{
	if (!mt.on) {
		fn(arg);
		return;
	}
	pthread_mutex_lock(&mt.lock);
	mt.fn = fn;
	mt.arg = arg;
	mt.asked = mt.done + 1;
	pthread_cond_broadcast(&mt.cond);
	while (mt.done != mt.asked)
		pthread_cond_wait(&mt.cond, &mt.lock);
	pthread_mutex_unlock(&mt.lock);
}

/* mpi_start, on the MPI thread in a process that may checkpoint. */
static int mpi_init(void)
{
	int rc = -EIO;

	if (!pems_ckpt_started())
		return mpi_start();
	mt.asked = mt.done = 0;
	if (pthread_create(&mt.thread, NULL, mpi_main, &rc))
		return -EIO;
	pthread_mutex_lock(&mt.lock);
	while (!mt.done)
		pthread_cond_wait(&mt.cond, &mt.lock);
	pthread_mutex_unlock(&mt.lock);
	mt.on = rc >= 0;
	return rc;
}

/* MPI_Init once per process, only when started by mpirun. */
int pems_tp_world(unsigned *rank, unsigned *size)
{
	int rc;

	if (!pems_tp_launched()) {
		*rank = 0;
		*size = 1;
		return 0;
	}
	pthread_mutex_lock(&world_lock);
	if (!atomic_load_explicit(&world_known, memory_order_relaxed)) {
		rc = mpi_init();
		if (rc < 0) {
			pthread_mutex_unlock(&world_lock);
			return rc;
		}
		if (rc == 1)
			atexit(mpi_finalize);
		mpi->world(&mpi_rank, &mpi_size);
		mpi_on = mpi_size > 1;
		atomic_store_explicit(&world_known, true, memory_order_release);
	}
	pthread_mutex_unlock(&world_lock);
	*rank = (unsigned)mpi_rank;
	*size = (unsigned)mpi_size;
	return 0;
}

void pems_tp_abort(int status)
{
	if (mpi_on)
		mpi->abort(status);
}

unsigned pems_owner(const struct pems_rt *rt, unsigned pid)
{
	return (unsigned)((((uint64_t)pid + 1) * rt->nranks - 1) / rt->v);
}

/* ---- the comm thread ---- */

static void post_recv(struct pems_tp *tp, int i)
{
	mpi->irecv_any(tp->rbuf[i], tp->rsize, &tp->rreq[i]);
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
	int from;

	for (;;) {
		int i = tp->rhead;
		const struct tp_hdr *h = (const struct tp_hdr *)tp->rbuf[i];

		if (!mpi->test(&tp->rreq[i], &from))
			return any;
		any = true;
		if (h->kind == K_END)
			tp->ends++;
		else
			on_chunk(tp, h, tp->rbuf[i] + sizeof(*h), from);
		post_recv(tp, i);	/* now the newest */
		tp->rhead = (i + 1) % NRECV;
	}
}

static bool poll_send(struct pems_tp *tp)
{
	struct tp_send *q, **pp;
	bool any = false;

	pthread_mutex_lock(&tp->lock);
	q = tp->queue;
	tp->queue = tp->queue_tail = NULL;
	pthread_mutex_unlock(&tp->lock);
	while (q) {
		struct tp_send *next = q->next;

		mpi->isend(q->buf, q->len, q->rank, &q->req);
		q->next = tp->pending;
		tp->pending = q;
		q = next;
		any = true;
	}
	for (pp = &tp->pending; *pp;) {
		q = *pp;
		if (mpi->test(&q->req, NULL)) {
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
	bool q, end;

	/* want_end is the driver's, written under the lock (it enqueued
	 * its END markers before, so seeing it means they are queued) */
	pthread_mutex_lock(&tp->lock);
	q = tp->queue != NULL;
	end = tp->want_end;
	pthread_mutex_unlock(&tp->lock);
	return end && !q && !tp->pending &&
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
	for (i = 0; i < NRECV; i++)
		mpi->cancel(&tp->rreq[i]);
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

/* One MPI call of the driver, made where on_mpi runs it. */
struct mcall {
	int op;
	const void *in;
	void *out;
	int *cnt, *dsp, *rc, *sd, *rd;
	int n;			/* bytes, or u64 values for M_SUM */
	int root;
};

enum { M_SUM, M_GATHER, M_GATHERV, M_BCAST, M_A2AV, M_BARRIER };

static void mcall_fn(void *arg)
{
	struct mcall *c = arg;

	switch (c->op) {
	case M_SUM:
		mpi->sum_u64(c->out, c->n);
		break;
	case M_GATHER:
		mpi->allgather(c->in, c->out, c->n);
		break;
	case M_GATHERV:
		mpi->allgatherv(c->in, c->n, c->out, c->cnt, c->dsp);
		break;
	case M_BCAST:
		mpi->bcast(c->out, c->n, c->root);
		break;
	case M_A2AV:	/* counts first (into rc), then the data */
		if (!c->out)
			mpi->alltoall_int(c->cnt, c->rc);
		else
			mpi->alltoallv(c->in, c->cnt, c->sd, c->out, c->rc, c->rd);
		break;
	case M_BARRIER:
		mpi->barrier();
		break;
	}
}

void pems_tp_sum_u64(struct pems_rt *rt, uint64_t *v, size_t n)
{
	struct mcall c = { .op = M_SUM, .out = v, .n = (int)n };

	if (rt->nranks > 1 && n)
		on_mpi(mcall_fn, &c);
}

static void allgather(const void *in, void *out, int bytes)
{
	struct mcall c = { .op = M_GATHER, .in = in, .out = out, .n = bytes };

	on_mpi(mcall_fn, &c);
}

void pems_tp_allgather(struct pems_rt *rt, const void *in, void *out, size_t bytes)
{
	if (rt->nranks > 1)
		allgather(in, out, (int)bytes);
	else
		memcpy(out, in, bytes);
}

/* Rank r contributes counts[r] bytes; out gets all, in rank order. */
void pems_tp_allgatherv(struct pems_rt *rt, const void *in, size_t bytes, void *out)
{
	struct mcall c = { .op = M_GATHERV, .in = in, .out = out, .n = (int)bytes };

	if (rt->nranks == 1) {
		memcpy(out, in, bytes);
		return;
	}
	c.cnt = calloc(rt->nranks, sizeof(int));
	c.dsp = calloc(rt->nranks, sizeof(int));
	if (!c.cnt || !c.dsp)
		pems_fatal("transport: out of memory");
	on_mpi(mcall_fn, &c);
	free(c.cnt);
	free(c.dsp);
}

void pems_tp_bcast(struct pems_rt *rt, void *buf, size_t bytes, unsigned root_rank)
{
	struct mcall c = { .op = M_BCAST, .out = buf, .n = (int)bytes, .root = (int)root_rank };

	if (rt->nranks > 1)
		on_mpi(mcall_fn, &c);
}

/* Personalised exchange of byte blocks: send[r] (scount[r] bytes) to rank
 * r; returns a malloc'd buffer with what every rank sent us, rank order,
 * and fills rcount. */
char *pems_tp_alltoallv(struct pems_rt *rt, const char *send, const size_t *scount,
			size_t *rcount)
{
	unsigned p = rt->nranks, r;
	struct mcall c = { .op = M_A2AV, .in = send };
	size_t total = 0;
	char *out;

	c.cnt = calloc(p, sizeof(int));
	c.rc = calloc(p, sizeof(int));
	c.sd = calloc(p, sizeof(int));
	c.rd = calloc(p, sizeof(int));
	if (!c.cnt || !c.rc || !c.sd || !c.rd)
		pems_fatal("transport: out of memory");
	for (r = 0; r < p; r++)
		c.cnt[r] = (int)scount[r];
	on_mpi(mcall_fn, &c);	/* the counts */
	for (r = 0; r < p; r++) {
		if (r) {
			c.sd[r] = c.sd[r - 1] + c.cnt[r - 1];
			c.rd[r] = c.rd[r - 1] + c.rc[r - 1];
		}
		rcount[r] = (size_t)c.rc[r];
		total += (size_t)c.rc[r];
	}
	out = malloc(total + 1);
	if (!out)
		pems_fatal("transport: out of memory");
	c.out = out;
	on_mpi(mcall_fn, &c);	/* the data */
	free(c.cnt);
	free(c.rc);
	free(c.sd);
	free(c.rd);
	return out;
}

/* MPI starts on first use (under mpirun only), so these are right before
 * the first SPMD section too. */
static void world_known_now(void)
{
	unsigned r, n;

	if (!atomic_load_explicit(&world_known, memory_order_acquire) && pems_tp_launched())
		pems_tp_world(&r, &n);
}

PEMS_API unsigned pems_rank(void)
{
	world_known_now();
	return mpi_on ? (unsigned)mpi_rank : 0;
}

PEMS_API unsigned pems_nranks(void)
{
	world_known_now();
	return mpi_on ? (unsigned)mpi_size : 1;
}

PEMS_API void pems_rank_barrier(void)
{
	world_known_now();
	if (mpi_on) {
		struct mcall c = { .op = M_BARRIER };

		on_mpi(mcall_fn, &c);
	}
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
	allgather(me, all, (int)sizeof(me));
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
