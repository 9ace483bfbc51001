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

#include "runtime.h"

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

/* invariant: sched.c (2) -- nothing runs, every context is still */
void pems_gets_serve(struct pems_rt *rt)
{
	size_t n = 0, bytes = 0, i, at = 0;
	unsigned w;
	struct pems_get *all;

	free(rt->replies);
	free(rt->reply_data);
	rt->replies = NULL;
	rt->reply_data = NULL;
	rt->nreplies = 0;
	for (w = 0; w < rt->k; w++)
		n += rt->workers[w].ngets;
	if (!n)
		return;
	all = malloc(n * sizeof(*all));
	if (!all)
		pems_fatal("bsp_get: out of memory");
	for (w = 0; w < rt->k; w++) {
		struct pems_worker *wk = &rt->workers[w];

		for (i = 0; i < wk->ngets; i++, at++) {
			all[at] = wk->gets[i];
			all[at].seq = at;	/* workers run VPs in order: stable */
		}
		bytes += 0;
		wk->ngets = 0;
	}
	qsort(all, n, sizeof(*all), cmp_get);
	for (i = 0; i < n; i++)
		bytes += all[i].nbytes;
	rt->reply_data = malloc(bytes ? bytes : 1);
	if (!rt->reply_data)
		pems_fatal("bsp_get: out of memory for %zu bytes of replies", bytes);
	if (!rt->reply_first)
		rt->reply_first = calloc(rt->vlocal + 1, sizeof(size_t));
	for (i = 0, at = 0; i < n; i++) {
		struct pems_get *g = &all[i];
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
			if (!pems_ctx_read_bytes(rt, t, src, rt->reply_data + at, g->nbytes))
				pems_fatal("bsp_get: reading the context of VP %u failed", g->target);
		} else {
			memcpy(rt->reply_data + at, src, g->nbytes);
		}
		g->seq = at;
		at += g->nbytes;
	}
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
	pthread_mutex_unlock(&c->lock);
}

static void apply(struct pems_coll_state *c, void *inout, const void *in)
{
	if (c->uop)
		c->uop(inout, in, c->count);
	else
		combine(inout, in, c->count, c->type, c->op);
}

void pems_coll_barrier(struct pems_rt *rt)
{
	struct pems_coll_state *c = &rt->coll;
	size_t b = c->bytes;
	unsigned i;

	if (!c->calls)
		return;
	if (c->calls != (int)rt->vlocal)
		pems_fatal("%s: only %d of %u VPs called it in superstep %llu; every VP must",
			   c->name, c->calls, rt->vlocal, (unsigned long long)rt->superstep);
	c->calls = 0;
	switch (c->kind) {
	case COLL_REDUCE:
		grow(&c->result, &c->rcap, b + 1);
		memcpy(c->result, c->contrib, b);
		for (i = 1; i < rt->vlocal; i++)
			apply(c, c->result, c->contrib + (size_t)i * b);
		break;
	case COLL_BCAST:
		grow(&c->result, &c->rcap, b + 1);
		memcpy(c->result, c->contrib + (size_t)(c->root - rt->first) * b, b);
		break;
	case COLL_GATHER:
		grow(&c->result, &c->rcap, (size_t)rt->vlocal * b + 1);
		memcpy(c->result, c->contrib, (size_t)rt->vlocal * b);
		break;
	case COLL_EXSCAN:
		grow(&c->result, &c->rcap, (size_t)rt->vlocal * b + 1);
		if (c->uop)
			memset(c->result, 0, b);
		else
			identity(c->result, c->count, c->type, c->op);
		for (i = 1; i < rt->vlocal; i++) {
			char *o = c->result + (size_t)i * b;

			memcpy(o, o - b, b);
			if (i == 1 && c->uop)
				memcpy(o, c->contrib, b);
			else
				apply(c, o, c->contrib + (size_t)(i - 1) * b);
		}
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
		if (cw->out && !(vp->lid == 0 && c->uop))
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
