/*
 * runtime.h - internals of the pems runtime (layer pems/), used by bsp/.
 *
 * Objects (all per rank):
 *   struct pems_rt      the runtime: config, VP table, workers, files
 *   struct pems_vp      one virtual processor: its slice of the context
 *                       region, saved registers, heap and BSP state
 *   struct pems_worker  one OS thread that runs VPs, with its own I/O
 *                       engine and its own outgoing message streams
 * See context.c, msg.c and sched.c for the invariants of each part.
 */
#ifndef PEMS_RUNTIME_H
#define PEMS_RUNTIME_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <ucontext.h>

#include "pems.h"
#include "pems_io.h"

#define PEMS_SLOTS 3			/* contexts per worker: run, prefetch, write-back */
#define PEMS_FIXED_OVERHEAD (16u << 20)	/* runtime tables, engines, bounce buffers */
#define PEMS_PAGE 4096u
#define PEMS_NONE UINT64_MAX
/* most bytes of address space a rank reserves for contexts (v * mu; x86-64
 * user space is 128 TiB) */
#define PEMS_MAX_REGION ((size_t)1 << 45)
#define PEMS_NLOGS 3		/* message logs per worker at most (msg.c 4) */

struct pems_derived {
	size_t fixed, msg_budget, ctx_budget;
	size_t chunk;		/* message chunk bytes */
};
#define PEMS_MSG_RA 4	/* message chunks read ahead per stream */
int pems_config_derive(struct pems_config *cfg, unsigned maxprocs,
		       struct pems_derived *d);
/* The configuration of pems_configure, else of the environment (read
 * once): 0, or pems_config_init's error (printed once). */
int pems_config_default(struct pems_config *out);
/* context.c (4): bytes of the rest pool @rest that held message chunks
 * and cached contexts may take, k workers, contexts of @ctx (config.c) */
size_t pems_hold_limit(size_t rest, unsigned k, size_t ctx);
/* What pems_configure refuses: 0 or -EINVAL. */
int pems_config_check(const struct pems_config *cfg);

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

/* ---- registration ---- */
struct pems_reg {
	uint64_t id;		/* push sequence number, equal on every VP */
	char *addr;
	size_t size;
	uint64_t born;		/* superstep of the push (usable from born+1) */
	uint64_t died;		/* superstep of the pop, or PEMS_NONE */
};

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
	char *globals;		/* its copy of the program's globals, in its
				 * heap, or NULL (globals.c) */
	bool native;		/* the thread that called bsp_begin: its stack
				 * is that thread's own, outside the slice
				 * (sched.c, pems_rt_begin) */
	void *tsan_fiber;	/* TSan's fiber of this VP (sched.c), or NULL */
};

struct pems_get {
	unsigned target, requester;
	uint64_t slot;
	size_t offset, nbytes;
	char *dst;
	uint64_t seq;		/* issue order; after serving: offset in reply_data */
};

/* per-VP globals (globals.c): off (shared by the VPs of a rank), copies
 * starting as the image before main (VPs that run main from its start),
 * or as the globals at bsp_begin (VPs that start at the bsp_init one) */
struct pems_rt;
enum pems_globals_mode { PEMS_GLOBALS_OFF = 0, PEMS_GLOBALS_IMAGE, PEMS_GLOBALS_FORK };
size_t pems_globals_size(void);
void pems_globals_begin(enum pems_globals_mode mode);
enum pems_globals_mode pems_globals_take(void);
void *pems_globals_addr(struct pems_vp *vp, const void *addr);
void pems_globals_in(struct pems_rt *rt, struct pems_vp *vp, bool lock);
void pems_globals_out(struct pems_rt *rt, struct pems_vp *vp);

struct pems_ioop;
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

extern struct pems_rt *pems_rt;	/* NULL outside the SPMD section */

/* The VP running on this thread, or NULL (never cached across a sync:
 * a VP may resume on another thread). */
struct pems_vp *pems_self(void);
struct pems_worker *pems_self_worker(void);
_Noreturn void pems_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double pems_now(void);
const char *pems_size_str(char buf[32], size_t bytes);

/* runtime lifecycle (sched.c) */
/* Run @entry(@arg) on every VP with @cfg (copied; NULL:
 * pems_config_default) and @maxprocs (bsp_begin's, or 0). */
int pems_rt_run(const struct pems_config *cfg, void (*entry)(void *), void *arg,
		unsigned maxprocs);
