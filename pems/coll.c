/*
 * coll.c - serving bsp_get at the barrier, and rank-level collectives.
 *
 * Collectives combine in memory on the rank: each VP's contribution is
 * copied into a per-rank table when it calls, and the barrier combines
 * the table in VP order (so floating-point results do not depend on k or
 * timing) into one result that every VP receives at its next swap-in.
 * The cost is one pass over v contributions per rank, never a message
 * per VP pair.
 */
#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"
#include "ctx.h"
#include "coll.h"
#include "tp.h"

/* ---- gets ---- */

void pems_get_record(struct pems_worker *w, const struct pems_get *g)
{
	if (w->ngets == w->capgets) {
		size_t cap = w->capgets ? w->capgets * 2 : 64;
		struct pems_get *n = realloc(w->gets, cap * sizeof(*n));

		if (!n)
			pems_fatal("bsp_get: out of memory for get requests");
		w->gets = n;
		w->capgets = cap;
	}
	w->gets[w->ngets] = *g;
	w->gets[w->ngets].seq = w->ngets;
	w->ngets++;
}

static int cmp_get(const void *a, const void *b)
{
	const struct pems_get *x = a, *y = b;

	if (x->requester != y->requester)
		return x->requester < y->requester ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool in_slice(const struct pems_rt *rt, const struct pems_vp *vp, const char *p)
{
	(void)rt;
	return p >= vp->base && p < vp->base + rt->mu;
}

/* Copy @g's bytes from its (local) target into @dst. */
static void serve_one(struct pems_rt *rt, const struct pems_get *g, char *dst)
{
	struct pems_vp *t = &rt->vps[g->target - rt->first];
	struct pems_reg *reg = pems_reg_find_id(t, g->slot);
	char *src;

	if (!reg)
		pems_fatal("bsp_get: VP %u reads a registration VP %u does not have (registration order differs between VPs?)",
			   g->requester, g->target);
	if (g->offset + g->nbytes > reg->size)
		pems_fatal("bsp_get: VP %u reads bytes [%zu, %zu) of an area VP %u registered with %zu bytes",
			   g->requester, g->offset, g->offset + g->nbytes, g->target, reg->size);
	src = reg->addr + g->offset;
	if (in_slice(rt, t, src)) {
		if (!pems_ctx_read_bytes(rt, t, src, dst, g->nbytes))
			pems_fatal("bsp_get: reading the context of VP %u failed", g->target);
	} else {
		memcpy(dst, src, g->nbytes);
	}
}

static bool local_pid(const struct pems_rt *rt, unsigned pid)
{
	return pid >= rt->first && pid < rt->first + rt->vlocal;
}

/*
 * Gets whose target lives on another rank: send the requests to the
 * owners, serve theirs, send the bytes back (two personalised exchanges
 * per superstep with gets, whatever their number).  Fills data of our
 * remote requests at their offsets (g->seq) in rt->reply_data.
 */
static void serve_remote(struct pems_rt *rt, struct pems_get *all, size_t n)
{
	unsigned p = rt->nranks, r;
	size_t *scount = calloc(p, sizeof(size_t)), *rcount = calloc(p, sizeof(size_t));
	size_t *dcount = calloc(p, sizeof(size_t)), *bcount = calloc(p, sizeof(size_t));
	size_t i, nin, at, total = 0;
	struct pems_get *sendreq = malloc((n + 1) * sizeof(*sendreq)), *in;
	char *data, *back, *pos;

	/* requests, grouped by owner rank (stable: issue order kept) */
	for (r = 0, at = 0; r < p; r++)
		for (i = 0; i < n; i++)
			if (!local_pid(rt, all[i].target) && pems_owner(rt, all[i].target) == r) {
				sendreq[at++] = all[i];
				scount[r] += sizeof(struct pems_get);
			}
	in = (struct pems_get *)pems_tp_alltoallv(rt, (char *)sendreq, scount, rcount);
	for (r = 0, nin = 0; r < p; r++)
		nin += rcount[r] / sizeof(struct pems_get);
	for (i = 0; i < nin; i++)
		total += in[i].nbytes;
	data = malloc(total + 1);
	for (r = 0, i = 0, pos = data; r < p; r++) {
		size_t k, m = rcount[r] / sizeof(struct pems_get);

		for (k = 0; k < m; k++, i++) {
			serve_one(rt, &in[i], pos);
			pos += in[i].nbytes;
			dcount[r] += in[i].nbytes;
		}
	}
	back = pems_tp_alltoallv(rt, data, dcount, bcount);
	/* the answers come back per rank in the order we asked */
	for (r = 0, pos = back; r < p; r++)
		for (i = 0; i < n; i++)
			if (!local_pid(rt, all[i].target) && pems_owner(rt, all[i].target) == r) {
				memcpy(rt->reply_data + all[i].seq, pos, all[i].nbytes);
				pos += all[i].nbytes;
			}
	free(back);
	free(data);
	free(in);
	free(sendreq);
	free(scount);
	free(rcount);
	free(dcount);
	free(bcount);
}

/* invariant: sched.c (2) -- nothing runs, every context is still */
void pems_gets_serve(struct pems_rt *rt)
{
	size_t n = 0, bytes = 0, i, at = 0;
	uint64_t any;
	unsigned w;
	struct pems_get *all;

	free(rt->replies);
	free(rt->reply_data);
	rt->replies = NULL;
	rt->reply_data = NULL;
	rt->nreplies = 0;
	for (w = 0; w < rt->k; w++)
		n += rt->workers[w].ngets;
	any = n;
	pems_tp_sum_u64(rt, &any, 1);	/* every rank joins the exchange */
	if (!any)
		return;
	all = malloc((n + 1) * sizeof(*all));
	if (!all)
		pems_fatal("bsp_get: out of memory");
	for (w = 0; w < rt->k; w++) {
		struct pems_worker *wk = &rt->workers[w];

		for (i = 0; i < wk->ngets; i++, at++) {
			all[at] = wk->gets[i];
			all[at].seq = at;	/* workers run VPs in order: stable */
		}
		wk->ngets = 0;
	}
	qsort(all, n, sizeof(*all), cmp_get);
	for (i = 0; i < n; i++) {
		all[i].seq = bytes;	/* from now on: offset of the data */
		bytes += all[i].nbytes;
	}
	rt->reply_data = malloc(bytes ? bytes : 1);
	if (!rt->reply_data)
		pems_fatal("bsp_get: out of memory for %zu bytes of replies", bytes);
	if (!rt->reply_first)
		rt->reply_first = calloc(rt->vlocal + 1, sizeof(size_t));
	for (i = 0; i < n; i++)
		if (local_pid(rt, all[i].target))
			serve_one(rt, &all[i], rt->reply_data + all[i].seq);
	if (rt->nranks > 1)
		serve_remote(rt, all, n);
	/* index replies by requester */
	memset(rt->reply_first, 0, (rt->vlocal + 1) * sizeof(size_t));
	for (i = 0; i < n; i++)
		rt->reply_first[all[i].requester - rt->first + 1]++;
	for (i = 0; i < rt->vlocal; i++)
		rt->reply_first[i + 1] += rt->reply_first[i];
	rt->replies = all;
	rt->nreplies = n;
}

void pems_gets_deliver(struct pems_rt *rt, struct pems_vp *vp)
{
	size_t i;

	if (!rt->nreplies)
		return;
	for (i = rt->reply_first[vp->lid]; i < rt->reply_first[vp->lid + 1]; i++) {
		struct pems_get *g = &rt->replies[i];

		memcpy(g->dst, rt->reply_data + g->seq, g->nbytes);
	}
}

/* ---- collectives ---- */

size_t pems_type_size(enum pems_type t)
{
	switch (t) {
	case PEMS_INT32: case PEMS_FLOAT: return 4;
	case PEMS_INT64: case PEMS_UINT64: case PEMS_DOUBLE: return 8;
	default: return 1;
	}
}

#define COMBINE(T)							\
	do {								\
		T *x = (T *)inout;					\
		const T *y = (const T *)in;				\
		size_t i;						\
		for (i = 0; i < count; i++)				\
			switch (op) {					\
			case PEMS_SUM: x[i] = x[i] + y[i]; break;	\
			case PEMS_PROD: x[i] = x[i] * y[i]; break;	\
			case PEMS_MIN: if (y[i] < x[i]) x[i] = y[i]; break; \
			case PEMS_MAX: if (y[i] > x[i]) x[i] = y[i]; break; \
			}						\
	} while (0)

static void combine(void *inout, const void *in, size_t count, enum pems_type type,
		    enum pems_op op)
{
	switch (type) {
	case PEMS_INT32: COMBINE(int32_t); break;
	case PEMS_INT64: COMBINE(int64_t); break;
	case PEMS_UINT64: COMBINE(uint64_t); break;
	case PEMS_FLOAT: COMBINE(float); break;
	case PEMS_DOUBLE: COMBINE(double); break;
	case PEMS_BYTE: COMBINE(uint8_t); break;
	}
}

#define IDENT(T, MINV, MAXV)						\
	do {								\
		T *x = (T *)out, v = op == PEMS_SUM ? (T)0 :		\
			op == PEMS_PROD ? (T)1 : op == PEMS_MIN ? MAXV : MINV; \
		size_t i;						\
		for (i = 0; i < count; i++)				\
			x[i] = v;					\
	} while (0)

static void identity(void *out, size_t count, enum pems_type type, enum pems_op op)
{
	switch (type) {
	case PEMS_INT32: IDENT(int32_t, INT32_MIN, INT32_MAX); break;
	case PEMS_INT64: IDENT(int64_t, INT64_MIN, INT64_MAX); break;
	case PEMS_UINT64: IDENT(uint64_t, 0, UINT64_MAX); break;
	case PEMS_FLOAT: IDENT(float, -FLT_MAX, FLT_MAX); break;
	case PEMS_DOUBLE: IDENT(double, -DBL_MAX, DBL_MAX); break;
	case PEMS_BYTE: IDENT(uint8_t, 0, UINT8_MAX); break;
	}
}

static void *grow(char **buf, size_t *cap, size_t need)
{
	if (need > *cap) {
		char *n = realloc(*buf, need);

		if (!n)
			pems_fatal("out of memory for a collective (%zu bytes)", need);
		*buf = n;
		*cap = need;
	}
	return *buf;
}

void pems_coll_contribute(struct pems_vp *vp, const char *name, enum pems_coll_kind kind,
			  const void *in, size_t count, size_t elem, enum pems_type type,
			  enum pems_op op, pems_user_op uop, unsigned root)
{
	struct pems_rt *rt = pems_rt;
	struct pems_coll_state *c = &rt->coll;
	size_t bytes = count * elem;

	pthread_mutex_lock(&c->lock);
	if (!c->calls) {
		c->kind = kind;
		c->name = name;
		c->count = count;
		c->elem = elem;
		c->bytes = bytes;
		c->type = type;
		c->op = op;
		c->uop = uop;
		c->root = root;
		grow(&c->contrib, &c->cap, (size_t)rt->vlocal * bytes + 1);
	} else if (c->kind != kind || c->bytes != bytes || c->root != root ||
		   c->type != type || c->op != op || c->uop != uop) {
		const char *other = c->name;

		pthread_mutex_unlock(&c->lock);
		pems_fatal("%s: VP %u's call in superstep %llu does not match %s of another VP (same function, sizes, type, op and root on every VP)",
			   name, vp->pid, (unsigned long long)rt->superstep, other);
	}
	if (in && bytes)
		memcpy(c->contrib + (size_t)vp->lid * bytes, in, bytes);
	c->calls++;
	vp->coll.user_op = uop != NULL;
	pthread_mutex_unlock(&c->lock);
}

static void apply(struct pems_coll_state *c, void *inout, const void *in)
{
	if (c->uop)
		c->uop(inout, in, c->count);
	else
		combine(inout, in, c->count, c->type, c->op);
}

/* Combine the local contributions 0..n-1 in VP order into @out. */
static void combine_local(struct pems_coll_state *c, char *out, unsigned n)
{
	unsigned i;

	memcpy(out, c->contrib, c->bytes);
	for (i = 1; i < n; i++)
		apply(c, out, c->contrib + (size_t)i * c->bytes);
}

struct coll_sig {
	int32_t kind;
	uint32_t root;
	uint64_t bytes;
};

/* Every rank must be in the same collective (ranks without VPs calling
 * it have kind 0 and are caught by the count check). */
static void check_ranks(struct pems_rt *rt, struct pems_coll_state *c)
{
	struct coll_sig me = { c->kind, c->root, c->bytes }, *all;
	unsigned r;

	if (rt->nranks == 1)
		return;
	all = calloc(rt->nranks, sizeof(*all));
	pems_tp_allgather(rt, &me, all, sizeof(me));
	for (r = 0; r < rt->nranks; r++)
		if (all[r].kind != me.kind || all[r].bytes != me.bytes || all[r].root != me.root)
			pems_fatal("%s: ranks %u and %u disagree on the collective in superstep %llu (same function, sizes and root on every VP)",
				   c->name ? c->name : "collective", rt->rank, r,
				   (unsigned long long)rt->superstep);
	free(all);
}

static void reduce_ranks(struct pems_rt *rt, struct pems_coll_state *c)
{
	size_t b = c->bytes;
	char *parts;
	unsigned r;

	grow(&c->result, &c->rcap, b + 1);
	combine_local(c, c->result, rt->vlocal);
	if (rt->nranks == 1)
		return;
	parts = malloc((size_t)rt->nranks * b + 1);
	pems_tp_allgather(rt, c->result, parts, b);
	memcpy(c->result, parts, b);
	for (r = 1; r < rt->nranks; r++)	/* rank order = VP order */
		apply(c, c->result, parts + (size_t)r * b);
	free(parts);
}

static void exscan_ranks(struct pems_rt *rt, struct pems_coll_state *c)
{
	size_t b = c->bytes;
	char *tot = malloc(b + 1), *parts = NULL, *o;
	bool have = false;	/* a prefix exists (else identity / none) */
	unsigned i, r;

	grow(&c->result, &c->rcap, (size_t)rt->vlocal * b + 1);
	if (c->uop)
		memset(c->result, 0, b);
	else
		identity(c->result, c->count, c->type, c->op);
	if (rt->nranks > 1) {
		parts = malloc((size_t)rt->nranks * b + 1);
		combine_local(c, tot, rt->vlocal);
		pems_tp_allgather(rt, tot, parts, b);
		for (r = 0; r < rt->rank; r++) {
			if (have)
				apply(c, c->result, parts + (size_t)r * b);
			else
				memcpy(c->result, parts, b);
			have = true;
		}
	}
	for (i = 1; i < rt->vlocal; i++) {
		o = c->result + (size_t)i * b;
		memcpy(o, o - b, b);
		if (have)
			apply(c, o, c->contrib + (size_t)(i - 1) * b);
		else
			memcpy(o, c->contrib, b);
		have = true;
	}
	free(parts);
	free(tot);
}

void pems_coll_barrier(struct pems_rt *rt)
{
	struct pems_coll_state *c = &rt->coll;
	size_t b = c->bytes;
	uint64_t calls = (uint64_t)c->calls;
	unsigned owner;

	pems_tp_sum_u64(rt, &calls, 1);
	if (!calls)
		return;
	if (calls != rt->v)
		pems_fatal("%s: only %llu of %u VPs called it in superstep %llu; every VP must",
			   c->name ? c->name : "collective", (unsigned long long)calls, rt->v,
			   (unsigned long long)rt->superstep);
	check_ranks(rt, c);
	c->calls = 0;
	switch (c->kind) {
	case COLL_REDUCE:
		reduce_ranks(rt, c);
		break;
	case COLL_BCAST:
		grow(&c->result, &c->rcap, b + 1);
		owner = pems_owner(rt, c->root);
		if (owner == rt->rank)
			memcpy(c->result, c->contrib + (size_t)(c->root - rt->first) * b, b);
		pems_tp_bcast(rt, c->result, b, owner);
		break;
	case COLL_GATHER:
		grow(&c->result, &c->rcap, (size_t)rt->v * b + 1);
		pems_tp_allgatherv(rt, c->contrib, (size_t)rt->vlocal * b, c->result);
		break;
	case COLL_EXSCAN:
		exscan_ranks(rt, c);
		break;
	default:
		break;	/* alltoallv / exchange travel as messages */
	}
}

void pems_coll_deliver(struct pems_rt *rt, struct pems_vp *vp)
{
	struct pems_coll_state *c = &rt->coll;
	struct pems_coll_wait *cw = &vp->coll;

	switch (cw->kind) {
	case COLL_REDUCE:
	case COLL_BCAST:
		if (cw->out)
			memmove(cw->out, c->result, cw->bytes);
		break;
	case COLL_GATHER:
		if (cw->out)
			memcpy(cw->out, c->result, cw->bytes);
		break;
	case COLL_EXSCAN:
		if (cw->out && !(vp->lid == 0 && cw->user_op))
			memcpy(cw->out, c->result + (size_t)vp->lid * cw->bytes, cw->bytes);
		break;
	default:
		break;
	}
	memset(cw, 0, sizeof(*cw));
}

void pems_coll_free(struct pems_rt *rt)
{
	free(rt->coll.contrib);
	free(rt->coll.result);
	free(rt->replies);
	free(rt->reply_data);
	free(rt->reply_first);
}
