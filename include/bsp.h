/*
 * bsp.h - the BSPlib interface of pems, in two dialects.
 *
 * Default: MulticoreBSP for C signatures (bsp_pid_t / bsp_nprocs_t are
 * unsigned int, bsp_size_t is size_t), which BSPonMPI also accepts in
 * its compatibility mode.
 *
 * With -DBSPLIB_1998 (pkg-config pems-bsplib1998): the signatures of the
 * BSPlib standard (Hill et al., 1998) as the Oxford toolset and BSPonMPI
 * declare them: int pids, counts and sizes, bsp_qsize(int *, int *),
 * bsp_get_tag(int *, void *), bsp_set_tagsize(int *), int bsp_hpmove.
 * The calls whose argument or result types differ are separate entry
 * points of the library (bsp98_*), so both dialects can be linked into
 * one program; a negative int size, or a size the int dialect cannot
 * report (above INT_MAX), aborts with a message naming the call.
 *
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

#ifdef BSPLIB_1998
typedef int bsp_pid_t;
typedef int bsp_size_t;
typedef int bsp_nprocs_t;
/* the 1998 entry points: same name in C, own symbol in the library */
#if defined(__GNUC__)
#define PEMS_BSP98(name) __asm__("bsp98_" #name)
#else
#define PEMS_BSP98(name)
#define bsp_push_reg bsp98_push_reg
#define bsp_put bsp98_put
#define bsp_hpput bsp98_hpput
#define bsp_get bsp98_get
#define bsp_hpget bsp98_hpget
#define bsp_set_tagsize bsp98_set_tagsize
#define bsp_send bsp98_send
#define bsp_qsize bsp98_qsize
#define bsp_get_tag bsp98_get_tag
#define bsp_move bsp98_move
#define bsp_hpmove bsp98_hpmove
#endif
#else
typedef unsigned int bsp_pid_t;
typedef size_t bsp_size_t;
typedef unsigned int bsp_nprocs_t;
#define PEMS_BSP98(name)
#endif

/* Start of the SPMD program when main() is not the SPMD function: call
 * bsp_init(spmd, argc, argv) first thing in main, then spmd(). */
PEMS_API void bsp_init(void (*spmd)(void), int argc, char **argv);
/* Start the SPMD section on exactly @maxprocs VPs (fewer only when
 * PEMS_PROCS sets a smaller machine; 0: bsp_nprocs()).  Code after
 * bsp_end() runs on VP 0 only. */
PEMS_API void bsp_begin(bsp_pid_t maxprocs);
PEMS_API void bsp_end(void);
/* Print the message on stderr and end the whole program with status 1. */
PEMS_API void bsp_abort(const char *format, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* v, the number of VPs; before bsp_begin the virtual machine's size:
 * PEMS_PROCS, or PEMS_DEFAULT_PROCS (1024) when it is not set. */
PEMS_API bsp_pid_t bsp_nprocs(void);
PEMS_API bsp_pid_t bsp_pid(void);
/* Seconds of wall-clock time since bsp_begin. */
PEMS_API double bsp_time(void);
/* End the superstep: communication of this superstep is delivered before
 * the next one starts.  Collective: every VP must call it. */
PEMS_API void bsp_sync(void);

/* Registration (collective, same order on every VP); takes effect at the
 * next bsp_sync.  pop removes the most recent registration of @ident. */
PEMS_API void bsp_push_reg(const void *ident, bsp_size_t size) PEMS_BSP98(push_reg);
PEMS_API void bsp_pop_reg(const void *ident);

/* DRMA.  bsp_put copies @src at call time; the data lands at @dst+offset
 * on @pid at the next sync.  bsp_get reads the value @pid holds at the
 * end of this superstep (before that superstep's puts).  The hp variants
 * have the same semantics here (copies are already unbuffered on disk). */
PEMS_API void bsp_put(bsp_pid_t pid, const void *src, void *dst,
		      bsp_size_t offset, bsp_size_t nbytes) PEMS_BSP98(put);
PEMS_API void bsp_hpput(bsp_pid_t pid, const void *src, void *dst,
			bsp_size_t offset, bsp_size_t nbytes) PEMS_BSP98(hpput);
PEMS_API void bsp_get(bsp_pid_t pid, const void *src, bsp_size_t offset,
		      void *dst, bsp_size_t nbytes) PEMS_BSP98(get);
PEMS_API void bsp_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset,
			void *dst, bsp_size_t nbytes) PEMS_BSP98(hpget);

/* BSMP.  The tag size takes effect at the next sync (collective);
 * *tag_bytes returns the previous size. */
PEMS_API void bsp_set_tagsize(bsp_size_t *tag_bytes) PEMS_BSP98(set_tagsize);
PEMS_API void bsp_send(bsp_pid_t pid, const void *tag, const void *payload,
		       bsp_size_t payload_bytes) PEMS_BSP98(send);
/* Messages still queued this superstep and the sum of their payloads. */
PEMS_API void bsp_qsize(bsp_nprocs_t *packets, bsp_size_t *accum_bytes) PEMS_BSP98(qsize);
/* *status = payload size of the first queued message, or (bsp_size_t)-1
 * (-1 in the 1998 dialect) when the queue is empty; its tag is copied to
 * @tag. */
PEMS_API void bsp_get_tag(bsp_size_t *status, void *tag) PEMS_BSP98(get_tag);
/* Copy at most @reception_bytes of the first message's payload and
 * dequeue it. */
PEMS_API void bsp_move(void *payload, bsp_size_t reception_bytes) PEMS_BSP98(move);
/* Point at the first message's tag and payload (valid until the next
 * sync), dequeue it and return its size; SIZE_MAX (-1 in the 1998
 * dialect) when empty. */
PEMS_API bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr) PEMS_BSP98(hpmove);

#ifdef __cplusplus
}
#endif
#endif
