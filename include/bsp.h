/*
 * bsp.h - the BSPlib interface of pems.
 *
 * Signatures follow MulticoreBSP for C (bsp_pid_t / bsp_size_t /
 * bsp_nprocs_t are unsigned / size_t), which BSPonMPI also accepts in its
 * compatibility mode, so existing BSPlib programs compile unmodified.
 * Misuse calls bsp_abort() with a message that starts with the name of
 * the function; the process then exits with status 1.
 *
 * pems runs the SPMD part on v virtual processors (VPs) whose memory may
 * live on disk between supersteps; see pems.h for the extensions and for
 * PEMS_CONTEXT_MALLOC, which makes malloc() allocate inside the VP's
 * context so that it spills too.
 */
#ifndef BSP_H
#define BSP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define PEMS_API __attribute__((visibility("default")))
#else
#define PEMS_API
#endif

typedef unsigned int bsp_pid_t;
typedef size_t bsp_size_t;
typedef unsigned int bsp_nprocs_t;

/* Start of the SPMD program when main() is not the SPMD function: call
 * bsp_init(spmd, argc, argv) first thing in main, then spmd(). */
PEMS_API void bsp_init(void (*spmd)(void), int argc, char **argv);
/* Start the SPMD section on @maxprocs VPs (PEMS_PROCS overrides it).
 * Code after bsp_end() runs on VP 0 only. */
PEMS_API void bsp_begin(bsp_pid_t maxprocs);
PEMS_API void bsp_end(void);
/* Print the message on stderr and end the whole program with status 1. */
PEMS_API void bsp_abort(const char *format, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* v, the number of VPs (before bsp_begin: the number that would be used). */
PEMS_API bsp_pid_t bsp_nprocs(void);
PEMS_API bsp_pid_t bsp_pid(void);
/* Seconds of wall-clock time since bsp_begin. */
PEMS_API double bsp_time(void);
/* End the superstep: communication of this superstep is delivered before
 * the next one starts.  Collective: every VP must call it. */
PEMS_API void bsp_sync(void);

/* Registration (collective, same order on every VP); takes effect at the
 * next bsp_sync.  pop removes the most recent registration of @ident. */
PEMS_API void bsp_push_reg(const void *ident, bsp_size_t size);
PEMS_API void bsp_pop_reg(const void *ident);

/* DRMA.  bsp_put copies @src at call time; the data lands at @dst+offset
 * on @pid at the next sync.  bsp_get reads the value @pid holds at the
 * end of this superstep (before that superstep's puts).  The hp variants
 * have the same semantics here (copies are already unbuffered on disk). */
PEMS_API void bsp_put(bsp_pid_t pid, const void *src, void *dst,
		      bsp_size_t offset, bsp_size_t nbytes);
PEMS_API void bsp_hpput(bsp_pid_t pid, const void *src, void *dst,
			bsp_size_t offset, bsp_size_t nbytes);
PEMS_API void bsp_get(bsp_pid_t pid, const void *src, bsp_size_t offset,
		      void *dst, bsp_size_t nbytes);
PEMS_API void bsp_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset,
			void *dst, bsp_size_t nbytes);

/* BSMP.  The tag size takes effect at the next sync (collective);
 * *tag_bytes returns the previous size. */
PEMS_API void bsp_set_tagsize(bsp_size_t *tag_bytes);
PEMS_API void bsp_send(bsp_pid_t pid, const void *tag, const void *payload,
		       bsp_size_t payload_bytes);
/* Messages still queued this superstep and the sum of their payloads. */
PEMS_API void bsp_qsize(bsp_nprocs_t *packets, bsp_size_t *accum_bytes);
/* *status = payload size of the first queued message, or (bsp_size_t)-1
 * when the queue is empty; its tag is copied to @tag. */
PEMS_API void bsp_get_tag(bsp_size_t *status, void *tag);
/* Copy at most @reception_bytes of the first message's payload and
 * dequeue it. */
PEMS_API void bsp_move(void *payload, bsp_size_t reception_bytes);
/* Point at the first message's tag and payload (valid until the next
 * sync), dequeue it and return its size; SIZE_MAX when empty. */
PEMS_API bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr);

#ifdef __cplusplus
}
#endif
#endif
