/*
 * spmd_test.h - helpers shared by the BSPlib tests (check_bsp.c,
 * check_errors.c, check_spill.c; mpi_test.h for its configurations and
 * budgets): run configurations, the scratch dir, and a runner that
 * executes a scenario in a forked child with stdout/stderr captured and a
 * deadline, so that aborts, crashes and hangs can be told apart.
 *
 * Header-only: everything is static inline (unused helpers do not warn).
 */
#ifndef SPMD_TEST_H
#define SPMD_TEST_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pems.h"
#include "sanitizer_noise.h"
#include "config.h"	/* pems_config_derive: the budget the runtime needs */

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)

/* One runtime configuration (what pems_configure gets). */
struct spmd_cfg {
	const char *name;
	unsigned v, k;		/* VPs, worker threads */
	size_t mu, mem;		/* bytes per context, budget M; below 8 MiB:
				 * that much above the least budget the
				 * runtime accepts (spmd_min_budget) */
	enum pems_io_kind io;
	bool spill;		/* the budget forces contexts to disk */
};

/* The scratch dir: $PEMS_TEST_TMP (tests/run.sh), else a new dir under
 * /work/scratch/tests or /tmp.  The string lives for the process. */
static inline const char *spmd_tmp(void)
{
	static char dir[4096];
	const char *s = getenv("PEMS_TEST_TMP");
	struct stat st;

	if (s && *s)
		return s;
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/pems-test.XXXXXX",
			 stat("/work/scratch/tests", &st) == 0 ? "/work/scratch/tests" : "/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
	}
	return dir;
}

/* Does the runtime accept @pc (pems_config_derive, its message
 * silenced)?  Fills *d. */
static inline bool spmd_budget_ok(const struct pems_config *pc, struct pems_derived *d)
{
	struct pems_config tmp = *pc;
	int saved, null, rc;

	fflush(stderr);
	saved = dup(2);
	null = open("/dev/null", O_WRONLY);
	if (null >= 0) {
		dup2(null, 2);
		close(null);
	}
	rc = pems_config_derive(&tmp, 0, d);
	fflush(stderr);
	if (saved >= 0) {
		dup2(saved, 2);
		close(saved);
	}
	return rc == 0;
}

/* The least budget M (to 4 KiB) that the runtime accepts for @pc's v, k
 * and mu: then the budget holds the k computing contexts and nothing
 * more, so every other context is on disk between supersteps. */
