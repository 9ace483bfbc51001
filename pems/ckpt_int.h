/*
 * ckpt_int.h - what the parts of the checkpoint code share: the state of
 * this process's checkpoints and the helpers one part gives another.
 *   checkpoint.c  the state, the hooks the runtime calls, the end of a run
 *   manifest.c    the manifest text: escapes, tokens, the parser (fuzzed)
 *   ckpt_exec.c   reading a checkpoint directory, the ASLR-off re-exec
 *                 and pems_checkpoint_resume
 *   ckpt_save.c   writing a checkpoint at a barrier (the commit protocol)
 *   ckpt_load.c   loading it in the re-executed process
 * The invariants are in checkpoint.c.
 */
#ifndef PEMS_CKPT_INT_H
#define PEMS_CKPT_INT_H

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "rt.h"
#include "checkpoint.h"

#define MARK "PEMS_CKPT_EXEC"
#define MARK_START "start_"
#define MARK_RESUME "resume"
#define PAD "PEMS_CKPT_PAD"	/* pads a rank's environment (invariant 5) */
#define NPAD 8
#define PAD_BYTES 8192
#define MAXF 256
#define MAXPATHS 512
#define IDENT_BYTES (1u << 20)

extern char **environ;

struct note {
	bool used;
	int flags, dfd, bfd;
	bool direct;
	char *path;
};

struct pems_ckpt {
	char dir[PATH_MAX];
	char id[32];
	unsigned rank, nranks;
	bool resume;		/* this process resumes from dir */
	unsigned every, secs;
	double last;		/* time of the last checkpoint (or start) */
	uint64_t last_step;
	bool committed;		/* dir holds a valid manifest of this job */
	char state[64];		/* its state file */
	char part[64];		/* its manifest part (several ranks) */
	char *paths[MAXPATHS];	/* scratch files, for cleanup */
	unsigned npaths;
	struct pems_worker w;	/* the driver's engine for write-backs */
	char lock[PATH_MAX + 16];	/* held lock file (invariant 7), fd: */
	int lockfd;
	bool spoiled;		/* it refers to data found corrupt */
};

extern struct pems_ckpt pems_ck;
extern struct note pems_ck_notes[MAXF];
extern struct pems_ck_global { void *addr; size_t len; } pems_ck_globals[16];
extern unsigned pems_ck_nglobals;

/* ckpt_exec.c */
int pems_ck_load_manifest(const char *dir, unsigned rank, unsigned size, struct pems_manifest *m);
int64_t pems_ck_mtime_ns(const struct stat *st);
int pems_ck_ident_crcs(int fd, uint64_t size, uint32_t *head, uint32_t *tail);
int pems_ck_check_inputs(const struct pems_manifest *m);
int pems_ck_check_maps(const struct pems_manifest *m);
bool pems_ck_recorded_var(const char *s);
void pems_ck_lock_name(const char *dir, unsigned rank, unsigned nranks, char *p, size_t len);
/* ckpt_save.c */
struct pems_worker *pems_ck_log_owner(const struct pems_rt *rt, unsigned i);
void pems_ck_fsync_dir(const char *dir);
void pems_ck_meet(struct pems_rt *rt);
void pems_ck_remove_state(const char *name);
/* checkpoint.c */
int pems_ck_reopen_file(const struct pems_mf_file *f);

#endif