/* bsp_begin on the initial thread: run as pems_rt_run (cfg NULL), the
 * caller going on as the first VP of this rank; returns in that VP.
 * Exits the process when the run ends without it (1 if the runtime
 * cannot start). */
void pems_rt_begin(void (*entry)(void *), void *arg, unsigned maxprocs);
void pems_vp_end_keep(void);
_Noreturn void pems_die(int status);
extern void (*pems_progress_fn)(uint64_t, void *);
extern void *pems_progress_arg;
#define PEMS_MIN_SCRATCH (64u << 20)	/* bytes free a scratch dir must have */
void pems_vp_sync(void);	/* suspend the calling VP until the next superstep */
_Noreturn void pems_vp_end(void);

/* signals and the stack-overflow guard (abort.c): once per worker thread */
void pems_segv_setup(void);

/* scratch dirs (scratch.c): check and expand rt->cfg.tmp into
 * rt->tmpdir, open the context files; then open file @name in dir @dir
 * (unlinked unless a checkpoint needs it).  0 or -errno, message printed */
int pems_scratch_setup(struct pems_rt *rt);
int pems_scratch_open(struct pems_rt *rt, unsigned dir, const char *name, int *fd_out);

/* statistics (stats.c): after each superstep (PEMS_STATS=2 prints one
 * line), and at the end of the run (summed over ranks, printed, JSON) */
void pems_stats_step(struct pems_rt *rt, double t_start);
void pems_stats_final(struct pems_rt *rt);

/* context swapping (context.c) */
int pems_ctx_setup(struct pems_rt *rt);
void pems_ctx_teardown(struct pems_rt *rt);
int pems_ctx_swap_out(struct pems_worker *w, struct pems_vp *vp);
bool pems_ctx_swap_in(struct pems_worker *w, struct pems_vp *vp, bool run);
bool pems_ctx_reserve(struct pems_worker *w, struct pems_vp *vp, size_t want);
bool pems_ctx_hold(struct pems_rt *rt, size_t bytes);
void pems_ctx_seen(struct pems_rt *rt, size_t used);
void pems_ctx_unhold(struct pems_rt *rt, size_t bytes);
size_t pems_ctx_size(const struct pems_rt *rt, const struct pems_vp *vp);
void pems_ctx_trim(struct pems_rt *rt, struct pems_vp *vp);
void pems_worker_reap(struct pems_worker *w, unsigned min);
void pems_ctx_wait(struct pems_worker *w, struct pems_vp *vp);
bool pems_ctx_read_bytes(struct pems_rt *rt, struct pems_vp *vp, const char *addr,
			 void *dst, size_t n);

/* messages (msg.c) */
int pems_msg_setup(struct pems_rt *rt);
void pems_msg_teardown(struct pems_rt *rt);
void pems_msg_append(struct pems_worker *w, unsigned dst, const struct pems_rec *r,
		     const void *p1, size_t n1, const void *p2, size_t n2);
void pems_msg_flush(struct pems_worker *w);
void pems_msg_swap(struct pems_rt *rt);	/* at the barrier: out -> in */
void pems_msg_next_log(struct pems_rt *rt);
void pems_msg_deliver(struct pems_worker *w, struct pems_vp *vp, int slot);
void pems_msg_prefetch(struct pems_worker *w, struct pems_vp *vp, int slot);
int pems_msg_worker_init(struct pems_worker *w);
size_t pems_msg_bounce_size(unsigned k, unsigned nranks, size_t chunk);
unsigned pems_msg_ra(unsigned nranks);
void pems_msg_buf_restore(struct pems_rt *rt, struct pems_chunk *c);
size_t pems_msg_chunk_size(size_t budget, unsigned k, unsigned vlocal);

/* registrations (reg.c): a VP's table, ids increasing along it */
struct pems_reg *pems_reg_find_addr(struct pems_vp *vp, const void *addr, uint64_t step);
struct pems_reg *pems_reg_find_id(struct pems_vp *vp, uint64_t id);
/* Register @size bytes at @addr in superstep @step: 0 or -ENOMEM. */
int pems_reg_push(struct pems_vp *vp, const void *addr, size_t size, uint64_t step);
/* Pop the latest live registration of @addr: 0, or -ENOENT (none). */
int pems_reg_pop(struct pems_vp *vp, const void *addr, uint64_t step);
/* At the sync ending superstep @step: forget what is no longer used. */
void pems_reg_compact(struct pems_vp *vp, uint64_t step);

