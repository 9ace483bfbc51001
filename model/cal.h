/*
 * cal.h - what the calibration's files share (calibrate.c: the machine;
 * cal_kernels.c: the algorithms' rates).
 */
#ifndef PEMS_MODEL_CAL_H
#define PEMS_MODEL_CAL_H

#include "model_internal.h"
#include "pems_gen.h"

#define CAL_KJOBS 6	/* kernel runs kept for the overlap fit */

struct cal {
	struct pems_model_cal *o;
	struct pems_model_params *m;
	double end0, w0;	/* the setup run: seconds outside its supersteps, bytes written */
	/* the last run of each kernel job: the job and its supersteps' wall
	 * seconds (sgd: the mean training superstep), for cal_overlap() */
	struct kjob {
		struct pems_model_job j;
		double secs[PEMS_MODEL_MAXSTEPS];
		unsigned n;
	} kj[CAL_KJOBS];
};

/* c->o->err = the message; returns @rc */
int cal_fail(struct cal *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* pems_configure() a run of @procs VPs (0: planned) on @k workers */
int cal_configure(unsigned procs, unsigned k, size_t mu, size_t mem, const char *tmp);
/* Run @fn(@arg) with the step recorder on; *wall its seconds. */
int cal_recorded(int (*fn)(void *), void *arg, double *wall);
/* seconds of the last recorded run outside its supersteps; *w: the
 * bytes it wrote (message store and files) */
double cal_run_end(double wall, double *w);
/* qsort() comparison of doubles, ascending */
int cal_dcmp(const void *a, const void *b);

/* cal_kernels.c */
int cal_setup(struct cal *c);
int cal_kernels(struct cal *c, unsigned runs);

#endif
