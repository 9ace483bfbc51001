/*
 * steps.h - the scheduler's calls into the step recorder (steps.c; the
 * API is pems_steps_record/pems_steps in pems.h).
 */
#ifndef PEMS_STEPS_H
#define PEMS_STEPS_H

#include "pems.h"

/* An SPMD section starts: forget the last one's records. */
void pems_steps_start(void);
/* A barrier passed: one record from this rank's counters so far.  Called
 * on the runtime thread while the comm thread is paused. */
void pems_steps_barrier(void);
/* The section ended: the last superstep from the final totals @sum, the
 * sum over @nranks ranks (its bytes and times are divided by them). */
void pems_steps_end(const struct pems_stats *sum, unsigned nranks);

#endif
