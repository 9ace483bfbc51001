/*
 * pems_rt.h - the runtime as the BSP layer (bsp/) sees it: a VP and its
 * BSP state, and the calls that start, suspend and end VPs, send
 * messages, contribute to collectives, look up registrations and do
 * file I/O.  The only pems/ header on bsp/'s include path (Makefile);
 * the rest of the runtime (struct pems_rt, workers, the modules) stays
 * behind pems/rt.h and the per-module headers in pems/.
 */
#ifndef PEMS_RT_API_H
#define PEMS_RT_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "pems.h"

struct pems_worker;		/* an OS thread running VPs (opaque here) */
struct pems_ioop;
struct pems_blk;

/* ---- in-context heap (heap.c) ---- */
struct pems_heap {
	char *base;		/* slice start */
	size_t limit;		/* bytes usable by the heap */
	size_t brk;		/* bytes in use from base (top of the last block) */
	size_t free_head;	/* offset of first free block, or 0 (none) */
	size_t touched;		/* high-water of brk since pages were released */
	size_t last;		/* offset of the last block, 0 when empty */
};
void pems_heap_init(struct pems_heap *h, char *base, size_t limit);
/* NULL when the heap cannot grow to fit @n bytes. */
void *pems_heap_alloc(struct pems_heap *h, size_t n);
void pems_heap_free(struct pems_heap *h, void *p);
void pems_heap_hint(void *p, size_t n);
size_t pems_heap_usable(const struct pems_heap *h, const void *p);
bool pems_heap_owns(const struct pems_heap *h, const void *p);

/* ---- registration (reg.c) ---- */
struct pems_reg {
	uint64_t id;		/* push sequence number, equal on every VP */
	char *addr;
	size_t size;
	uint64_t born;		/* superstep of the push (usable from born+1) */
	uint64_t died;		/* superstep of the pop, or PEMS_NONE */
};
struct pems_vp;
struct pems_reg *pems_reg_find_addr(struct pems_vp *vp, const void *addr, uint64_t step);
struct pems_reg *pems_reg_find_id(struct pems_vp *vp, uint64_t id);
/* Register @size bytes at @addr in superstep @step: 0 or -ENOMEM. */
int pems_reg_push(struct pems_vp *vp, const void *addr, size_t size, uint64_t step);
/* Pop the latest live registration of @addr: 0, or -ENOENT (none). */
int pems_reg_pop(struct pems_vp *vp, const void *addr, uint64_t step);
/* At the sync ending superstep @step: forget what is no longer used. */
void pems_reg_compact(struct pems_vp *vp, uint64_t step);

/* pending collective of a VP: what to deliver at its next swap-in */
enum pems_coll_kind { COLL_NONE = 0, COLL_REDUCE, COLL_BCAST, COLL_GATHER,
		      COLL_EXSCAN, COLL_ALLTOALLV, COLL_EXCHANGE };
struct pems_coll_wait {
	enum pems_coll_kind kind;
	void *out;
	size_t bytes;		/* bytes of out */
	bool user_op;		/* a user operator combined it (VP 0's exscan
				 * out stays as it was); kept here, not read
				 * from rt->coll, which the next superstep's
				 * first call rewrites while others deliver */
	/* exchange / alltoallv */
	void **recvbuf;
	size_t *recvbytes, *recvcounts;
	const size_t *rdispls;
	const size_t *acounts;	/* alltoallv: bytes expected from each source */
	char *abuf;		/* alltoallv receive base */
};

enum pems_vp_state { VP_NEW = 0, VP_READY, VP_RUNNING, VP_ENDED };
enum pems_vp_where { VP_DISK = 0, VP_RESIDENT, VP_LOADING, VP_WRITING };

struct pems_vp {
	unsigned pid;		/* global id */
	unsigned lid;		/* index on this rank */
	enum pems_vp_state state;
	enum pems_vp_where where;
	ucontext_t uc;
	char *base;		/* slice: [base, base + mu) */
	struct pems_heap heap;
	size_t sp_off;		/* lowest live stack byte (page-aligned) at suspend */
	size_t disk_heap;	/* bytes [0, disk_heap) on disk */
	size_t disk_sp;		/* [disk_sp, mu) on disk */
	size_t reserved;	/* bytes of the context budget held */
	int pending_io;		/* swap requests in flight */
	bool ended_at_end;	/* left via bsp_end (not via return) */
	/* registration */
	struct pems_reg *regs;
	unsigned nregs, capregs;
	uint64_t next_reg_id;
	/* BSMP: the queue lives in one heap block, valid for one superstep */
	char *q_buf;
	size_t q_pos, q_len;	/* byte cursor and length of q_buf */
	unsigned q_count;
	size_t tagsize, tagsize_next;
	/* collectives: combining ones, and alltoallv/exchange (may share a superstep) */
	struct pems_coll_wait coll;
	struct pems_coll_wait xchg;
	/* this superstep's counters */
	uint64_t sent_bytes;
	/* synchronisation hygiene */
	uint64_t sync_count;
	bool keep;		/* wanted back while its write-back is in flight */
	bool past_end;		/* VP 0 running on after bsp_end */
	bool cached;		/* resident between supersteps (counted in rt->cached) */
	size_t cached_bytes;
	struct pems_ioop *ops;	/* two swap requests (heap, stack) */
	uint8_t copy;		/* context file copy holding the extents on disk */
	uint8_t ckpt_copy;	/* the copy the last checkpoint refers to */
	/* what is on disk, for checking it when read (context.c, spill.h) */
	struct pems_blk *blk;	/* nblk heap blocks of PEMS_CTX_BLOCK bytes, then the stack */
	unsigned nblk, capblk;
	uint64_t disk_step;	/* superstep of the last write-back */
	bool zimage;		/* written block by block (compression on) */
	unsigned znext;		/* next block to start (block-by-block transfer) */
	void *fake_stack;	/* ASan's fake stack while suspended */
	void *tsan_fiber;	/* TSan's fiber of this VP (sched.c), or NULL */
	char *globals;		/* its copy of the program's globals, in its
				 * heap, or NULL (globals.c) */
	bool native;		/* the thread that called bsp_begin: its stack
				 * is that thread's own, outside the slice
				 * (sched.c, pems_rt_begin) */
};