/* collectives (coll.c) */
void pems_coll_barrier(struct pems_rt *rt);
void pems_coll_free(struct pems_rt *rt);
void pems_coll_contribute(struct pems_vp *vp, const char *name, enum pems_coll_kind kind,
			  const void *in, size_t count, size_t elem, enum pems_type type,
			  enum pems_op op, pems_user_op uop, unsigned root);
size_t pems_type_size(enum pems_type t);
void pems_get_record(struct pems_worker *w, const struct pems_get *g);
void pems_coll_deliver(struct pems_rt *rt, struct pems_vp *vp);
void pems_gets_serve(struct pems_rt *rt);
void pems_gets_deliver(struct pems_rt *rt, struct pems_vp *vp);

/* transport (transport.c) */
struct pems_tp;
bool pems_tp_launched(void);
int pems_tp_world(unsigned *rank, unsigned *size);
void pems_tp_abort(int status);
unsigned pems_owner(const struct pems_rt *rt, unsigned pid);
int pems_tp_start(struct pems_rt *rt);
int pems_tp_check_uniform(struct pems_rt *rt, unsigned v, unsigned k, size_t chunk);
void pems_tp_stop(struct pems_rt *rt);
void pems_tp_send_chunk(struct pems_worker *w, unsigned dst, const char *data, size_t len);
void pems_tp_end_superstep(struct pems_rt *rt);
void pems_tp_resume(struct pems_rt *rt);
void pems_tp_sum_u64(struct pems_rt *rt, uint64_t *v, size_t n);
void pems_tp_allgather(struct pems_rt *rt, const void *in, void *out, size_t bytes);
void pems_tp_allgatherv(struct pems_rt *rt, const void *in, size_t bytes, void *out);
void pems_tp_bcast(struct pems_rt *rt, void *buf, size_t bytes, unsigned root_rank);
char *pems_tp_alltoallv(struct pems_rt *rt, const char *send, const size_t *scount,
			size_t *rcount);
void pems_msg_land(struct pems_worker *w, struct pems_stream *s, const char *data, size_t len);
void pems_set_thread_worker(struct pems_worker *w);

/* the file service behind pems_file_* (fileio.c): the same arguments
 * and results as the API; pems_fio_foreign: @aio was started on another
 * worker (then pems_fio_wait must not be called); pems_fio_restore: on
 * resume, handle @h is open again at its old descriptors (0 or -EBUSY) */
int pems_fio_open(const char *path, int flags, int mode);
int pems_fio_close(int h);
long long pems_fio_rw(int h, bool write, void *buf, size_t len, uint64_t off);
int pems_fio_start(int h, bool write, void *buf, size_t len, uint64_t off,
		   struct pems_file_aio *aio);
bool pems_fio_foreign(const struct pems_file_aio *aio);
long long pems_fio_wait(struct pems_file_aio *aio);
long long pems_fio_read_pieces(int h, void *out, const uint64_t *offs, size_t n, size_t len);
int pems_fio_restore(int h, int dfd, int bfd, bool direct);

/* checkpoints (checkpoint.c) */
struct pems_ckpt;
int pems_ckpt_init(struct pems_rt *rt);
bool pems_ckpt_scratch_path(struct pems_rt *rt, const char *dir, const char *name,
			    char *path, size_t len, int *flags);
int pems_ckpt_restore(struct pems_rt *rt, const void *stack_mark);
void pems_ckpt_barrier(struct pems_rt *rt, const void *stack_mark);
void pems_ckpt_finish(struct pems_rt *rt);
void pems_ckpt_abandon(struct pems_rt *rt);
void pems_ckpt_die(void);
bool pems_ckpt_kept(void);
bool pems_ckpt_started(void);
void pems_ckpt_file_note(int h, const char *path, int flags, int dfd, int bfd, bool direct);
void pems_ckpt_file_forget(int h);
/* pems_remove_on_abort's list (sched.c): a malloc'd array of n paths */
unsigned pems_cleanup_list(const char ***paths);
void pems_remove_on_abort_once(const char *path);

/* io completions: every request the runtime submits is embedded in one */
struct pems_ioop {
	struct pems_io_req req;
	void (*done)(struct pems_worker *w, struct pems_ioop *op);
	void *obj;
};

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
