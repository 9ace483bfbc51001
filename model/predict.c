/*
 * predict.c - the cost model's equation: a job's supersteps (its
 * algorithm's cost plan, pems_algorithms.h) priced with one machine's
 * parameters on a layout of ranks over nodes (pems_model.h gives the
 * equation and what each term means).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

void pems_model_job_init(struct pems_model_job *j)
{
	memset(j, 0, sizeof(*j));
	j->mem = 1024 * MIB;
	j->cost.fmt = PEMS_FMT_U64;
	j->cost.groups = 1 << 20;
	j->cost.line = 33;
	j->cost.dim = 64;
	j->cost.epochs = 1;
	j->cost.batch = 64;
	j->cost.local_steps = 64;
	j->cost.shards = 16;
	j->compress = pems_current_config()->compress;
	j->compress_level = pems_current_config()->compress_level;
}

/* the configuration a run of @j would start from */
static void job_config(const struct pems_model_job *j, struct pems_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mem = (size_t)j->mem;
	cfg->procs = j->cost.v;
	cfg->threads = j->k;
	cfg->compress = j->compress;
	cfg->compress_level = j->compress_level;
}

static const char *const algo_names[] = { "sort", "aggregate", "sgd" };

const char *pems_model_algo_name(enum pems_model_algo a)
{
	return (unsigned)a < 3 ? algo_names[a] : "?";
}

int pems_model_algo_parse(const char *name, enum pems_model_algo *out)
{
	unsigned i;

	for (i = 0; name && i < 3; i++)
		if (!strcmp(name, algo_names[i])) {
			*out = (enum pems_model_algo)i;
			return 0;
		}
	return -EINVAL;
}

/* v, k and the chunk come from the algorithms' own planners, asked for
 * @cores cores and the job's p ranks: no copy of their formulas here */
int pems_model_plan(struct pems_model_job *j, unsigned cores)
{
	struct pems_plan_env env = { .cores = cores ? cores : 1, .nranks = j->cost.p, .quiet = true };
	struct pems_aggregate_job aj;
	struct pems_config cfg;
	int rc;

	job_config(j, &cfg);
	if (j->algo == PEMS_MODEL_SGD) {
		rc = pems_sgd_plan(&cfg, j->cost.shards, &env);
	} else if (j->algo == PEMS_MODEL_SORT) {
		rc = pems_sort_plan(&cfg, j->cost.fmt, (uint64_t)j->cost.bytes, &env);
	} else {
		memset(&aj, 0, sizeof(aj));
		aj.in_fmt = PEMS_AGG_IN_KV;
		aj.aggs[0] = pems_aggregate_builtin("count");
		aj.aggs[1] = pems_aggregate_builtin("sum");
		aj.naggs = 2;
		rc = pems_aggregate_plan(&cfg, &aj, (uint64_t)j->cost.bytes, &env);
	}
	if (rc)
		return -PEMS_E_BUDGET;
	j->cost.v = cfg.procs;
	j->k = cfg.threads;
	if (j->algo != PEMS_MODEL_SGD)
		j->mu = (double)cfg.mu;
	j->chunk = (double)cfg.msg_mem / (2.0 * j->k * j->cost.v + 8.0 * j->k);
	return 0;
}

/* core-seconds of @amount of work @kind at @at groups per VP.  The
 * "agg_at" lines measure the aggregate's merge and write supersteps
 * whole, compaction and the rows' walk included */
static double work_secs(const struct pems_model_params *m, const struct pems_model_job *j,
			enum pems_work kind, double amount, double at)
{
	unsigned rec100 = j->cost.fmt == PEMS_FMT_REC100;
	double s;

	switch (kind) {
	case PEMS_WORK_SORT_PART: return amount / m->sort_part[rec100];
	case PEMS_WORK_SORT_LOCAL: return amount / m->sort_local[rec100];
	case PEMS_WORK_COPY: return amount / m->copy_bw;
	case PEMS_WORK_AGG_HASH: return amount / m->agg_hash;
	case PEMS_WORK_AGG_RAW: return amount / m->agg_raw;
	case PEMS_WORK_AGG_MERGE:
		s = params_agg_at(m, at, false);
		return s > 0 ? amount * s : amount / m->agg_merge;
	case PEMS_WORK_AGG_COMPACT: return m->nagg ? 0 : amount / m->agg_compact;
	case PEMS_WORK_AGG_WRITE: return m->nagg ? 0 : amount / m->agg_write;
	case PEMS_WORK_AGG_FMT:
		s = params_agg_at(m, at, true);
		return s > 0 ? amount * s : amount / m->agg_fmt;
	case PEMS_WORK_SGD: return amount / m->sgd;
	}
	return 0;
}

