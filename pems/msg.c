/*
 * msg.c - the message store: bounded streams on disk, direct delivery.
 *
 * Every record a VP sends (bsp_put, bsp_send, alltoallv/exchange data) is
 * appended, header then payload, to the stream (worker w -> destination
 * d) of the worker running it.  A stream is a list of chunks of
 * rt->chunk_size bytes; records may straddle chunks.
 *
 * Invariants:
 *  (1) a worker runs its VPs in increasing pid order (sched.c claims them
 *      from one counter), so each stream holds records sorted by source
 *      and, per source, in issue order;
 *  (2) delivery merges the k streams of a destination by source, which
 *      applies records in (source VP, issue order) whatever k, p or the
 *      timing were;
 *  (3) a full chunk is written, at once and asynchronously, as one
 *      aligned append to the worker's log for this superstep's parity;
 *      its buffer returns to the pool when the write completes.  Partial
 *      chunks at the end of a superstep stay in memory (so small message
 *      volumes never touch the disk);
 *  (4) each worker has nlogs logs: superstep s writes log wlog while
 *      deliveries read log rlog (the wlog of s-1); the next wlog is the
 *      lowest log that is neither the one just written nor plog, the log
 *      the last checkpoint's messages are in (checkpoint.c).  Without
 *      checkpoints (plog -1, two logs) this is alternation by parity; a
 *      log is reused from offset 0;
 *  (5) memory: about 2*k*vlocal chunks exist at a time (open ones, and
 *      partial ones kept from the last superstep), which chunk_size is
 *      derived from; requests are chunk-sized, so a budget that allows
 *      1 MiB chunks gets disk-speed message I/O;
 *  (6) a chunk is sealed into a stored block (spill.c): compressed when
 *      that pays, never larger than raw, with its CRC-32C in c->blk; it
 *      is checked when read back, before a byte of it is delivered.  A
 *      compressed chunk is unpacked into its reader's own buffer
 *      (r->raw), which frees the read-ahead slot at once;
 *  (7) a full chunk for a local VP is kept in memory instead of written
 *      while the context budget has room (pems_ctx_hold: the cache's
 *      share of the rest pool), copied out of the pool into its own
 *      mapping so the pool keeps its size; it is delivered from memory
 *      like a partial chunk and unmapped when its destination is done.
 *      A job that fits in --mem so moves no message bytes through the
 *      disk, a larger one writes and reads what exceeds the room.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rt.h"
#include "ctx.h"
#include "msg.h"
#include "tp.h"
#include "ckpt.h"
#include "spill.h"

#define RA PEMS_MSG_RA	/* chunks read ahead per stream during delivery */

/* ---- buffer pool ---- */

/*
 * Chunk buffers are cut from slabs of SLAB bytes: pems_io_alloc puts
 * buffers of 1 MiB and more on huge pages (one DMA segment per request,
 * io.c), so 1 MiB chunks cut two from a 2 MiB slab get that without
 * costing 2 MiB each.  pool_count counts every chunk of every slab, so
 * it measures the memory really taken; a whole slab is taken only while
 * it fits under pool_max, else the smallest allocation.  Chunk buffers
 * are freed only with their slab, at teardown.
 */
#define SLAB (2u << 20)

struct pems_slab {
	struct pems_slab *next;
	char *buf;
	size_t len;
};

/* Chunks of the next allocation; called with pool_lock held. */
static size_t pool_batch(const struct pems_rt *rt)
{
	size_t cs = rt->chunk_size, n = SLAB / cs;

	if (n < 1 || rt->pool_count + n > rt->pool_max)
		n = 1;
	/* use all that the allocation takes: a lone 1 MiB chunk costs 2 */
	return pems_io_alloc_size(n * cs) / cs;
}

/* A slab of @n chunks: returns the first, the others go on the free list. */
static char *pool_grow(struct pems_rt *rt, size_t n)
{
	struct pems_slab *s = malloc(sizeof(*s));
	size_t i;

	if (!s || !(s->buf = pems_io_alloc(n * rt->chunk_size)))
		pems_fatal("out of memory for message buffers");
	s->len = n * rt->chunk_size;
	pthread_mutex_lock(&rt->pool_lock);
	s->next = rt->slabs;
	rt->slabs = s;
	for (i = 1; i < n; i++) {
		char *b = s->buf + i * rt->chunk_size;

		*(char **)b = rt->pool_free;
		rt->pool_free = b;
	}
	pthread_mutex_unlock(&rt->pool_lock);
	return s->buf;
}

