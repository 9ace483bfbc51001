/*
 * abort.c - ending the process on an error: the first failing thread
 * cleans up (files registered with pems_remove_on_abort, checkpoint
 * scratch) and takes the other ranks down; signals that end the
 * process (Ctrl-C, mpirun) and a VP's stack overflow are reported the
 * same way.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"
#include "tp.h"
#include "ckpt.h"
#include "sched_parts.h"

/* ---- cleanup on fatal errors: files an algorithm asked us to remove ---- */
static char *cleanup_paths[16];
static unsigned ncleanup;
static pthread_mutex_t cleanup_lock = PTHREAD_MUTEX_INITIALIZER;

/* Ctrl-C, or mpirun ending the job after another rank failed: no partial
 * output may survive (unlink is async-signal-safe). */
static void on_signal(int sig)
{
	unsigned i;

	/* a kept checkpoint needs them (OUT.pems-tmp holds what the run
	 * wrote before it; checkpoint.c) */
	for (i = 0; i < ncleanup && !pems_ckpt_kept(); i++)
		unlink(cleanup_paths[i]);
	pems_ckpt_die();
	signal(sig, SIG_DFL);
	raise(sig);
}

PEMS_API void pems_remove_on_abort(const char *path)
{
	static bool handlers;

	if (!handlers) {
		handlers = true;
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGHUP, on_signal);
	}
	pthread_mutex_lock(&cleanup_lock);
	if (path && ncleanup < 16)
		cleanup_paths[ncleanup++] = strdup(path);
	else if (!path)
		while (ncleanup)
			free(cleanup_paths[--ncleanup]);
	pthread_mutex_unlock(&cleanup_lock);
}

/* Resume: register @path unless the driver did already. */
void pems_remove_on_abort_once(const char *path)
{
	unsigned i;

	for (i = 0; i < ncleanup; i++)
		if (!strcmp(cleanup_paths[i], path))
			return;
	pems_remove_on_abort(path);
}

unsigned pems_cleanup_list(const char ***paths)
{
	unsigned i, n;

	pthread_mutex_lock(&cleanup_lock);
	n = ncleanup;
	*paths = malloc((n + 1) * sizeof(**paths));
	for (i = 0; *paths && i < n; i++)
		(*paths)[i] = cleanup_paths[i];
	pthread_mutex_unlock(&cleanup_lock);
	return *paths ? n : 0;
}

/* Several workers (and the comm thread) can fail at once, e.g. on a
 * failing disk: only the first may clean up and call MPI_Abort (Open
 * MPI crashed when two threads of a rank aborted together); the others
 * wait here for the process to end.  Returns only in the first caller. */
static void first_to_die(void)
{
	static atomic_flag dying = ATOMIC_FLAG_INIT;

	if (!atomic_flag_test_and_set(&dying))
		return;
	for (;;)
		pause();
}

static _Noreturn void pems_die_first(int status);

_Noreturn void pems_die(int status)
{
	first_to_die();
	pems_die_first(status);
}

/* The rest of pems_die, for the thread that got first_to_die(). */
static _Noreturn void pems_die_first(int status)
{
	unsigned i;

	fflush(stdout);
	for (i = 0; i < ncleanup && !pems_ckpt_kept(); i++)
		unlink(cleanup_paths[i]);
	pems_ckpt_die();
	fflush(stderr);
	pems_tp_abort(status);	/* the other ranks end too (transport.c 4) */
	_exit(status);
}

_Noreturn void pems_fatal(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	first_to_die();
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pems: error: %s\n", buf);
	pems_die_first(1);
}

/* ---- stack overflow ---- */

/*
 * A VP that overflows its stack hits the guard page below it (context.c).
 * The fault is taken on an alternate stack (the VP's own is exhausted)
 * and reported like any other misuse instead of a bare SIGSEGV.
 */
static void on_segv(int sig, siginfo_t *si, void *uc);

static void segv_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigaction(SIGSEGV, &sa, NULL);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	struct pems_rt *rt = pems_rt;
	char *a = si->si_addr, msg[200];
	int n;

	(void)uc;
	if (rt && rt->region && a >= rt->region && a < rt->region + (size_t)rt->vlocal * rt->mu) {
		size_t lid = (size_t)(a - rt->region) / rt->mu, off = (size_t)(a - rt->region) % rt->mu;
		size_t guard = rt->mu - rt->stack - PEMS_PAGE;

		if (off >= guard && off < guard + PEMS_PAGE) {
			n = snprintf(msg, sizeof(msg), "pems: error: VP %u overflowed its stack of %zu KiB in superstep %llu; raise PEMS_STACK\n",
				     rt->first + (unsigned)lid, rt->stack >> 10,
				     (unsigned long long)rt->superstep);
			if (write(2, msg, (size_t)n) < 0)
				n = 0;
			pems_tp_abort(1);
			_exit(1);
		}
	}
	signal(sig, SIG_DFL);	/* not ours: crash as usual */
}

void pems_segv_setup(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	stack_t ss = { .ss_size = 64 << 10 }, old;

	/* keep one the thread already has (ASan installs its own and frees
	 * it at thread exit) */
	if (!sigaltstack(NULL, &old) && (old.ss_flags & SS_DISABLE)) {
		ss.ss_sp = malloc(ss.ss_size);
		if (ss.ss_sp)
			sigaltstack(&ss, NULL);	/* per thread; freed with the process */
	}
	pthread_once(&once, segv_install);
}