/* Message bytes a step writes and the next reads back stay in memory up
 * to the room the contexts leave on every rank (pems/msg.c invariant 7):
 * neither written nor read.  The sort's and the aggregate's VPs keep a
 * few KiB between supersteps, so the messages get nearly all the room. */
static void apply_hold(const struct pems_model_job *j, struct pems_cost_plan *pl)
{
	const char *off = getenv("PEMS_MSG_HOLD");	/* as pems_config_init reads it */
	struct pems_config cfg;
	struct pems_budget b;
	double room;
	unsigned i;

	if (off && !strcmp(off, "0"))
		return;
	job_config(j, &cfg);
	cfg.msg_mem = (size_t)(j->chunk * (2.0 * j->k * j->cost.v + 8.0 * j->k));
	cfg.mu = (size_t)j->mu;
	pems_budget(&cfg, j->cost.p, 0, &b);
	room = j->cost.p * (double)b.hold;
	for (i = 0; i + 1 < pl->n; i++) {
		double h = dmin(dmin(pl->s[i].msg_w, pl->s[i + 1].msg_r), room);

		pl->s[i].msg_w -= h;
		pl->s[i + 1].msg_r -= h;
	}
}

void model_build(const struct pems_model_job *j, const struct pems_model_params *m,
		 struct model_plan *pl)
{
	int (*cost[])(const struct pems_cost_job *, struct pems_cost_plan *) = {
		pems_sort_cost, pems_aggregate_cost, pems_sgd_cost };
	unsigned i, w;

	memset(pl, 0, sizeof(*pl));
	if (cost[j->algo](&j->cost, &pl->c))
		pl->c.n = 0;
	for (i = 0; i < pl->c.n; i++) {
		const struct pems_cost_step *s = &pl->c.s[i];

		for (w = 0; w < s->nwork; w++) {
			double x = work_secs(m, j, s->work[w].kind, s->work[w].amount, s->work[w].at);

			pl->cpu[i] += x;
			if (s->work[w].kind == PEMS_WORK_AGG_HASH)
				pl->cpu_pre[i] += x;
		}
		pl->serial[i] = s->sort_keys > 1 ?
				m->qsort_ns * 1e-9 * s->sort_keys * log2(s->sort_keys) : 0;
	}
	if (j->algo != PEMS_MODEL_SGD)
		apply_hold(j, &pl->c);
}

/* ---- the layout: the algorithm's terms at a rank count ---- */

/* the name of the job's per-algorithm lines */
static const char *cpu_key(const struct pems_model_job *j)
{
	if (j->algo == PEMS_MODEL_SORT)
		return j->cost.fmt == PEMS_FMT_REC100 ? "sort-rec100" : "sort-u64";
	return j->algo == PEMS_MODEL_AGGREGATE ? "aggregate" : "sgd";
}

/* an aggregate whose load mostly hashes rows into states is
 * "aggregate-pre" (its calibration job: 10^3 groups) */
static const char *ovl_key(const struct pems_model_job *j, const struct pems_model_params *m)
{
	struct model_plan pl;

	if (j->algo != PEMS_MODEL_AGGREGATE)
		return cpu_key(j);
	model_build(j, m, &pl);
	return pl.c.n > 2 && pl.cpu_pre[2] > 0.5 * pl.cpu[2] ? "aggregate-pre" : "aggregate";
}

/* The terms of @j's algorithm measured at @pt ranks on this machine:
 * the CPU factors per superstep (the aggregate's hashed rows their own),
 * kscale, the overlap share, lbusy.  predict takes them at the job's p;
 * a projection at the ranks that stand for one node. */