static char *hold_alloc(struct pems_rt *rt);

/* A chunk buffer for a stream rebuilt outside the workers (resume from a
 * checkpoint): the pool's, counted like any other; never waits. */
static char *pool_buf_new(struct pems_rt *rt)
{
	char *b;
	size_t n = 0;

	pthread_mutex_lock(&rt->pool_lock);
	b = rt->pool_free;
	if (b) {
		rt->pool_free = *(char **)b;
	} else {
		n = pool_batch(rt);
		rt->pool_count += n;
	}
	pthread_mutex_unlock(&rt->pool_lock);
	return b ? b : pool_grow(rt, n);
}

/* The buffer of in-memory chunk @c, @c->len bytes, of a stream rebuilt
 * from a checkpoint: a full chunk was kept in memory (invariant 7) and
 * is again when there is room, a partial one is the pool's. */
void pems_msg_buf_restore(struct pems_rt *rt, struct pems_chunk *c)
{
	if (c->len == rt->chunk_size && (c->buf = hold_alloc(rt))) {
		c->held = true;
		return;
	}
	c->buf = pool_buf_new(rt);
}

static char *pool_get(struct pems_worker *w)
{
	struct pems_rt *rt = w->rt;
	static bool warned;
	char *b;
	size_t n;

	for (;;) {
		pthread_mutex_lock(&rt->pool_lock);
		b = rt->pool_free;
		if (b) {
			rt->pool_free = *(char **)b;
		} else if (rt->pool_count < rt->pool_max || !pems_io_inflight(w->io)) {
			if (rt->pool_count >= rt->pool_max && !warned && !rt->cfg.quiet) {
				warned = true;
				fprintf(stderr, "pems: warning: message buffers exceed their share of --mem; raise --mem or lower --procs\n");
			}
			n = pool_batch(rt);
			rt->pool_count += n;
			pthread_mutex_unlock(&rt->pool_lock);
			return pool_grow(rt, n);
		}
		pthread_mutex_unlock(&rt->pool_lock);
		if (b)
			return b;
		pems_worker_reap(w, 1);	/* our writes free buffers */
	}
}

static void pool_put(struct pems_rt *rt, char *b)
{
	pthread_mutex_lock(&rt->pool_lock);
	*(char **)b = rt->pool_free;
	rt->pool_free = b;
	pthread_mutex_unlock(&rt->pool_lock);
}

/* BSMP queue bytes and exchange bytes addressed to each VP, summed at
 * the barrier (sizes of what delivery allocates) */
void pems_msg_count(unsigned dst, bool send, size_t bytes)
{
	struct pems_rt *rt = pems_rt;

	atomic_fetch_add(send ? &rt->send_in_next[dst] : &rt->xchg_in_next[dst], bytes);
}

/* ---- setup ---- */

/* invariant (5): open chunks of this superstep and partial ones kept
 * from the last (2*k*vlocal) plus a few writes in flight per worker
 * (pems_msg_mem); the largest power of two from a page to a request
 * whose chunks fit @budget */
size_t pems_msg_chunk_size(size_t budget, unsigned k, unsigned vlocal)
{
	size_t p = PEMS_PAGE;

	while (p < PEMS_IO_REQ_SIZE && pems_msg_mem(k, vlocal, p * 2) <= budget)
		p *= 2;
	return p;
}

int pems_msg_setup(struct pems_rt *rt)
{
	size_t n = (size_t)rt->nranks * rt->k * rt->vlocal;

	pems_spill_setup(rt);
	rt->norigins = rt->nranks * rt->k;
	rt->ra = pems_msg_ra(rt->nranks);
	rt->chunk_size = rt->d.chunk;
	rt->pool_max = rt->d.msg_budget / rt->chunk_size;
	pthread_mutex_init(&rt->pool_lock, NULL);
	rt->in = calloc(n, sizeof(*rt->in));
	rt->in_next = calloc(n, sizeof(*rt->in));
	rt->xchg_in = calloc(rt->v, sizeof(*rt->xchg_in));
	rt->xchg_in_next = calloc(rt->v, sizeof(*rt->xchg_in));
	rt->send_in = calloc(rt->v, sizeof(*rt->send_in));
	rt->send_in_next = calloc(rt->v, sizeof(*rt->send_in));
	if (!rt->in || !rt->in_next || !rt->xchg_in || !rt->xchg_in_next || !rt->send_in ||
	    !rt->send_in_next)
		return -ENOMEM;
	return 0;
}

