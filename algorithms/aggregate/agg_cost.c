/*
 * agg_cost.c - the aggregate's supersteps as a cost model sees them
 * (pems_aggregate_cost, pems_algorithms.h), for kv input and count,sum,
 * from aggregate.c's and groupby.c's own constants
 * (pems_aggregate_shape): sample, plan, load+partition, merge, write.
 */
#include <errno.h>
#include <math.h>

#include "pems_algorithms.h"

/*
 * What one VP of @nvp rows over @G uniform keys sends (groupby.c
 * preagg_core): its table holds a->table entries; a fill that holds
 * fewer than a->poor rows per entry makes the next a->pass_fills fills'
 * worth of rows go raw; a flushed state of count <= a->raw_count goes out
 * as its rows.  Returns the raw rows and states, per VP.
 */
static void agg_send(const struct pems_aggregate_shape *a, double nvp, double G, double *raw,
		     double *states)
{
	double lim = a->table, d = G * -expm1(-nvp / G), fill, cnt, cyc, r, st;

	if (d <= lim) {			/* the table holds every key */
		cnt = nvp / fmax(d, 1);
		*raw = cnt > a->raw_count ? 0 : nvp;
		*states = cnt > a->raw_count ? d : 0;
		return;
	}
	fill = -G * log1p(-lim / G);	/* rows until lim keys */
	cnt = fill / lim;
	r = cnt > a->raw_count ? 0 : fill;
	st = cnt > a->raw_count ? lim : 0;
	cyc = fill;
	if (fill < a->poor * lim) {	/* poor fill: rows pass raw */
		cyc += a->pass_fills * lim;
		r += a->pass_fills * lim;
	}
	*raw = r * nvp / cyc;
	*states = st * nvp / cyc;
}

/* The bytes of the exchange: rows and states sent, the part headers. */
struct agg_flow {
	double n, gd, raw, parts, msg, park;
	bool compact;
};

static void agg_flow(const struct pems_aggregate_shape *a, const struct pems_cost_job *j,
		     struct agg_flow *f)
{
	double v = j->v, G = j->groups, row = (double)a->row, state = (double)a->state, blob;

	f->n = j->bytes / row;
	f->gd = G * -expm1(-f->n / G);		/* distinct keys met */
	agg_send(a, f->n / v, G, &f->raw, &f->parts);
	f->raw *= v;
	f->parts *= v;
	blob = f->raw * row + f->parts * state;
	f->msg = blob + v * v * (double)a->chunk_hdr;
	f->compact = f->gd * state * a->compact <= blob;	/* groupby.c compact() */
	f->park = f->compact ? f->gd * state : blob;
}

int pems_aggregate_cost(const struct pems_cost_job *j, struct pems_cost_plan *pl)
{
	struct pems_aggregate_shape a;
	double v = j->v, p = j->p, nvp;
	struct pems_cost_step *s;
	struct agg_flow f;

	if (!j->v || !j->p || !(j->groups >= 1))
		return -EINVAL;
	pems_aggregate_shape(&a);
	agg_flow(&a, j, &f);
	nvp = f.n / v;
	pl->n = 0;
	s = pems_cost_add(pl, "sample");
	s->rand_r = v * fmin(a.sample_pages, nvp);
	s = pems_cost_add(pl, "plan");
	s->sort_keys = v * fmin(a.samples, nvp);
	s->coll = v * (double)a.sample_msg + v * 16;	/* gather; broadcast of the plan */
	s = pems_cost_add(pl, "load+partition");
	s->file_r = j->bytes;	/* aggregate.c load_kv: 4 MiB pieces, 4 in flight */
	s->file_async = true;
	s->msg_w = f.msg;
	s->xfer = f.msg * (p - 1) / p;
	pems_cost_work(s, PEMS_WORK_AGG_HASH, f.n - f.raw, 0);
	pems_cost_work(s, PEMS_WORK_AGG_RAW, f.raw, 0);
	s = pems_cost_add(pl, "merge");
	s->msg_r = f.msg;
	s->msg_w = f.park;
	pems_cost_work(s, PEMS_WORK_AGG_MERGE, f.raw + f.parts, f.gd / v);
	pems_cost_work(s, PEMS_WORK_AGG_COMPACT, f.compact ? f.gd : 0, f.gd / v);
	s->coll = v * (double)a.info;
	s = pems_cost_add(pl, "write");
	s->msg_r = f.park;
	s->file_w = f.gd * j->line;
	s->reqs = v;	/* the 1 MiB output blocks are bandwidth (lat is a 4 KiB read's) */
	pems_cost_work(s, PEMS_WORK_AGG_WRITE, f.compact ? 0 : f.raw + f.parts, f.gd / v);
	pems_cost_work(s, PEMS_WORK_AGG_FMT, f.gd, f.gd / v);
	return 0;
}
