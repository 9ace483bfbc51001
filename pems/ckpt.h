/*
 * ckpt.h - the checkpoint hooks the runtime calls (checkpoint.c); the
 * manifest format and parser are in checkpoint.h.
 */
#ifndef PEMS_CKPT_H
#define PEMS_CKPT_H

#include "rt.h"

struct pems_ckpt;
int pems_ckpt_init(struct pems_rt *rt);
bool pems_ckpt_scratch_path(struct pems_rt *rt, const char *dir, const char *name,
			    char *path, size_t len, int *flags);
int pems_ckpt_restore(struct pems_rt *rt, const void *stack_mark);
void pems_ckpt_barrier(struct pems_rt *rt, const void *stack_mark);
void pems_ckpt_finish(struct pems_rt *rt);
void pems_ckpt_abandon(struct pems_rt *rt);
void pems_ckpt_die(void);
/* data written in superstep @step was read back corrupt (context.c, msg.c) */
void pems_ckpt_corrupt(uint64_t step);
bool pems_ckpt_kept(void);
bool pems_ckpt_started(void);
void pems_ckpt_file_note(int h, const char *path, int flags, int dfd, int bfd, bool direct);
void pems_ckpt_file_forget(int h);
/* fileio.c: on resume, handle @h is open again at its old descriptors
 * (0 or -EBUSY) */
int pems_fio_restore(int h, int dfd, int bfd, bool direct);

/* Whether a job holds the lock file @path, probed without creating it:
 * its PID, -1 if held by an unknown PID, 0 if not held (lock.c). */
long pems_lock_held(const char *path);

#endif