static inline size_t spmd_min_budget(const struct pems_config *pc)
{
	struct pems_config c = *pc;
	struct pems_derived d;
	size_t lo, hi;

	for (hi = 8 * MiB; hi < ((size_t)64 << 30); hi += MiB) {
		c.mem = hi;
		if (spmd_budget_ok(&c, &d))
			break;
	}
	lo = hi - MiB;	/* refused (or 7 MiB); hi accepted */
	while (hi - lo > 4 * KiB) {
		size_t mid = (lo + (hi - lo) / 2) & ~(4 * KiB - 1);

		if (mid <= lo)
			break;
		c.mem = mid;
		if (spmd_budget_ok(&c, &d))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* Fill @pc from @c: every knob set explicitly, so that the caller's
 * environment (PEMS_STACK, PEMS_MSG_MEM, ...) cannot change the test. */
static inline void spmd_fill_config(struct pems_config *pc, const struct spmd_cfg *c)
{
	pems_config_init(pc);
	pc->procs = c->v;
	pc->threads = c->k;
	pc->mu = c->mu;
	pc->mem = c->mem;
	pc->io = c->io;
	pc->stack = 256 * KiB;
	pc->msg_mem = 0;
	pc->qdepth = 32;
	pc->tmp[0] = spmd_tmp();
	pc->ntmp = 1;
	pc->stats = false;
	pc->stats_json = NULL;
	pc->quiet = true;
	if (pc->mem < 8 * MiB)
		pc->mem += spmd_min_budget(pc);
}

static inline int spmd_configure(const struct spmd_cfg *c)
{
	struct pems_config pc;

	spmd_fill_config(&pc, c);
	return pems_configure(&pc);
}

/* PEMS_TEST_REDUCED=1 (make tsan): leave out the configurations of 256
 * VPs and more, which take most of the time under TSan. */
static inline bool spmd_reduced(void)
{
	const char *s = getenv("PEMS_TEST_REDUCED");

	return s && *s && strcmp(s, "0");
}

/* Add to @s a TCase @name (timeout 120 s) of loop test @t: iteration
 * first + k for each configuration k < n whose bit in @keep is set. */
static inline void spmd_add_loops(Suite *s, const char *name, const TTest *t, unsigned first,
				  unsigned n, uint32_t keep)
{
	TCase *tc = tcase_create(name);
	unsigned k;

	tcase_set_timeout(tc, 120);
	for (k = 0; k < n && k < 32; k++)
		if (keep >> k & 1)
			tcase_add_loop_test(tc, t, (int)(first + k), (int)(first + k + 1));
	suite_add_tcase(s, tc);
}

/* ---- running a scenario in a child ---- */

#define CHILD_OUT_MAX 16384

struct child_result {
	bool exited;		/* WIFEXITED */
	int status;		/* exit status when exited */
	bool signaled;		/* WIFSIGNALED */
	int sig;
	bool timed_out;		/* killed by us at the deadline */
	char out[CHILD_OUT_MAX];	/* stdout (truncated) */
	char err[CHILD_OUT_MAX];	/* stderr (truncated) */
};

static inline double spmd_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void child_append(char *buf, size_t *len, int fd, bool *open_)
{
	char tmp[4096];
	ssize_t n = read(fd, tmp, sizeof(tmp));

	if (n <= 0) {
		*open_ = false;
		return;
	}
	if (*len + (size_t)n >= CHILD_OUT_MAX)
		n = (ssize_t)(CHILD_OUT_MAX - 1 - *len);
	memcpy(buf + *len, tmp, (size_t)n);
	*len += (size_t)n;
	buf[*len] = '\0';
}

/* Run @fn(@arg) in a forked child whose stdout and stderr go to pipes;
 * the child exits 0 when @fn returns.  After @timeout_s seconds the
 * child is killed (SIGKILL, by its pid) and r->timed_out is set.
 * Sanitizer warnings about stack switching are removed from r->err.  The
 * caller must be single-threaded (no runtime running). */
static inline void run_child(void (*fn)(void *), void *arg, unsigned timeout_s,
			     struct child_result *r)
{
	int po[2], pe[2], st = 0;
	size_t lo = 0, le = 0;
	bool oo = true, eo = true;
	double deadline = spmd_now() + timeout_s;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(pipe(po), 0);
	ck_assert_int_eq(pipe(pe), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);

		close(po[0]);
		close(pe[0]);
		if (in < 0 || dup2(in, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(126);
		close(po[1]);
		close(pe[1]);
		alarm(timeout_s + 5);	/* belt and braces: the parent kills first */
		fn(arg);
		exit(0);
	}
	close(po[1]);
	close(pe[1]);
	while (oo || eo) {
		struct pollfd pf[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		int left = (int)((deadline - spmd_now()) * 1000);

		if (left <= 0) {
			r->timed_out = true;
			kill(pid, SIGKILL);
			break;
		}
		if (!oo)
			pf[0].fd = -1;
		if (!eo)
			pf[1].fd = -1;
		if (poll(pf, 2, left) < 0 && errno != EINTR)
			break;
		if (oo && (pf[0].revents & (POLLIN | POLLHUP | POLLERR)))
			child_append(r->out, &lo, po[0], &oo);
		if (eo && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
			child_append(r->err, &le, pe[0], &eo);
	}
	close(po[0]);
	close(pe[0]);
	/* the pipes are closed when the child exits, but a grandchild could
	 * keep them open: wait with the same deadline */
	for (;;) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			break;
		if (w < 0) {
			st = 0;
			break;
		}
		if (spmd_now() > deadline && !r->timed_out) {
			r->timed_out = true;
			kill(pid, SIGKILL);
		}
		usleep(1000);
	}
	strip_sanitizer_noise(r->err);
	r->exited = WIFEXITED(st);
	r->status = r->exited ? WEXITSTATUS(st) : -1;
	r->signaled = WIFSIGNALED(st);
	r->sig = r->signaled ? WTERMSIG(st) : 0;
}

/* ---- matching messages ---- */

/* Does @text match @pat exactly?  In @pat, "{ptr}" matches a pointer as
 * printed by %p ("0x" and hex digits, or "(nil)"), "{num}" a decimal
 * number and "{any}" any run of characters; everything else is literal. */
static inline bool msg_match(const char *pat, const char *text)
{
	while (*pat) {
		if (!strncmp(pat, "{ptr}", 5)) {
			if (!strncmp(text, "(nil)", 5)) {
				text += 5;
			} else {
				if (text[0] != '0' || text[1] != 'x' ||
				    !strchr("0123456789abcdef", text[2]) || !text[2])
					return false;
				text += 2;
				while (*text && strchr("0123456789abcdef", *text))
					text++;
			}
			pat += 5;
		} else if (!strncmp(pat, "{num}", 5)) {
			if (*text < '0' || *text > '9')
				return false;
			while (*text >= '0' && *text <= '9')
				text++;
			pat += 5;
		} else if (!strncmp(pat, "{any}", 5)) {
			const char *t;

			for (t = text;; t++) {
				if (msg_match(pat + 5, t))
					return true;
				if (!*t)
					return false;
			}
		} else {
			if (*pat != *text)
				return false;
			pat++;
			text++;
		}
	}
	return *text == '\0';
}

#endif
