/*
 * checkpoint.c - superstep checkpoints and resume.
 *
 * At a barrier no VP runs and no I/O is in flight (sched.c 2): every
 * context is resident or wholly in its context file, every message of
 * the next superstep is in a log or in a partial chunk in memory.  A
 * checkpoint writes the resident contexts back, fsyncs the scratch
 * files, saves what lives outside them (the runtime's tables: VP
 * registers, heaps, registrations, collective results, get replies,
 * message stream indices and partial chunks) into a state file and
 * commits a manifest.  Resuming re-executes the same program with the
 * same argv, its PEMS_* and TMPDIR variables and an environment of the
 * same size (the manifest keeps nothing else of it: invariant 1), lets
 * it set up the runtime exactly as the first time, then loads the state
 * instead of starting the VPs.  Every file it writes is mode 0600.
 *
 * A VP is a ucontext whose stack is in its slice and whose frames hold
 * return addresses and pointers into the program, libc, the runtime's
 * tables (rt, rt->vps) and the driver's stack.  Those are valid in the
 * new process only if it has the same address layout, hence:
 *
 * Invariants:
 *  (1) a checkpointing process runs with ASLR off and was started by
 *      execve(realpath of the binary, argv, environ + PEMS_CKPT_EXEC=
 *      start_|resume): both values have one length, so the initial stack
 *      is laid out alike on start and resume; everything before the
 *      runtime's setup is deterministic, and the resume path allocates
 *      nothing before the setup is done.  The manifest records rt, vps,
 *      region, the entry argument and a driver stack address; resume
 *      refuses when any differs;
 *  (2) a checkpoint never overwrites what the previous one refers to:
 *      write-backs go to the context copy the last checkpoint does not
 *      use (context.c 2) and messages to a log other than the one it
 *      reads (msg.c 4), until the new manifest is renamed into place;
 *  (3) commit order: contexts written, scratch fsynced, state file
 *      written under a temporary name, fsynced and renamed, manifest
 *      likewise, directory fsynced; only then the old state file goes.
 *      A kill at any point leaves the previous checkpoint whole;
 *  (4) only the first SPMD section of a process checkpoints; files
 *      opened with pems_file_open are reopened at the same descriptors;
 *      process memory outside the contexts is not saved (the driver
 *      recomputes it by running again up to the SPMD section);
 *  (5) the first exec adds pad variables (room to grow); resume runs
 *      with its caller's environment, the recorded PEMS_* and TMPDIR in
 *      place of its own, padded to the recorded count and bytes, so the
 *      initial stack is laid out alike and a rank started by mpirun gets
 *      the new job's launcher variables (OMPI_*, PMIX_*); MPI runs on its
 *      own thread (transport.c: its own malloc arena) and the VP table
 *      and context region are mapped at a fixed address (context.c);
 *  (6) several ranks: each writes its part (manifest.S.R, state.S.R),
 *      all meet, rank 0 commits by writing manifest (a copy of its
 *      part), all meet again, and only then does a rank drop the
 *      previous part and protect the new copies; resume is all ranks or
 *      none (an allreduce of the refusals), with the recorded rank count;
 *  (7) a job holds an exclusive lock on DIR/lock (DIR/lock.RANK) from
 *      pems_ckpt_init to its end, before it touches the dir or a scratch
 *      file named after it; a second job or resume for the same dir
 *      refuses, naming the holder's PID, and removes nothing.
 *
 * States of a checkpoint directory:
 *
 *   (none) --start--> EMPTY --barrier due--> COMMITTED(s) --barrier--> COMMITTED(s')
 *                       |                        |  kill: kept, resumable
 *                       +--success: removed------+--success: removed
 *
 * The code is in five files: ckpt_int.h says which part is where.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "ctx.h"
#include "msg.h"
#include "tp.h"
#include "ckpt.h"
#include "sched_parts.h"
#include "spill.h"
#include "checkpoint.h"
#include "crc32c.h"
#include "ckpt_int.h"

struct pems_ckpt pems_ck;
struct note pems_ck_notes[MAXF];
struct pems_ck_global pems_ck_globals[16];
unsigned pems_ck_nglobals;
static unsigned runs;

/* ---- process memory that VP code changes (invariant 4) ---- */

PEMS_API int pems_checkpoint_global(void *addr, size_t len)
{
	unsigned i;

	for (i = 0; i < pems_ck_nglobals; i++)
		if (pems_ck_globals[i].addr == addr) {
			pems_ck_globals[i].len = len;
			return 0;
		}
	if (pems_ck_nglobals == 16 || !addr)
		return -EINVAL;
	pems_ck_globals[pems_ck_nglobals].addr = addr;
	pems_ck_globals[pems_ck_nglobals++].len = len;
	return 0;
}

