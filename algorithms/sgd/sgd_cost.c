/*
 * sgd_cost.c - sgd's supersteps as a cost model sees them
 * (pems_sgd_cost, pems_algorithms.h), for dense rows of 4-byte floats
 * (a 16-byte header, then label and dim features per row): one superstep
 * per H local steps (or one batch with --sync bsp) of every shard, each
 * reading its rows synchronously in blocks of at most 4 MiB, and the
 * last, which only ends the run.
 */
#include <errno.h>
#include <math.h>

#include "pems_algorithms.h"

int pems_sgd_cost(const struct pems_cost_job *j, struct pems_cost_plan *pl)
{
	double rowb = (1 + j->dim) * 4.0, n = floor((j->bytes - 16) / rowb);
	double per = j->sync_bsp ? j->batch : j->batch * j->local_steps;
	double spe, rows;
	struct pems_cost_step *s;

	if (!j->dim || !j->shards || !(per > 0) || !j->epochs || !j->p)
		return -EINVAL;
	spe = ceil(ceil(n / j->shards) / per);	/* supersteps per epoch */
	rows = n / spe;
	pl->n = 0;
	s = pems_cost_add(pl, "train");
	s->reps = spe * j->epochs;
	s->file_r = rows * rowb;
	s->reqs = j->shards * ceil(rows * rowb / j->shards / (4.0 * 1024 * 1024));
	pems_cost_work(s, PEMS_WORK_SGD, rows * j->dim, 0);
	s->coll = j->p * (j->dim + 1 + 7) * 8.0;	/* the model's all-reduce */
	pems_cost_add(pl, "end");
	return 0;
}

int pems_sgd_plan(struct pems_config *cfg, unsigned shards, const struct pems_plan_env *env)
{
	if (!shards)
		return -EINVAL;
	if (!cfg->procs)
		cfg->procs = shards;
	if (!cfg->threads)
		cfg->threads = env->cores ? env->cores : 1;
	if (!cfg->msg_mem)
		cfg->msg_mem = cfg->mem / 8 < (64u << 20) ? cfg->mem / 8 : (64u << 20);
	return 0;
}