static void readers_free(struct pems_worker *w);

/* ---- chunks kept in memory (invariant 7) ---- */

/* A buffer for a chunk kept in memory, or NULL when the budget has no
 * room for one (or no mapping is to be had). */
static char *hold_alloc(struct pems_rt *rt)
{
	char *b;

	if (rt->cfg.no_hold || !pems_ctx_hold(rt, rt->chunk_size))
		return NULL;
	b = mmap(NULL, rt->chunk_size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (b == MAP_FAILED) {
		pems_ctx_unhold(rt, rt->chunk_size);
		return NULL;
	}
	return b;
}

/* Keep full chunk @c in memory rather than writing it, if there is room. */
static bool hold_try(struct pems_worker *w, struct pems_chunk *c)
{
	char *b = hold_alloc(w->rt);

	if (!b)
		return false;
	memcpy(b, c->buf, c->len);
	pool_put(w->rt, c->buf);
	c->buf = b;
	c->held = true;
	w->msg_held += c->len;
	return true;
}

static void chunk_release(struct pems_rt *rt, struct pems_chunk *c)
{
	if (!c->buf)
		return;
	if (c->held) {
		munmap(c->buf, rt->chunk_size);
		pems_ctx_unhold(rt, rt->chunk_size);
	} else {
		pool_put(rt, c->buf);
	}
	c->buf = NULL;
}

static void stream_free(struct pems_rt *rt, struct pems_stream *s)
{
	struct pems_chunk *c, *next;

	for (c = s->head; c; c = next) {
		next = c->next;
		chunk_release(rt, c);
		free(c);
	}
	s->head = s->tail = NULL;
}

void pems_msg_teardown(struct pems_rt *rt)
{
	size_t i, n = (size_t)rt->norigins * rt->vlocal;
	struct pems_slab *s;

	for (i = 0; rt->in && rt->in_next && i < n; i++) {
		stream_free(rt, &rt->in[i]);
		stream_free(rt, &rt->in_next[i]);
	}
	if (rt->workers)
		for (i = 0; i < rt->k; i++)
			if (rt->workers[i].out) {
				size_t d;

				for (d = 0; d < rt->v; d++)
					stream_free(rt, &rt->workers[i].out[d]);
			}
	pems_spill_report(rt);
	if (rt->workers)
		for (i = 0; i < rt->k; i++) {
			readers_free(&rt->workers[i]);
			pems_spill_worker_free(&rt->workers[i]);
		}
	pems_spill_worker_free(rt->tpw);
	rt->pool_free = NULL;	/* every chunk buffer is in a slab */
	while ((s = rt->slabs)) {
		rt->slabs = s->next;
		pems_io_free(s->buf, s->len);
		free(s);
	}
	free(rt->in);
	free(rt->in_next);
	free(rt->xchg_in);
	free(rt->xchg_in_next);
	free(rt->send_in);
	free(rt->send_in_next);
}

/* ---- writing ---- */

static void chunk_written(struct pems_worker *w, struct pems_ioop *op)
{
	struct pems_chunk *c = op->obj;

	if (op->req.res != (ssize_t)op->req.len)
		pems_fatal("writing %zu bytes of messages to %s: %s%s", op->req.len,
			   w->rt->tmpdir[w->id % w->rt->ndirs],
			   op->req.res < 0 ? strerror((int)-op->req.res) : "short write",
			   op->req.res == -ENOSPC ? "; free space or add --tmp dirs" : "");
	w->msg_written += op->req.len;
	c->writing = false;
	pool_put(w->rt, c->buf);
	c->buf = NULL;
}

/* Allocate the log ahead of the writes: O_DIRECT writes that extend a
 * file (or fill holes) take the inode lock exclusively and leave
 * io_uring's fast path, allocated ones do not; and a full disk shows up
 * here, with a clear message, rather than as a failed write. */
static void log_reserve(struct pems_worker *w, int par, uint64_t end)
{
	uint64_t step = 64u << 20;

	if (end <= w->msg_alloc[par])
		return;
	if (step < 16 * w->rt->chunk_size)
		step = 16 * w->rt->chunk_size;
	if (pems_io_fallocate(w->msg_fd[par], 0, w->msg_alloc[par], step)) {
		if (errno == ENOSPC)
			pems_fatal("message store in %s: no space left on device (%llu MiB in use); free space or add --tmp dirs",
				   w->rt->tmpdir[w->id % w->rt->ndirs],
				   (unsigned long long)(w->msg_alloc[par] >> 20));
		if (errno != EOPNOTSUPP && errno != ENOSYS)
			pems_fatal("message store in %s: allocating %llu MiB: %s",
				   w->rt->tmpdir[w->id % w->rt->ndirs],
				   (unsigned long long)(step >> 20), strerror(errno));
		w->msg_alloc[par] = UINT64_MAX;	/* not supported: just write */
		return;
	}
	w->msg_alloc[par] += step;
}

static void chunk_seal(struct pems_worker *w, struct pems_chunk *c)
{
	int par = (int)w->rt->wlog;
	int rc;

	size_t padded;

	/* invariant (6): compress into the worker's spare buffer, then copy
	 * the (smaller) frame back.  Swapping the two buffers would be
	 * cheaper but would move a slab piece into the worker and a
	 * standalone buffer into the slab pool, each later freed by the
	 * wrong owner. */
	if (pems_spill_active(PEMS_SPILL_MSG)) {
		struct pems_wspill *z = pems_wspill(w);

		if (!z->msgbuf && !(z->msgbuf = pems_io_alloc(w->rt->chunk_size)))
			pems_fatal("out of memory for compression buffers");
		if (pems_spill_pack(w, PEMS_SPILL_MSG, c->buf, c->len, z->msgbuf,
				    w->rt->chunk_size, &c->blk) == z->msgbuf)
			memcpy(c->buf, z->msgbuf, c->blk.stored);
	} else {
		pems_spill_sum(PEMS_SPILL_MSG, c->buf, c->len, &c->blk);
	}
	c->step = w->rt->superstep;
	c->writer = w->id;
	padded = (c->blk.stored + PEMS_PAGE - 1) & ~(size_t)(PEMS_PAGE - 1);

	log_reserve(w, par, w->msg_off[par] + padded);
	c->fd = w->msg_fd[par];
	c->off = w->msg_off[par];
	w->msg_off[par] += padded;
	c->writing = true;
	memset(&c->op, 0, sizeof(c->op));
	c->op.req.fd = c->fd;
	c->op.req.op = PEMS_IO_WRITE;
	c->op.req.buf = c->buf;
	c->op.req.len = padded;
	c->op.req.off = c->off;
	c->op.req.user = &c->op;
	c->op.done = chunk_written;
	c->op.obj = c;
	rc = pems_io_submit(w->io, &c->op.req);
	if (rc) {
		c->op.req.res = rc;
		chunk_written(w, &c->op);
	}
}

static struct pems_chunk *chunk_new(struct pems_worker *w, struct pems_stream *s)
{
	struct pems_chunk *c = calloc(1, sizeof(*c));

	if (!c)
		pems_fatal("out of memory for message chunks");
	c->buf = pool_get(w);
	c->off = PEMS_NONE;
	if (s->tail)
		s->tail->next = c;
	else
		s->head = c;
	s->tail = c;
	return c;
}

static bool is_local(const struct pems_rt *rt, unsigned pid)
{
	return pid >= rt->first && pid < rt->first + rt->vlocal;
}

static void stream_put(struct pems_worker *w, struct pems_stream *s, unsigned dst,
		       const void *p, size_t n)
{
	size_t cs = w->rt->chunk_size;
	const char *src = p;

	while (n) {
		struct pems_chunk *c = s->tail;
		size_t room;

		if (!c || c->len == cs || !c->buf || c->writing)
			c = chunk_new(w, s);
		room = cs - c->len;
		if (room > n)
			room = n;
		memcpy(c->buf + c->len, src, room);
		c->len += room;
		src += room;
		n -= room;
		if (c->len < cs)
			continue;
		if (is_local(w->rt, dst)) {
			if (!hold_try(w, c))
				chunk_seal(w, c);	/* invariants (3), (7) */
		} else {
			/* to another rank: the transport copies it out, the
			 * open chunk starts over (transport.c) */
			pems_tp_send_chunk(w, dst, c->buf, c->len);
			c->len = 0;
		}
	}
}

/* Transport: a chunk received for local stream @s, written to @w's log. */
void pems_msg_land(struct pems_worker *w, struct pems_stream *s, const char *data, size_t len)
{
	struct pems_chunk *c = chunk_new(w, s);

	memcpy(c->buf, data, len);
	c->len = len;
	if (len < w->rt->chunk_size || !hold_try(w, c))
		chunk_seal(w, c);
}

void pems_msg_append(struct pems_worker *w, unsigned dst, const struct pems_rec *r,
		     const void *p1, size_t n1, const void *p2, size_t n2)
{
	struct pems_stream *s = &w->out[dst];

	stream_put(w, s, dst, r, sizeof(*r));
	if (n1)
		stream_put(w, s, dst, p1, n1);
	if (n2)
		stream_put(w, s, dst, p2, n2);
}

/* End of a worker's superstep: wait for its writes (partial chunks stay
 * in memory, invariant 3). */
void pems_msg_flush(struct pems_worker *w)
{
	struct pems_rt *rt = w->rt;
	unsigned d;

	/* chunks for other ranks go out now, partial or not */
	for (d = 0; rt->nranks > 1 && d < rt->v; d++) {
		struct pems_stream *s = &w->out[d];

		if (is_local(rt, d) || !s->head)
			continue;
		if (s->tail->len)
			pems_tp_send_chunk(w, d, s->tail->buf, s->tail->len);
		stream_free(rt, s);
	}
	while (pems_io_inflight(w->io))
		pems_worker_reap(w, 1);
}

/* Invariant (4): pick the log the next superstep writes; it is dead. */
void pems_msg_next_log(struct pems_rt *rt)
{
	unsigned i, l;

	rt->rlog = rt->wlog;
	for (l = 0; l == rt->rlog || (int)l == rt->plog; l++)
		;
	rt->wlog = l;
	for (i = 0; i < rt->k; i++)
		rt->workers[i].msg_off[l] = 0;
	if (rt->tpw)
		rt->tpw->msg_off[l] = 0;
}

/* At the barrier: this superstep's streams become next superstep's input. */
void pems_msg_swap(struct pems_rt *rt)
{
	size_t i, n = (size_t)rt->norigins * rt->vlocal;
	unsigned d;
	void *t;

	for (i = 0; i < n; i++)
		stream_free(rt, &rt->in[i]);	/* leftovers of ended VPs */
	for (i = 0; i < rt->k; i++) {
		struct pems_worker *w = &rt->workers[i];
		size_t o = (size_t)rt->rank * rt->k + i;

		for (d = 0; d < rt->vlocal; d++) {
			rt->in_next[o * rt->vlocal + d] = w->out[rt->first + d];
			w->out[rt->first + d].head = w->out[rt->first + d].tail = NULL;
		}
	}
	pems_msg_next_log(rt);
	t = rt->in; rt->in = rt->in_next; rt->in_next = t;
	t = rt->xchg_in; rt->xchg_in = rt->xchg_in_next; rt->xchg_in_next = t;
	t = rt->send_in; rt->send_in = rt->send_in_next; rt->send_in_next = t;
	for (d = 0; d < rt->v; d++) {
		rt->xchg_in_next[d] = 0;
		rt->send_in_next[d] = 0;
	}
}

/* ---- reading: one reader per stream, with RA chunks read ahead ---- */

struct slot {
	struct pems_ioop op;
	struct pems_chunk *c;
	char *buf;
	bool busy, ready;
};

struct reader {
	struct pems_chunk *c;	/* chunk being consumed */
	struct pems_chunk *nextc;	/* the one after it */
	const char *data;
	size_t pos, len;
	struct pems_chunk *ahead;	/* next chunk to read ahead */
	struct slot slot[RA];
	int cur_slot;		/* slot holding c, or -1 when c is in memory */
	struct pems_rec hdr;
	bool have_hdr, eof;
	unsigned dst;		/* destination VP, for messages */
	char *raw;		/* a compressed chunk unpacked (invariant 6) */
};

static void slot_done(struct pems_worker *w, struct pems_ioop *op)
{
	struct slot *s = op->obj;

	if (op->req.res != (ssize_t)op->req.len) {
		char path[512];

		pems_fatal("reading the message chunk of superstep %llu from worker %u (%zu bytes at offset %llu of %s): %s",
			   (unsigned long long)s->c->step, s->c->writer, op->req.len,
			   (unsigned long long)op->req.off, pems_fd_path(op->req.fd, path, sizeof(path)),
			   op->req.res < 0 ? strerror((int)-op->req.res) : "short read (scratch file truncated?)");
	}
	w->msg_read += op->req.len;
	s->ready = true;
}

static void read_ahead(struct pems_worker *w, struct reader *r)
{
	int i;

	for (i = 0; i < (int)w->rt->ra && r->ahead; i++) {
		struct slot *s = &r->slot[i];

		if (s->busy)
			continue;
		while (r->ahead && r->ahead->buf)
			r->ahead = r->ahead->next;	/* in memory: nothing to read */
		if (!r->ahead)
			break;
		s->busy = true;
		s->ready = false;
		s->c = r->ahead;
		memset(&s->op, 0, sizeof(s->op));
		s->op.req.fd = s->c->fd;
		s->op.req.op = PEMS_IO_READ;
		s->op.req.buf = s->buf;
		s->op.req.len = (s->c->blk.stored + PEMS_PAGE - 1) & ~(size_t)(PEMS_PAGE - 1);
		s->op.req.off = s->c->off;
		s->op.req.user = &s->op;
		s->op.done = slot_done;
		s->op.obj = s;
		if (pems_io_submit(w->io, &s->op.req))
			pems_fatal("submitting a message read failed");
		r->ahead = r->ahead->next;
	}
}

/* Invariant (6): check the chunk just read (at @stored) and unpack it
 * into r->data; a mismatch ends the run naming the chunk. */
static void chunk_check(struct pems_worker *w, struct reader *r, const char *stored)
{
	struct pems_chunk *c = r->c;
	char path[512];
	int rc = pems_spill_unpack(w, stored, &c->blk, (void *)r->data, c->len);

	if (rc)
		pems_ckpt_corrupt(c->step);
	if (rc)
		pems_fatal("the message chunk of superstep %llu from worker %u to VP %u is corrupt: %s in %u bytes at offset %llu of %s; the scratch disk or memory is failing, or something else wrote into the file",
			   (unsigned long long)c->step, c->writer, r->dst, pems_spill_strerror(rc),
			   c->blk.stored, (unsigned long long)c->off,
			   pems_fd_path(c->fd, path, sizeof(path)));
}

/* Make r->data point at the next chunk; false at end of stream. */
static bool next_chunk(struct pems_worker *w, struct reader *r)
{
	int i;

	if (r->cur_slot >= 0)
		r->slot[r->cur_slot].busy = false;
	r->cur_slot = -1;
	r->c = r->nextc;
	if (r->c)
		r->nextc = r->c->next;
	if (!r->c) {
		r->eof = true;
		return false;
	}
	r->pos = 0;
	r->len = r->c->len;
	if (r->c->buf) {
		r->data = r->c->buf;
		return true;
	}
	read_ahead(w, r);
	for (i = 0; i < (int)w->rt->ra; i++)
		if (r->slot[i].busy && r->slot[i].c == r->c)
			break;
	if (i == (int)w->rt->ra)
		pems_fatal("message store: lost a chunk (internal error)");
	while (!r->slot[i].ready)
		pems_worker_reap(w, 1);
	r->cur_slot = i;
	r->data = r->slot[i].buf;
	if (r->c->blk.z) {
		if (!r->raw && !(r->raw = malloc(w->rt->chunk_size)))
			pems_fatal("out of memory for compression buffers");
		r->data = r->raw;
		r->slot[i].busy = false;	/* its bytes are unpacked below */
		r->cur_slot = -1;
	}
	chunk_check(w, r, r->slot[i].buf);
	read_ahead(w, r);
	return true;
}

/* Start reading a stream ahead; the first reader_peek() waits for it. */
static void reader_start(struct pems_worker *w, struct reader *r,
			 struct pems_stream *s, char *bounce)
{
	char *raw = r->raw;
	int i;

	memset(r, 0, sizeof(*r));
	r->raw = raw;		/* kept from stream to stream */
	r->cur_slot = -1;
	for (i = 0; i < (int)w->rt->ra; i++)
		r->slot[i].buf = bounce + (size_t)i * w->rt->chunk_size;
	r->ahead = s->head;
	r->nextc = s->head;
	read_ahead(w, r);
}

/* Copy @n bytes of the stream to @dst (NULL: skip them). */
static void reader_copy(struct pems_worker *w, struct reader *r, void *dst, size_t n)
{
	char *d = dst;

	while (n) {
		size_t take;

		if (r->pos == r->len && !next_chunk(w, r))
			pems_fatal("message store: stream ends inside a record (corrupt scratch data)");
		take = r->len - r->pos;
		if (take > n)
			take = n;
		if (d) {
			memcpy(d, r->data + r->pos, take);
			d += take;
		}
		r->pos += take;
		n -= take;
	}
}

static bool reader_peek(struct pems_worker *w, struct reader *r)
{
	if (r->have_hdr)
		return true;
	if (r->eof || (r->pos == r->len && !next_chunk(w, r)))
		return false;
	reader_copy(w, r, &r->hdr, sizeof(r->hdr));
	r->have_hdr = true;
	return true;
}

/* ---- delivery ---- */

static void *vp_alloc(struct pems_vp *vp, size_t n, const char *what)
{
	void *p = pems_heap_alloc(&vp->heap, n ? n : 1);

	if (!p)
		pems_fatal("VP %u needs %zu MiB more for %s in superstep %llu but its context (mu) is %zu MiB with %zu MiB in use; raise mu (--mem) or --procs",
			   vp->pid, (n + (1 << 20) - 1) >> 20, what,
			   (unsigned long long)pems_rt->superstep, pems_rt->mu >> 20,
			   vp->heap.brk >> 20);
	pems_heap_hint(p, n);
	return p;
}

static void deliver_put(struct pems_worker *w, struct reader *r, struct pems_vp *vp)
{
	struct pems_reg *reg = pems_reg_find_id(vp, r->hdr.a);

	if (!reg)
		pems_fatal("bsp_put: VP %u wrote to a registration VP %u does not have (registration order differs between VPs?)",
			   r->hdr.src, vp->pid);
	if (r->hdr.b + r->hdr.len > reg->size)
		pems_fatal("bsp_put: VP %u wrote bytes [%llu, %llu) of an area VP %u registered with %zu bytes",
			   r->hdr.src, (unsigned long long)r->hdr.b,
			   (unsigned long long)(r->hdr.b + r->hdr.len), vp->pid, reg->size);
	reader_copy(w, r, reg->addr + r->hdr.b, r->hdr.len);
}

static void deliver_send(struct pems_worker *w, struct reader *r, struct pems_vp *vp)
{
	uint64_t *h = (uint64_t *)(vp->q_buf + vp->q_len);
	size_t tag = r->hdr.a, pay = r->hdr.len - tag;

	h[0] = tag;
	h[1] = pay;
	reader_copy(w, r, vp->q_buf + vp->q_len + 16, r->hdr.len);
	vp->q_len += (16 + r->hdr.len + 15) & ~(size_t)15;
	vp->q_count++;
}

static void deliver_xchg(struct pems_worker *w, struct reader *r, struct pems_vp *vp,
			 size_t *cursor)
{
	struct pems_coll_wait *cw = &vp->xchg;
	char *dst;

	if (cw->kind == COLL_ALLTOALLV) {
		if (r->hdr.len > cw->acounts[r->hdr.src])
			pems_fatal("pems_alltoallv: VP %u sent %llu bytes to VP %u, which expects %zu (recvcounts[%u])",
				   r->hdr.src, (unsigned long long)r->hdr.len, vp->pid,
				   cw->acounts[r->hdr.src], r->hdr.src);
		dst = cw->abuf + cw->rdispls[r->hdr.src];
	} else if (cw->kind == COLL_EXCHANGE) {
		dst = (char *)*cw->recvbuf + *cursor;
		*cursor += r->hdr.len;
		if (cw->recvcounts)
			cw->recvcounts[r->hdr.src] += r->hdr.len;
	} else {
		pems_fatal("pems_alltoallv/pems_exchange: VP %u sent data to VP %u, which did not call it",
			   r->hdr.src, vp->pid);
	}
	reader_copy(w, r, dst, r->hdr.len);
}

static void deliver_one(struct pems_worker *w, struct reader *r, struct pems_vp *vp,
			size_t *cursor)
{
	switch (r->hdr.type) {
	case REC_PUT: deliver_put(w, r, vp); break;
	case REC_SEND: deliver_send(w, r, vp); break;
	case REC_XCHG: deliver_xchg(w, r, vp, cursor); break;
	default:
		pems_fatal("message store: bad record type %u (corrupt scratch data)", r->hdr.type);
	}
	r->have_hdr = false;
}

static void prepare_queues(struct pems_rt *rt, struct pems_vp *vp)
{
	size_t q = rt->send_in[vp->pid];

	vp->q_buf = NULL;
	vp->q_pos = vp->q_len = 0;
	vp->q_count = 0;
	if (q)
		vp->q_buf = vp_alloc(vp, q, "incoming bsp_send messages");
	if (vp->xchg.kind == COLL_EXCHANGE) {
		size_t n = rt->xchg_in[vp->pid];

		*vp->xchg.recvbuf = vp_alloc(vp, n, "pems_exchange data");
		*vp->xchg.recvbytes = n;
		if (vp->xchg.recvcounts)
			memset(vp->xchg.recvcounts, 0, rt->v * sizeof(size_t));
	}
}

/* The unpack buffers of @w's readers (the readers are freed by sched.c). */
static void readers_free(struct pems_worker *w)
{
	struct reader *r = w->readers;
	size_t j;

	for (j = 0; r && j < 2 * (size_t)w->rt->norigins; j++) {
		free(r[j].raw);
		r[j].raw = NULL;
	}
}

int pems_msg_worker_init(struct pems_worker *w)
{
	w->readers = calloc(2 * (size_t)w->rt->norigins, sizeof(struct reader));
	return w->readers ? 0 : -ENOMEM;
}

static struct reader *readers(struct pems_worker *w, int slot)
{
	return (struct reader *)w->readers + (size_t)slot * w->rt->norigins;
}

/* Start reading @vp's incoming chunks into reader set @slot while
 * another VP computes, so its delivery finds them in memory. */
void pems_msg_prefetch(struct pems_worker *w, struct pems_vp *vp, int slot)
{
	struct pems_rt *rt = w->rt;
	unsigned i;

	for (i = 0; i < rt->norigins; i++) {
		reader_start(w, &readers(w, slot)[i], &rt->in[(size_t)i * rt->vlocal + vp->lid],
			     w->bounce + ((size_t)slot * rt->norigins + i) * rt->ra * rt->chunk_size);
		readers(w, slot)[i].dst = vp->pid;
	}
	w->pref[slot] = vp;
}

/* Apply @vp's incoming records of the previous superstep (invariant 2). */
void pems_msg_deliver(struct pems_worker *w, struct pems_vp *vp, int slot)
{
	struct pems_rt *rt = w->rt;
	struct reader *rd = readers(w, slot), *r;
	unsigned i, k = rt->norigins, best;
	size_t cursor = 0;
	bool any = false;

	prepare_queues(rt, vp);
	for (i = 0; i < k; i++)
		if (rt->in[(size_t)i * rt->vlocal + vp->lid].head)
			any = true;
	if (!any) {
		w->pref[slot] = NULL;
		memset(&vp->xchg, 0, sizeof(vp->xchg));
		return;
	}
	if (w->pref[slot] != vp)
		pems_msg_prefetch(w, vp, slot);
	w->pref[slot] = NULL;
	for (;;) {
		best = k;
		for (i = 0; i < k; i++)
			if (reader_peek(w, &rd[i]) &&
			    (best == k || rd[i].hdr.src < rd[best].hdr.src))
				best = i;
		if (best == k)
			break;
		r = &rd[best];
		{
			uint32_t src = r->hdr.src;

			do
				deliver_one(w, r, vp, &cursor);
			while (reader_peek(w, r) && r->hdr.src == src);
		}
	}
	for (i = 0; i < k; i++) {
		struct pems_stream *s = &rt->in[(size_t)i * rt->vlocal + vp->lid];

		stream_free(rt, s);
	}
	memset(&vp->xchg, 0, sizeof(vp->xchg));
}

/* Read-ahead depth per origin stream: the deeper the fewer origins. */
unsigned pems_msg_ra(unsigned nranks)
{
	unsigned ra = RA / nranks;
	const char *e = getenv("PEMS_MSG_RA");

	if (e && atoi(e) > 0 && atoi(e) <= RA)
		ra = (unsigned)atoi(e);
	return ra ? ra : 1;
}

size_t pems_msg_bounce_size(unsigned k, unsigned nranks, size_t chunk)
{
	return 2 * (size_t)k * nranks * pems_msg_ra(nranks) * chunk;
}
