/*
 * job.h - the run of one bundled algorithm (internal to algorithms/):
 * its configuration, input, output file and progress thread around one
 * SPMD section.
 *
 * Every algorithm goes through the same steps:
 *
 *   pems_job_init        cfg := the job's configuration (or the current one)
 *   (plan into j->cfg)   the algorithm's own memory plan
 *   pems_job_input       open the input as a pems_file handle (j->in)
 *   pems_job_output      <out>.pems-tmp created for every rank (j->out)
 *   pems_job_run         a progress thread polls the algorithm while
 *                        pems_spmd runs with j->cfg; stopped and joined
 *                        after it
 *   pems_job_end         commit the output (rename when every rank is
 *                        done, remove it on failure), close the input
 *
 * Each step prints "pems: error: <who>: ..." on failure and returns
 * -errno; pems_job_end is always called once pems_job_init was.
 */
#ifndef PEMS_ALG_JOB_H
#define PEMS_ALG_JOB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pems.h"
#include "pems_algorithms.h"

typedef void (*pems_progress_fn)(const char *phase, uint64_t done, uint64_t total,
				 void *arg);

/* What the progress bar shows now: fill @phase (@len bytes), *done and
 * *total; called on the progress thread every 200 ms, and once with
 * @final after a successful run.  Returns false to show nothing. */
typedef bool (*pems_job_poll_fn)(void *state, bool final, char *phase, size_t len,
				 uint64_t *done, uint64_t *total);

struct pems_job {
	const char *who;		/* "sort": the prefix of messages */
	struct pems_config cfg;		/* the plan: what pems_spmd runs with */
	int in;				/* input handle, -1: none */
	const char *out;		/* final output path, NULL: none */
	int out_handle;			/* handle of the temporary, -1: none */
	struct pems_output o;		/* the output's lock and temporary */
	pems_progress_fn progress;	/* NULL: no progress thread */
	void *progress_arg;
	pems_job_poll_fn poll;
	void *state;			/* poll's argument */
	bool own_errors;		/* -EINVAL / -ERANGE: the algorithm explains them */
	/* the progress thread */
	pthread_t thread;
	bool have_thread;
	atomic_int stop;
};

/* The progress of a sort, for its poll function: "partition" (@part
 * of @in bytes), then "sort+write" (@written of @out bytes) once
 * anything is written, "done" (@out) when @final.  Returns true. */
bool pems_job_sort_progress(bool final, uint64_t part, uint64_t in, uint64_t written,
			    uint64_t out, char *phase, size_t len, uint64_t *done,
			    uint64_t *total);

/* Start a job: j->cfg from @cfg (NULL: pems_current_config()), no input,
 * no output, progress through @poll(@state) to @progress (may be NULL). */
void pems_job_init(struct pems_job *j, const char *who, const struct pems_config *cfg,
		   pems_progress_fn progress, void *progress_arg, pems_job_poll_fn poll,
		   void *state);
/* Open @path for reading as j->in; 0 or -errno (message printed). */
/* Own @out (pems_output_lock): first, before any work; pems_job_end
 * releases it.  0 or -EBUSY / -errno with a message printed. */
int pems_job_lock(struct pems_job *j, const char *out);
int pems_job_input(struct pems_job *j, const char *path);
/* Create @out's temporary for every rank to write into (j->out_handle),
 * sized to @size when @sized; 0 or -errno (message printed). */
int pems_job_output(struct pems_job *j, const char *out, bool sized, uint64_t size);
/* Run @spmd(@arg) on every VP with j->cfg and the progress thread
 * polling; returns pems_spmd's result. */
int pems_job_run(struct pems_job *j, void (*spmd)(void *), void *arg);
/* Finish with result @rc: commit the output unless @rc (truncated to
 * @size on rank 0 when @truncate), close the input; on failure print
 * "finishing <out>: <why>" (not for -EINVAL / -ERANGE with own_errors).
 * Returns @rc or the commit's -errno. */
int pems_job_end(struct pems_job *j, int rc, bool truncate, uint64_t size);

/* Refuse (-ENOSPC, message printed) a job whose scratch dirs (j->cfg's,
 * else $TMPDIR or .) lack @scratch bytes in all, or whose output
 * directory lacks @out_bytes; 0 on a resumed run (all is allocated). */
int pems_job_space(const struct pems_job *j, const char *out, uint64_t scratch,
		   uint64_t out_bytes);

/* Stop the job with "pems: error: <who>: <what>: <why>" on every rank
 * (bsp_abort): @rc is -errno or a short transfer (>= 0). */
void pems_job_fail(const char *who, const char *what, long long rc)
	__attribute__((noreturn));

/* splitmix64's output function of x + golden ratio: the algorithms'
 * deterministic pseudo-random positions and keys */
static inline uint64_t pems_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

#endif
