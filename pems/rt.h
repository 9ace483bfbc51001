/*
 * rt.h - the runtime's own objects, shared by the modules of pems/
 * (never seen by bsp/: it gets pems/api/pems_rt.h).
 *
 * Objects (all per rank):
 *   struct pems_rt      the runtime: config, VP table, workers, files
 *   struct pems_vp      one virtual processor (pems_rt.h): its slice of
 *                       the context region, saved registers, heap and
 *                       BSP state
 *   struct pems_worker  one OS thread that runs VPs, with its own I/O
 *                       engine and its own outgoing message streams
 * Each module declares its functions in its own header (ckpt.h,
 * coll.h, config.h, ctx.h, msg.h, sched_parts.h, spill.h,
 * tp.h); see context.c, msg.c and sched.c for the invariants.
 */
#ifndef PEMS_RT_H
#define PEMS_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

#include "pems_rt.h"
#include "pems_io.h"

#define PEMS_SLOTS 3			/* contexts per worker: run, prefetch, write-back */
#define PEMS_FIXED_OVERHEAD (16u << 20)	/* runtime tables, engines, bounce buffers */
#define PEMS_PAGE 4096u
#define PEMS_NONE UINT64_MAX
#define PEMS_NLOGS 3		/* message logs per worker at most (msg.c 4) */
#define PEMS_MSG_RA 4	/* message chunks read ahead per stream */
#define PEMS_MIN_SCRATCH (64u << 20)	/* bytes free a scratch dir must have */
/* most bytes of address space a rank reserves for contexts (v * mu; x86-64
 * user space is 128 TiB) */
#define PEMS_MAX_REGION ((size_t)1 << 45)

/* what config.c derives from the configuration */
struct pems_derived {
	size_t fixed, msg_budget, ctx_budget;
	size_t chunk;		/* message chunk bytes */
};

struct pems_chunk;
struct pems_wspill;
/* A spilled block as stored: how to check and unpack it (spill.h). */
struct pems_blk {
	uint32_t crc;		/* CRC-32C of the stored bytes (raw: all; compressed: the frame) */
	uint32_t stored;	/* bytes written, before padding to 4 KiB */
	bool z;			/* compressed: header + frame, else raw */
};
struct pems_stream {
	struct pems_chunk *head, *tail;
};

/* io completions: every request the runtime submits is embedded in one */
struct pems_ioop {
	struct pems_io_req req;
	void (*done)(struct pems_worker *w, struct pems_ioop *op);
	void *obj;
};

struct pems_worker {
	struct pems_rt *rt;
	unsigned id;
	pthread_t thread;
	struct pems_io *io;
	ucontext_t uc;			/* the worker's own context */
	const void *stack_lo;		/* its stack, for ASan's fiber switches */
	size_t stack_size;
	void *fake_stack;
	struct pems_vp *cur;
	unsigned writebacks;		/* contexts this worker is writing back */
	unsigned file_aio;		/* pems_file_start transfers not yet waited for */
	/* outgoing message streams for this superstep, by global pid */
	struct pems_stream *out;
	uint64_t net_sent;		/* bytes handed to the transport */
	int msg_fd[PEMS_NLOGS];		/* message logs (msg.c 4) */
	uint64_t msg_off[PEMS_NLOGS];
	uint64_t msg_alloc[PEMS_NLOGS];	/* bytes fallocated ahead of msg_off */
	/* get requests issued by VPs this worker ran */
	struct pems_get *gets;
	size_t ngets, capgets;
	/* statistics: written by this worker only, but read by
	 * pems_get_stats() from any VP while the workers run, so atomic
	 * (each update is one per request or per VP run, not per byte) */
	_Atomic uint64_t ctx_read, ctx_written, msg_read, msg_written, msg_held;
	_Atomic uint64_t file_read, file_written, h_bytes, h_max;
	_Atomic uint64_t compute_ns, io_wait_ns;	/* (no atomic double without libatomic) */
	/* read-ahead bounce buffers for delivery: two reader sets (the VP
	 * being delivered and the next one, prefetched) of k streams */
	char *bounce;
	size_t bounce_size;
	void *readers;
	struct pems_vp *pref[2];
	struct pems_wspill *spill;	/* compression state (spill.c), or NULL */
};

struct pems_coll_state {
	pthread_mutex_t lock;
	enum pems_coll_kind kind;
	int calls;			/* VPs that contributed this superstep */
	size_t count, elem, bytes;	/* elements, element size, bytes per VP */
	enum pems_type type;
	enum pems_op op;
	pems_user_op uop;
	unsigned root;
	bool user;
	char *contrib;			/* vlocal * bytes */
	const char *name;		/* API function, for messages */
	/* results of the previous superstep, delivered at swap-in */
	char *result;			/* combined (bytes), or gather (v*bytes) */
	size_t rcap;
	size_t cap;
};

