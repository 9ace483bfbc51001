/*
 * cost.c - building the cost plans of the bundled algorithms (the plans
 * themselves live with each algorithm: sort/sort_cost.c, ...).
 */
#include <string.h>

#include "pems_algorithms.h"

struct pems_cost_step *pems_cost_add(struct pems_cost_plan *pl, const char *name)
{
	struct pems_cost_step *s;

	if (pl->n >= PEMS_COST_MAXSTEPS)
		return NULL;
	s = &pl->s[pl->n++];
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->reps = 1;
	return s;
}

void pems_cost_work(struct pems_cost_step *s, enum pems_work kind, double amount, double at)
{
	if (s->nwork >= PEMS_COST_MAXWORK)
		return;
	s->work[s->nwork].kind = kind;
	s->work[s->nwork].amount = amount;
	s->work[s->nwork++].at = at;
}
