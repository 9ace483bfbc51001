/*
 * step.c - the time of one superstep and of a whole job (the equation in
 * pems_model.h).
 */
#include <math.h>
#include <string.h>

#include "model_internal.h"

/* the CPU factor of p ranks for superstep @i (1: none measured) */
static double step_cpu_f(const struct pems_model_layout *L, unsigned i)
{
	if (i < PEMS_MODEL_MAXSTEPS && L->cpu_fs[i] > 0)
		return L->cpu_fs[i];
	return L->cpu_f > 0 ? L->cpu_f : 1;
}

/* core-seconds of superstep @i at the layout's p: each part of its work
 * times its CPU factor (the aggregate's hashed rows their own) */
static double step_core_s(const struct pems_model_layout *L, const struct model_plan *pl,
			  unsigned i)
{
	double f = step_cpu_f(L, i), k = L->ks > 0 ? L->ks : 1, kp = L->ks_pre > 0 ? L->ks_pre : 1;

	return (pl->cpu[i] - pl->cpu_pre[i]) * f * k +
	       pl->cpu_pre[i] * (L->cpu_pre > 0 ? L->cpu_pre : f) * kp;
}

/*
 * What the expected max of two times exceeds the max of their means by,
 * each normal with standard deviation @s times its mean, independent
 * (Clark's formula: E max(X, Y) = a Phi(z) + b Phi(-z) + th phi(z), th
 * the deviation of X - Y, z = (a - b) / th).  0 when @s is 0 or a term
 * is.  With s = 0.3 it adds 17 % of the greater when the two are equal,
 * 11.6 % when the lesser is 0.9 of it, 5.7 % at 0.75, 1 % at 0.5: it
 * matters only where the two are close, where a fixed share of the
 * lesser (the overlap) cannot follow the measured supersteps.
 */
static double emax_excess(double a, double b, double s)
{
	double th = s * hypot(a, b), z;

	if (!(th > 0) || !(a > 0) || !(b > 0))
		return 0;
	z = (a - b) / th;
	return a * 0.5 * erfc(-z / M_SQRT2) + b * 0.5 * erfc(z / M_SQRT2) +
	       th * exp(-0.5 * z * z) / sqrt(2 * M_PI) - dmax(a, b);
}

/* c_eff: the ranks' comm threads poll (p > 1); the workers share the
 * rest with the other load's threads (a fair scheduler: t of t + load).
 * A measured CPU factor holds the polling in the work instead. */
static double cores_for(const struct pems_model_layout *L, const struct pems_model_job *j)
{
	double t = (double)j->cost.p / L->nodes * j->k;
	double poll = j->cost.p > 1 && !(L->cpu_f > 0) ? j->cost.p / L->nodes * L->poll : 0;
	double free = dmax(0.1 * L->cores, L->cores - poll);

	return dmin(t, free * t / (t + L->load));
}

/* the terms of superstep @s on the busiest node; @nn: the nodes the work
 * spreads over (its ranks host ceil(v/p) VPs each) */
static void step_terms(const struct pems_cost_step *s, double cpu, double nn,
		       const struct pems_model_job *j, const struct pems_model_layout *L,
		       struct pems_model_time *o)
{
	double t = (double)j->cost.p / L->nodes * j->k;
	double file = (s->file_r / L->read_bw +
		       s->file_w / (s->file_alloc ? L->write_bw : L->fwrite_bw)) / nn;
	double mr = dmax(s->msg_r / L->read_bw, s->msg_r / j->chunk / L->iops) / nn;

	cpu /= nn;
	o->disk = file + mr + s->msg_w / nn / L->write_bw + s->rand_r / nn / L->iops;
	o->cpu = cpu / cores_for(L, j);
	o->chain = ((s->file_async ? 0 : file) + s->reqs * L->lat / nn + cpu) / t;
	/* crossing bytes travel while the workers compute: each rank's comm
	 * thread ships full chunks as they fill (transport.c), so the
	 * crossing is one more resource in the max, not a term after it;
	 * the collectives are combined at the barrier, after it */
	o->xfer = s->xfer / j->cost.p * L->g;
	o->comm = s->coll * L->g;
}

void model_step_time(const struct model_plan *pl, unsigned i, const struct pems_model_job *j,
		     const struct pems_model_params *m, const struct pems_model_layout *L,
		     struct pems_model_time *o)
{
	const struct pems_cost_step *s = &pl->c.s[i];
	double rpn = (double)j->cost.p / L->nodes;
	double nn = 1 / dmin(1, rpn * ceil((double)j->cost.v / j->cost.p) / j->cost.v);
	double comp;

	o->name = s->name;
	o->reps = s->reps;
	o->cpu_f = step_cpu_f(L, i);
	step_terms(s, step_core_s(L, pl, i) + j->cost.v * m->vp_secs, nn, j, L, o);
	comp = dmax(o->cpu, o->chain);
	o->t = dmax(dmax(o->disk, o->xfer), comp);
	o->bound = o->t == o->disk ? "disk" : o->t == o->cpu ? "cpu" :
		   o->t == o->chain ? "chain" : "net";
	/* neither term is known exactly (drift of the CPU rate, of the
	 * disk): the superstep takes the expected max of the two, which
	 * exceeds the max of the expected terms most when they are equal */
	o->t += emax_excess(o->disk, comp, m->spread);
	/* the overlap is not perfect: a share of the lesser of the disk and
	 * the compute (calibrated on the kernel runs) adds to the greater */
	o->t += (L->has_ovl ? L->ovl : m->overlap) * dmin(o->disk, comp);
	/* a loop of identical supersteps (sgd) pays the latency measured
	 * under busy workers when calibrated, else the idle l */
	o->t += o->comm + pl->serial[i] + (s->reps > 1 && L->lbusy > 0 ? L->lbusy : L->l);
}

/* The fsync that ends every run waits until the disk holds what the run
 * wrote with O_DIRECT (a virtual disk's cache), node by node. */
static double flush_secs(const struct pems_cost_plan *pl, const struct pems_model_job *j,
			 const struct pems_model_params *m, const struct pems_model_layout *L)
{
	double w = 0, v = j->cost.v;
	unsigned i;

	if (!(m->flush_bw > 0))
		return 0;
	for (i = 0; i < pl->n; i++)
		w += (pl->s[i].msg_w + pl->s[i].file_w) * pl->s[i].reps;
	return w * dmin(1, (double)j->cost.p / L->nodes * ceil(v / j->cost.p) / v) / m->flush_bw;
}

void pems_model_predict(const struct pems_model_job *j, const struct pems_model_params *m,
			const struct pems_model_layout *L, struct pems_model_prediction *out)
{
	struct model_plan pl;
	unsigned i, first = 0;

	memset(out, 0, sizeof(*out));
	model_build(j, m, &pl);
	out->setup = L->setup + flush_secs(&pl.c, j, m, L);
	out->total = out->setup;
	out->share = cores_for(L, j);
	for (i = 0; i < pl.c.n; i++) {
		const struct pems_cost_step *s = &pl.c.s[i];
		struct pems_model_time *t = &out->s[i];

		out->work_cpu += step_core_s(L, &pl, i) * s->reps;
		out->work_io += (s->file_r + s->file_w + s->msg_r + s->msg_w + s->rand_r * 4096) *
				s->reps;
		model_step_time(&pl, i, j, m, L, t);
		t->first = first;
		out->total += t->t * s->reps;
		first += (unsigned)s->reps;
	}
	out->n = pl.c.n;
}
