/*
 * sched_parts.h - what the scheduler (sched.c) uses of its helpers: fatal
 * errors and signals (abort.c), scratch dirs (scratch.c), statistics
 * (stats.c); and what checkpoints need of them.
 */
#ifndef PEMS_SCHED_PARTS_H
#define PEMS_SCHED_PARTS_H

#include "rt.h"

/* signals and the stack-overflow guard (abort.c): once per worker thread */
void pems_segv_setup(void);
/* pems_remove_on_abort's list (abort.c): a malloc'd array of n paths */
unsigned pems_cleanup_list(const char ***paths);
void pems_remove_on_abort_once(const char *path);

/* scratch dirs (scratch.c): check and expand rt->cfg.tmp into
 * rt->tmpdir, open the context files; then open file @name in dir @dir
 * (unlinked unless a checkpoint needs it).  0 or -errno, message printed */
int pems_scratch_setup(struct pems_rt *rt);
int pems_scratch_open(struct pems_rt *rt, unsigned dir, const char *name, int *fd_out);

/* statistics (stats.c): after each superstep (PEMS_STATS=2 prints one
 * line), and at the end of the run (summed over ranks, printed, JSON) */
void pems_stats_step(struct pems_rt *rt, double t_start);
void pems_stats_final(struct pems_rt *rt);

#endif
