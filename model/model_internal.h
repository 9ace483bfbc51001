/*
 * model_internal.h - what the files of model/ share beyond pems_model.h:
 * the parameter look-ups (params.c) and the pricing of one superstep
 * (predict.c), which calibrate.c also uses to fit the overlap.
 */
#ifndef PEMS_MODEL_INTERNAL_H
#define PEMS_MODEL_INTERNAL_H

#include "pems_model.h"

#define MIB (1024.0 * 1024.0)

static inline double dmin(double a, double b) { return a < b ? a : b; }
static inline double dmax(double a, double b) { return a > b ? a : b; }

/* ---- params.c: each term at p ranks, falling back as the file says ---- */

/* seconds outside the supersteps at p ranks ("setup_mpi P S", else "setup") */
double params_setup(const struct pems_model_params *m, unsigned p);
/* the same for the largest calibrated rank count not above @p */
double params_setup_upto(const struct pems_model_params *m, unsigned p);
/* cores a rank's comm thread takes from busy workers ("poll_p", else "poll") */
double params_poll(const struct pems_model_params *m, unsigned p);
/* CPU factor of p ranks for @algo ("cpu_alg", else "cpu_p"; 0: none) */
double params_cpu(const struct pems_model_params *m, unsigned p, const char *algo);
/* "cpu_step ALGO STEP P", else "cpu_alg ALGO P" for exactly @algo; 0: none */
double params_cpu_exact(const struct pems_model_params *m, unsigned p, const char *algo,
			unsigned step);
/* params_cpu_exact, else params_cpu */
double params_cpu_step(const struct pems_model_params *m, unsigned p, const char *algo,
		       unsigned step);
/* "kscale ALGO F"; 0: not measured */
double params_kscale(const struct pems_model_params *m, const char *algo);
/* "overlap_alg ALGO P", else "overlap_p P", else "overlap" */
double params_overlap_alg(const struct pems_model_params *m, unsigned p, const char *algo);
/* "lbusy P S"; 0: not measured */
double params_lbusy(const struct pems_model_params *m, unsigned p);
/* core-seconds per unit of the aggregate's merge (@write false: per row
 * received) or write (per group) at @x groups per VP from the "agg_at"
 * lines; 0 without them */
double params_agg_at(const struct pems_model_params *m, double x, bool write);
/* one "agg_at X M W" line, kept in ascending X; -EINVAL when a figure is
 * not positive or X is there already, -ENOSPC when full */
int params_agg_at_add(struct pems_model_params *m, double x, double merge, double write);

/* ---- predict.c ---- */

/* @j's cost plan priced with @m into @pl (each step's core-seconds in
 * cpu[], of which the aggregate's hashed rows cpu_pre[]), holding in
 * memory what the budget keeps between two supersteps as the runtime does */
struct model_plan {
	struct pems_cost_plan c;
	double cpu[PEMS_MODEL_MAXSTEPS], cpu_pre[PEMS_MODEL_MAXSTEPS];
	double serial[PEMS_MODEL_MAXSTEPS];	/* seconds of VP 0 alone */
};
void model_build(const struct pems_model_job *j, const struct pems_model_params *m,
		 struct model_plan *pl);
/* superstep @i of @pl on @L */
void model_step_time(const struct model_plan *pl, unsigned i, const struct pems_model_job *j,
		     const struct pems_model_params *m, const struct pems_model_layout *L,
		     struct pems_model_time *o);

#endif