/* The VP running on this thread, or NULL (never cached across a sync:
 * a VP may resume on another thread); the worker running it. */
struct pems_vp *pems_self(void);
struct pems_worker *pems_self_worker(void);
_Noreturn void pems_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void pems_die(int status);

/* ---- the run (sched.c) ---- */
/* Run @entry(@arg) on every VP with @cfg (copied; NULL: the one of
 * pems_configure, else the environment's) and @maxprocs (bsp_begin's,
 * or 0).  Returns the exit code VP 0 set, or -errno / -PEMS_E_*. */
int pems_rt_run(const struct pems_config *cfg, void (*entry)(void *), void *arg,
		unsigned maxprocs);
/* bsp_begin on the initial thread: run as pems_rt_run (cfg NULL), the
 * caller going on as the first VP of this rank; returns in that VP.
 * Exits the process when the run ends without it (1 if the runtime
 * cannot start). */
void pems_rt_begin(void (*entry)(void *), void *arg, unsigned maxprocs);

/* ---- per-VP globals (globals.c) ---- */
/* off (the VPs of a rank share them), copies starting as the image
 * before main (VPs that run main from its start), or as the globals at
 * bsp_begin (VPs that start at the bsp_init function, and the caller) */
enum pems_globals_mode { PEMS_GLOBALS_OFF = 0, PEMS_GLOBALS_IMAGE, PEMS_GLOBALS_FORK };
/* bsp_begin: the next run gives its VPs copies (@mode); saves the
 * globals as they are now. */
void pems_globals_begin(enum pems_globals_mode mode);
/* Where the runtime must read or write @addr of @vp while it is not
 * computing: its copy for a global address, else @addr.  For what bsp/
 * records to deliver later (registrations, get destinations, outputs). */
void *pems_globals_addr(struct pems_vp *vp, const void *addr);
/* Inside a run: VPs in all, this rank, the superstep, seconds since
 * the start; false / 0 outside. */
bool pems_rt_running(void);
unsigned pems_rt_procs(void);
unsigned pems_rt_rank(void);
uint64_t pems_rt_superstep(void);
double pems_rt_time(void);
/* The process exit code of a bsp_begin program (VP 0's main's). */
void pems_rt_set_exit(int code);
void pems_vp_sync(void);	/* suspend the calling VP until the next superstep */
_Noreturn void pems_vp_end(void);
void pems_vp_end_keep(void);	/* bsp_end on VP 0: it runs on after the run */

/* ---- messages (msg.c) ---- */
enum pems_rec_type {
	REC_PUT = 1,		/* a = slot id, b = offset */
	REC_SEND = 2,		/* a = tag bytes (tag precedes payload) */
	REC_RAW = 3,		/* a = absolute destination address (get replies) */
	REC_XCHG = 4,		/* alltoallv / exchange payload */
};
struct pems_rec {
	uint32_t type;
	uint32_t src;
	uint64_t len;		/* payload bytes */
	uint64_t a, b;
};
/* Append record @r for VP @dst with its payload (@p1, @n1 then @p2, @n2). */
void pems_msg_append(struct pems_worker *w, unsigned dst, const struct pems_rec *r,
		     const void *p1, size_t n1, const void *p2, size_t n2);
/* Count @bytes of BSMP queue (@send) or of exchange payload for VP @dst
 * of the next superstep (summed over ranks at the barrier). */
void pems_msg_count(unsigned dst, bool send, size_t bytes);

/* ---- collectives and gets (coll.c) ---- */
struct pems_get {
	unsigned target, requester;
	uint64_t slot;
	size_t offset, nbytes;
	char *dst;
	uint64_t seq;		/* issue order; after serving: offset in reply_data */
};
void pems_get_record(struct pems_worker *w, const struct pems_get *g);
void pems_coll_contribute(struct pems_vp *vp, const char *name, enum pems_coll_kind kind,
			  const void *in, size_t count, size_t elem, enum pems_type type,
			  enum pems_op op, pems_user_op uop, unsigned root);
size_t pems_type_size(enum pems_type t);

/* ---- the file service behind pems_file_* (fileio.c) ----
 * The same arguments and results as the API; pems_fio_foreign: @aio
 * was started on another worker (then pems_fio_wait must not be called). */
int pems_fio_open(const char *path, int flags, int mode);
int pems_fio_close(int h);
long long pems_fio_rw(int h, bool write, void *buf, size_t len, uint64_t off);
int pems_fio_start(int h, bool write, void *buf, size_t len, uint64_t off,
		   struct pems_file_aio *aio);
bool pems_fio_foreign(const struct pems_file_aio *aio);
long long pems_fio_wait(struct pems_file_aio *aio);
long long pems_fio_read_pieces(int h, void *out, const uint64_t *offs, size_t n, size_t len);

#endif