static void layout_terms(struct pems_model_layout *L, const struct pems_model_params *m,
			 const struct pems_model_job *j, unsigned pt)
{
	const char *key = cpu_key(j);
	unsigned i;

	L->cpu_f = params_cpu(m, pt, key);
	for (i = 0; i < PEMS_MODEL_MAXSTEPS; i++)
		L->cpu_fs[i] = params_cpu_step(m, pt, key, i);
	L->cpu_pre = L->ks_pre = 0;
	if (j->algo == PEMS_MODEL_AGGREGATE) {	/* bench/model.sh: 10^3 groups under mpirun */
		L->cpu_pre = params_cpu_exact(m, pt, "aggregate-pre", 2);
		L->ks_pre = params_kscale(m, "aggregate-pre");
	}
	L->ks = params_kscale(m, key);
	L->has_ovl = true;
	L->ovl = params_overlap_alg(m, pt, ovl_key(j, m));
	L->lbusy = params_lbusy(m, pt);
}

int pems_model_layout_here(struct pems_model_layout *L, const struct pems_model_params *m,
			   const struct pems_model_job *j)
{
	unsigned p = j->cost.p;

	*L = (struct pems_model_layout){ .nodes = 1, .cores = m->cores, .load = m->load,
					 .poll = params_poll(m, p), .lat = m->lat,
					 .setup = params_setup(m, p), .fwrite_bw = m->fwrite_bw,
					 .read_bw = m->read_bw, .write_bw = m->write_bw,
					 .iops = m->iops };
	layout_terms(L, m, j, p);
	return pems_model_bsp(m, p, &L->l, &L->g);
}

/*
 * One rank per node, each with this machine's cores and disk (or the
 * net's per-node bandwidths) and no other load; g and l of the network;
 * the setup of the largest rank count calibrated here up to p; the
 * algorithm's terms at p = 1 -- one rank with its k workers, as here --
 * or with node_terms P and more than one node, at P ranks (their CPU
 * factors then hold the comm thread's polling and MPI's copies).  A
 * loop's barrier pays the network's l plus what lbusy measured above the
 * idle l at those ranks here.
 */
void pems_model_layout_nodes(struct pems_model_layout *L, const struct pems_model_params *m,
			     const struct pems_model_job *j, const struct pems_model_net *net,
			     double n)
{
	unsigned pt = n > 1 ? net->node_terms : 1;
	double l1 = 0, lp = 0, g;

	*L = (struct pems_model_layout){ .nodes = n, .cores = m->cores, .lat = m->lat,
					 .poll = m->poll,
					 .read_bw = net->read_bw ? net->read_bw : m->read_bw,
					 .write_bw = net->write_bw ? net->write_bw : m->write_bw,
					 .fwrite_bw = net->write_bw ? net->write_bw : m->fwrite_bw,
					 .iops = m->iops, .g = 8 / (net->gbit * 1e9),
					 .setup = params_setup_upto(m, j->cost.p) };
	pems_model_bsp(m, 1, &l1, &g);
	L->l = l1 + (n - 1) * net->msg_overhead + 6 * ceil(log2(n)) * net->latency;
	layout_terms(L, m, j, pt);
	L->lbusy = L->lbusy > 0 && !pems_model_bsp(m, pt, &lp, &g) ?
		   L->l + dmax(0, L->lbusy - lp) : 0;
}

void pems_model_project(const struct pems_model_job *base, const struct pems_model_params *m,
			const struct pems_model_net *net, double n, bool per_node,
			struct pems_model_projection *out)
{
	struct pems_model_job *j = &out->job;

	memset(out, 0, sizeof(*out));
	out->nodes = n;
	out->terms_p = n > 1 ? net->node_terms : 1;
	*j = *base;
	j->cost.p = (unsigned)n;
	if (j->algo == PEMS_MODEL_SGD && j->cost.shards < j->cost.p * (j->k ? j->k : m->cores))
		j->cost.shards = j->cost.p * (j->k ? j->k : (unsigned)m->cores);	/* v = S */
	j->cost.bytes = per_node ? base->cost.bytes * n : base->cost.bytes;
	if (pems_model_plan(j, (unsigned)m->cores))
		return;
	out->fits = true;
	pems_model_layout_nodes(&out->layout, m, j, net, n);
	pems_model_predict(j, m, &out->layout, &out->pred);
}