struct pems_rt {
	struct pems_config cfg;
	struct pems_derived d;
	unsigned v, vlocal, first;	/* VPs: total, on this rank, first pid */
	unsigned k;
	unsigned rank, nranks;
	size_t mu, stack;
	char *region;			/* vlocal * mu bytes, MAP_NORESERVE */
	struct pems_vp *vps;
	struct pems_worker *workers;
	/* context files, one per scratch dir, in two copies when
	 * checkpointing (checkpoint.c 2) */
	int ctx_fd[2][PEMS_MAX_TMP];
	char *tmpdir[PEMS_MAX_TMP];
	unsigned ndirs;
	/* superstep control */
	uint64_t superstep;
	unsigned wlog, rlog;		/* message log written / read this superstep */
	int plog;			/* log a checkpoint needs, or -1 (msg.c 4) */
	unsigned nlogs;			/* 2, or 3 when checkpointing */
	struct pems_ckpt *ckpt;		/* NULL when not checkpointing */
	bool vps_mapped;		/* vps lives in the fixed mapping (context.c) */
	atomic_uint next_vp;
	pthread_mutex_t lock;
	pthread_cond_t go, done;
	uint64_t go_gen;
	unsigned workers_done;
	bool quit;
	unsigned ended;			/* VPs that reached bsp_end / returned */
	bool post_bsp;			/* VP 0 runs on after bsp_end */
	/* budget */
	atomic_size_t resident;		/* bytes of context memory held */
	atomic_size_t peak_resident;	/* statistics: an atomic max (context.c) */
	size_t cache_limit;		/* finished VPs may stay resident below this */
	atomic_size_t cached;		/* bytes of such cached VPs (and held chunks) */
	atomic_size_t ctx_peak;		/* largest context a VP finished with */
	size_t rest_budget;		/* context.c (4): budget minus k run slots */
	/* messages: incoming streams of the previous superstep, by origin
	 * (rank * k + worker) and local destination; in_next is being
	 * filled by the transport for the next superstep */
	struct pems_stream *in;		/* nranks * k * vlocal */
	struct pems_stream *in_next;
	unsigned norigins;		/* nranks * k */
	unsigned ra;			/* chunks read ahead per origin stream */
	struct pems_tp *tp;		/* NULL on one rank */
	struct pems_worker *tpw;	/* the comm thread's worker: engine, logs */
	size_t chunk_size;
	pthread_mutex_t pool_lock;
	char *pool_free;		/* free list of chunk buffers */
	struct pems_slab *slabs;	/* what the chunk buffers are cut from */
	size_t pool_count, pool_max;
	/* by global pid (summed over ranks at the barrier) */
	atomic_uint_fast64_t *xchg_in;	/* exchange bytes addressed to each VP */
	atomic_uint_fast64_t *xchg_in_next;
	atomic_uint_fast64_t *send_in, *send_in_next;	/* BSMP bytes, incl. tags */
	atomic_uint *send_cnt, *send_cnt_next;
	/* get replies for the next superstep (sorted by requester) */
	struct pems_get *replies;
	char *reply_data;
	size_t nreplies;
	size_t *reply_first;		/* vlocal + 1 */
	/* collectives */
	struct pems_coll_state coll;
	/* statistics */
	double t0;
	uint64_t supersteps;
	uint64_t h_max;
	uint64_t gets_read;		/* context bytes read to serve bsp_get */
	void (*progress)(uint64_t, void *);
	void *progress_arg;
	int exit_code;
	void (*entry)(void *);
	void *entry_arg;
	/* per-VP globals (globals.c) */
	enum pems_globals_mode globals;
	pthread_mutex_t globals_lock;	/* held by the VP computing (globals.c 3) */
};

/* per-VP globals (globals.c): the mode of the run starting now (once);
 * install @vp's copy before it computes (@lock: take globals_lock) and
 * save it after */
size_t pems_globals_size(void);
enum pems_globals_mode pems_globals_take(void);
void pems_globals_in(struct pems_rt *rt, struct pems_vp *vp, bool lock);
void pems_globals_out(struct pems_rt *rt, struct pems_vp *vp);

extern struct pems_rt *pems_rt;	/* NULL outside the SPMD section */

double pems_now(void);
const char *pems_size_str(char buf[32], size_t bytes);
void pems_set_thread_worker(struct pems_worker *w);

/* one chunk of a message stream (msg.c): in memory (buf) or written to a
 * log (fd, off); checkpoint.c saves the streams of the next superstep */
struct pems_chunk {
	struct pems_chunk *next;
	char *buf;		/* NULL once written and released */
	size_t len;
	uint64_t off;		/* offset in the log, PEMS_NONE while in memory */
	int fd;
	struct pems_ioop op;
	bool writing;
	bool held;		/* buf is a full chunk kept in memory (msg.c 7) */
	struct pems_blk blk;	/* as stored (msg.c invariant 6) */
	uint64_t step;		/* superstep it was written in */
	unsigned writer;	/* worker that wrote it (k: the comm thread) */
};

#endif