/* ---- files opened by the SPMD section (bsp/file.c) ---- */

void pems_ckpt_file_note(int h, const char *path, int flags, int dfd, int bfd, bool direct)
{
	if (h < 0 || h >= MAXF)
		return;
	free(pems_ck_notes[h].path);
	pems_ck_notes[h] = (struct note){ .used = true, .flags = flags, .dfd = dfd, .bfd = bfd,
				  .direct = direct, .path = strdup(path) };
}

void pems_ckpt_file_forget(int h)
{
	if (h < 0 || h >= MAXF)
		return;
	free(pems_ck_notes[h].path);
	memset(&pems_ck_notes[h], 0, sizeof(pems_ck_notes[h]));
}

/* Reopen a file the SPMD section had open, at the same descriptors. */
int pems_ck_reopen_file(const struct pems_mf_file *f)
{
	struct note *n = &pems_ck_notes[f->h];
	int bfd, dfd, fl = f->flags & ~(O_CREAT | O_TRUNC | O_EXCL);
	bool direct;

	if (n->used && n->path && !strcmp(n->path, f->path))
		return 0;	/* the driver opened it again before the section */
	if (n->used || fcntl(f->bfd, F_GETFD) != -1 || fcntl(f->dfd, F_GETFD) != -1) {
		fprintf(stderr, "pems: error: resume: descriptor of %s is taken in the new process\n",
			f->path);
		return -EBUSY;
	}
	bfd = open(f->path, fl);
	if (bfd < 0 || dup2(bfd, f->bfd) < 0) {
		fprintf(stderr, "pems: error: resume: cannot reopen %s: %s\n", f->path, strerror(errno));
		return -errno;
	}
	if (bfd != f->bfd)
		close(bfd);
	dfd = pems_io_open(f->path, fl, 0, &direct);
	if (dfd < 0 || dup2(dfd, f->dfd) < 0) {
		fprintf(stderr, "pems: error: resume: cannot reopen %s\n", f->path);
		return dfd < 0 ? dfd : -errno;
	}
	if (dfd != f->dfd)
		close(dfd);
	pems_ckpt_file_note(f->h, f->path, f->flags, f->dfd, f->bfd, f->direct);
	return pems_fio_restore(f->h, f->dfd, f->bfd, f->direct);
}

/* ---- runtime hooks ---- */

/* A job owns its checkpoint dir (and the scratch named after it) while it
 * runs: a second job for the same dir, or a second resume of the same
 * checkpoint, refuses here and touches nothing (invariant 7). */
static int lock_dir(const struct pems_rt *rt)
{
	long holder = 0;
	int fd;

	pems_ck_lock_name(pems_ck.dir, rt->rank, rt->nranks, pems_ck.lock, sizeof(pems_ck.lock));
	fd = pems_lock(pems_ck.lock, &holder);
	if (fd >= 0) {
		pems_ck.lockfd = fd;
		return 0;
	}
	pems_ck.lock[0] = 0;
	if (fd == -EBUSY)
		fprintf(stderr, "pems: error: checkpoint dir %s is in use by another job (PID %ld); wait for it to finish, or pass another --checkpoint-dir\n",
			pems_ck.dir, holder);
	else
		fprintf(stderr, "pems: error: checkpoint dir %s: cannot lock it: %s\n", pems_ck.dir,
			strerror(-fd));
	return fd == -EBUSY ? -PEMS_E_CONFIG : -PEMS_E_SCRATCH;
}

/* Called by rt_init before any scratch file: invariant (1) forbids
 * allocating here on resume, so this only fills the static state. */
