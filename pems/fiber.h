/*
 * fiber.h - announcing VP stack switches to the sanitizers (sched.c).
 *
 * Included by sched.c only: a switch is FIBER_START + tsan_enter/leave
 * right before swapcontext/setcontext and FIBER_FINISH right after.
 * The TSan hooks are always inlined: a call frame of their own would be
 * entered on one fiber and left on another.
 */
#ifndef PEMS_FIBER_H
#define PEMS_FIBER_H

#include <stdbool.h>
#include <stddef.h>

#include "rt.h"

/*
 * Stack switches are announced to AddressSanitizer (a VP's stack lives in
 * its context slice): without it ASan cannot tell a switch from a stack
 * overflow and reports false positives.  No-ops in other builds.
 */
#if defined(__SANITIZE_ADDRESS__)
#define PEMS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PEMS_ASAN 1
#endif
#endif
#ifdef PEMS_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
				     size_t *size_old);
void __lsan_register_root_region(const void *p, size_t size);
#define FIBER_START(save, lo, n) __sanitizer_start_switch_fiber((save), (lo), (n))
#define FIBER_FINISH(save, lo, n) __sanitizer_finish_switch_fiber((save), (lo), (n))
/* A parked stack no thread runs on is not scanned for pointers: name it
 * a root so that what only it references is not reported as leaked. */
#define FIBER_ROOT(lo, n) __lsan_register_root_region((lo), (n))
#else
#define FIBER_START(save, lo, n) ((void)(save), (void)(lo), (void)(n))
#define FIBER_FINISH(save, lo, n) ((void)(save), (void)(lo), (void)(n))
#define FIBER_ROOT(lo, n) ((void)(lo), (void)(n))
#endif

/*
 * ThreadSanitizer is told the same (make tsan): each VP is a TSan fiber,
 * created when its ucontext is made and switched to right before every
 * swapcontext/setcontext into or out of it.  Without this TSan takes a
 * VP resumed on another thread for a race with itself, and its shadow
 * stack breaks at the first switch.  Switches synchronise (flag 0): the
 * worker hands the VP's memory over to the VP and back, as swapcontext
 * does on one thread.  No-ops in other builds.
 */
#if defined(__SANITIZE_THREAD__)
#define PEMS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PEMS_TSAN 1
#endif
#endif
#ifdef PEMS_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
void __tsan_func_entry(void *call_pc);
/* the fiber of the worker (thread) that runs the current VP (sched.c) */
extern __thread void *pems_tsan_worker;
/* Frames given to the fiber of a VP restored from a checkpoint: it goes
 * on in the middle of the calls it was saved in, and every return out of
 * them pops TSan's shadow stack of its new, empty fiber; without these
 * the pops run below its start (a crash inside TSan at the next report
 * or mutex).  More than any chain from a VP's function to its switch. */
#define TSAN_RESUME_FRAMES 64
/* worker -> VP: remember where to come back to, enter the VP's fiber;
 * made: the VP's context comes from makecontext (not a checkpoint) */
static inline __attribute__((always_inline)) void tsan_enter(struct pems_vp *vp, bool made)
{
	bool fresh = !vp->tsan_fiber;
	int i;

	if (fresh)
		vp->tsan_fiber = __tsan_create_fiber(0);
	pems_tsan_worker = __tsan_get_current_fiber();
	__tsan_switch_to_fiber(vp->tsan_fiber, 0);
	for (i = 0; fresh && !made && i < TSAN_RESUME_FRAMES; i++)
		__tsan_func_entry(__builtin_return_address(0));
}
/* VP -> worker, on the VP's stack */
static inline __attribute__((always_inline)) void tsan_leave(void)
{
	__tsan_switch_to_fiber(pems_tsan_worker, 0);
}
/* after the VP has ended for good (never on its own fiber) */
static inline void tsan_drop(struct pems_vp *vp)
{
	if (vp->tsan_fiber)
		__tsan_destroy_fiber(vp->tsan_fiber);
	vp->tsan_fiber = NULL;
}
#else
#define tsan_enter(vp, made) ((void)(vp), (void)(made))
#define tsan_leave() ((void)0)
#define tsan_drop(vp) ((void)(vp))
#endif

#endif