int pems_ckpt_init(struct pems_rt *rt)
{
	const char *m = getenv(MARK), *d = rt->cfg.ckpt_dir;
	unsigned run = runs++;
	char cwd[PATH_MAX];
	int rc;

	rt->nlogs = 2;
	rt->plog = -1;
	rt->wlog = 0;
	rt->rlog = 1;
	if (!d || !*d || run)
		return 0;
	if (!m) {
		if (rt->cfg.ckpt_every && !rt->cfg.quiet)
			fprintf(stderr, "pems: warning: checkpoints are off: the process was not started for them (set PEMS_CHECKPOINT_DIR, or call pems_checkpoint_exec first in main)\n");
		return 0;
	}
	memset(&pems_ck, 0, sizeof(pems_ck));
	pems_ck.lockfd = -1;
	if (d[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	if (snprintf(pems_ck.dir, sizeof(pems_ck.dir), "%s%s%s", cwd, cwd[0] ? "/" : "", d) >=
	    (int)sizeof(pems_ck.dir) - 64) {
		fprintf(stderr, "pems: error: checkpoint dir %s: name too long\n", d);
		return -PEMS_E_CONFIG;
	}
	pems_ck.rank = rt->rank;
	pems_ck.nranks = rt->nranks;
	/* ranks may share scratch dirs: their files differ by rank */
	if (rt->nranks > 1)
		snprintf(pems_ck.id, sizeof(pems_ck.id), "%08x.%u", pems_crc32c(0, pems_ck.dir, strlen(pems_ck.dir)),
			 rt->rank);
	else
		snprintf(pems_ck.id, sizeof(pems_ck.id), "%08x", pems_crc32c(0, pems_ck.dir, strlen(pems_ck.dir)));
	pems_ck.resume = !strcmp(m, MARK_RESUME);
	pems_ck.committed = pems_ck.resume;	/* a refused resume keeps its checkpoint */
	pems_ck.every = rt->cfg.ckpt_every;
	pems_ck.secs = rt->cfg.ckpt_secs ? rt->cfg.ckpt_secs : 60;
	pems_ck.last = pems_now();
	if (mkdir(pems_ck.dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "pems: error: checkpoint dir %s: %s; pass another --checkpoint-dir\n",
			pems_ck.dir, strerror(errno));
		return -PEMS_E_SCRATCH;
	}
	rc = lock_dir(rt);
	if (rc)
		return rc;
	if (!pems_ck.resume) {
		char p[PATH_MAX + 16];

		/* a manifest of an earlier run of this job is obsolete now */
		snprintf(p, sizeof(p), "%s/manifest", pems_ck.dir);
		unlink(p);
	}
	rt->ckpt = &pems_ck;
	rt->nlogs = 3;
	return 0;
}

/* Path of scratch file @name in @dir; with checkpoints it has a stable
 * name (and must be kept), else it is unlinked once open. */
bool pems_ckpt_scratch_path(struct pems_rt *rt, const char *dir, const char *name,
			    char *path, size_t len, int *flags)
{
	if (!rt->ckpt) {
		snprintf(path, len, "%s/pems-%d-%s", dir, (int)getpid(), name);
		*flags = O_RDWR | O_CREAT | O_TRUNC;
		return false;
	}
	snprintf(path, len, "%s/pems-ckpt-%s-%s", dir, pems_ck.id, name);
	*flags = pems_ck.resume ? O_RDWR : O_RDWR | O_CREAT | O_TRUNC;
	if (pems_ck.npaths < MAXPATHS)
		pems_ck.paths[pems_ck.npaths++] = strdup(path);
	return true;
}

/* ---- the end of a run ---- */

/* A state file or manifest (part) of this rank, or its temporary. */
static bool own_file(const char *name)
{
	char n[256], *dot;
	size_t len = strlen(name);

	if (strncmp(name, "state.", 6) && strncmp(name, "manifest.", 9))
		return false;
	if (pems_ck.nranks == 1)
		return true;
	if (len >= sizeof(n))
		return false;
	memcpy(n, name, len + 1);
	if (len > 4 && !strcmp(n + len - 4, ".tmp"))
		n[len - 4] = 0;
	if (!strcmp(n, "manifest"))
		return pems_ck.rank == 0;	/* the commit's temporary */
	dot = strrchr(n, '.');
	return dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1) &&
	       strtoul(dot + 1, NULL, 10) == pems_ck.rank;
}

static void remove_all(struct pems_rt *rt)
{
	char p[PATH_MAX + 128];
	struct dirent *e;
	unsigned i;
	DIR *d;

	if (pems_ck.rank == 0) {
		snprintf(p, sizeof(p), "%s/manifest", pems_ck.dir);
		unlink(p);	/* first: from here on nothing is resumable */
		pems_ck_fsync_dir(pems_ck.dir);
	}
	if (pems_ck.nranks > 1)
		pems_ck_meet(rt);	/* no rank removes a part of a live checkpoint */
	pems_ck_remove_state(pems_ck.state);
	pems_ck.state[0] = 0;
	pems_ck_remove_state(pems_ck.part);
	pems_ck.part[0] = 0;
	for (i = 0; i < pems_ck.npaths; i++)
		unlink(pems_ck.paths[i]);
	/* state files and parts of checkpoints that a kill left uncommitted
	 * (with several ranks each removes its own: names end in .RANK) */
	d = opendir(pems_ck.dir);
	while (d && (e = readdir(d)))
		if (own_file(e->d_name))
			pems_ck_remove_state(e->d_name);
	if (d)
		closedir(d);
	pems_unlock(pems_ck.lock, pems_ck.lockfd);
	pems_ck.lockfd = -1;
	pems_ck.lock[0] = 0;
	rmdir(pems_ck.dir);
	pems_ck.committed = false;
}

/* Success: the checkpoint and the scratch files go. */
void pems_ckpt_finish(struct pems_rt *rt)
{
	unsigned i;

	if (!rt->ckpt)
		return;
	remove_all(rt);
	for (i = 0; i < pems_ck.npaths; i++)
		free(pems_ck.paths[i]);
	pems_ck.npaths = 0;
	if (pems_ck.w.io)
		pems_io_destroy(pems_ck.w.io);
	pems_ck.w.io = NULL;
	rt->ckpt = NULL;
}

/* The runtime could not start: scratch of a fresh run goes. */
void pems_ckpt_abandon(struct pems_rt *rt)
{
	unsigned i;

	if (!rt->ckpt)
		return;
	for (i = 0; i < pems_ck.npaths; i++) {
		if (!pems_ck.committed)
			unlink(pems_ck.paths[i]);
		free(pems_ck.paths[i]);
	}
	pems_unlock(pems_ck.committed ? NULL : pems_ck.lock, pems_ck.lockfd);
	pems_ck.lockfd = -1;
	pems_ck.lock[0] = 0;
	if (!pems_ck.committed)
		rmdir(pems_ck.dir);
	pems_ck.npaths = 0;
	rt->ckpt = NULL;
}

/* A checkpoint of this run is on disk (or may be: several ranks, from
 * the moment this rank's part is written): what it needs stays. */
bool pems_ckpt_kept(void)
{
	return pems_ck.dir[0] && pems_rt && pems_rt->ckpt && pems_ck.committed && !pems_ck.spoiled;
}

/* This process was started for checkpoints (invariant 1). */
bool pems_ckpt_started(void)
{
	return getenv(MARK) != NULL;
}

/* Data written in superstep @step was read back corrupt: the last
 * checkpoint refers to it when it was written then or before (a resume
 * would meet it again and fail the same way). */
void pems_ckpt_corrupt(uint64_t step)
{
	if (pems_ck.dir[0] && pems_rt && pems_rt->ckpt && pems_ck.committed &&
	    (step <= pems_ck.last_step || !pems_ck.last_step))
		pems_ck.spoiled = true;
}

/* A checkpoint that cannot be resumed goes with its scratch, so that the
 * advice is one that works: run the command again. */
static void drop_spoiled(void)
{
	char msg[PATH_MAX + 160];
	unsigned i;
	int n;

	if (pems_ck.rank == 0) {
		snprintf(msg, sizeof(msg), "%s/manifest", pems_ck.dir);
		unlink(msg);	/* first: from here on nothing is resumable */
	}
	pems_ck_remove_state(pems_ck.state);
	pems_ck_remove_state(pems_ck.part);
	for (i = 0; i < pems_ck.npaths; i++)
		unlink(pems_ck.paths[i]);
	if (pems_ck.lock[0])
		unlink(pems_ck.lock);
	rmdir(pems_ck.dir);
	n = snprintf(msg, sizeof(msg), "pems: the checkpoint in %s refers to the corrupt data, so it cannot be resumed and was removed; run the command again to start over\n",
		     pems_ck.dir);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		n = 0;
}

/* A fatal error or a signal: keep a committed checkpoint (and the
 * scratch it needs) for resume, else remove everything.  Async-signal-
 * safe (only unlink, rmdir and write). */
void pems_ckpt_die(void)
{
	char msg[PATH_MAX + 128];
	int n;

	if (!pems_ck.dir[0] || !pems_rt || !pems_rt->ckpt)
		return;
	if (!pems_ck.committed) {
		unsigned i;

		for (i = 0; i < pems_ck.npaths; i++)
			unlink(pems_ck.paths[i]);
		if (pems_ck.lock[0])
			unlink(pems_ck.lock);	/* exit releases the lock */
		rmdir(pems_ck.dir);
		return;
	}
	if (pems_ck.spoiled) {
		drop_spoiled();
		return;
	}
	if (!pems_ck.last_step)
		return;	/* several ranks: this rank's part of a first checkpoint
			 * is written, the commit may not be (invariant 6) */
	if (pems_ck.nranks > 1)
		n = snprintf(msg, sizeof(msg), "pems: rank %u: the checkpoint of superstep %llu is kept in %s; continue with: mpirun -np %u pems-run resume %s\n",
			     pems_ck.rank, (unsigned long long)pems_ck.last_step, pems_ck.dir,
			     pems_ck.nranks, pems_ck.dir);
	else
		n = snprintf(msg, sizeof(msg), "pems: the checkpoint of superstep %llu is kept in %s; continue with: pems-run resume %s\n",
			     (unsigned long long)pems_ck.last_step, pems_ck.dir, pems_ck.dir);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		n = 0;
}
