/*
 * pems.h - pems extensions to BSPlib: configuration, context memory,
 * collectives and parallel file I/O.
 *
 * Model: v VPs run on k worker threads of each of p ranks; each VP owns a
 * context of at most mu bytes (heap + stack) at a stable address that
 * lives on disk between supersteps; a rank stays under its budget M.
 * Functions returning int return 0 or -errno; pems_strerror() names
 * pems-specific codes.  Collectives are called by every VP in the same
 * superstep; they end the superstep (they include a bsp_sync).
 */
#ifndef PEMS_H
#define PEMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "bsp.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PEMS_MAX_TMP 16
/* The virtual machine's size when PEMS_PROCS is not set: what bsp_nprocs()
 * reports before bsp_begin and what bsp_begin(0) starts (docs/api.md). */
#define PEMS_DEFAULT_PROCS 1024

enum pems_io_kind { PEMS_IO_KIND_URING = 0, PEMS_IO_KIND_AIO = 1, PEMS_IO_KIND_SYNC = 2 };
/* Compression of spilled contexts and message chunks (docs/formats.md):
 * off, zstd at compress_level, or auto (zstd where a sample shows it pays). */
enum pems_compress { PEMS_COMPRESS_OFF = 0, PEMS_COMPRESS_ZSTD = 1, PEMS_COMPRESS_AUTO = 2 };

/* Runtime configuration.  pems_config_init() fills defaults, then applies
 * the environment: PEMS_PROCS, PEMS_THREADS, PEMS_MU, PEMS_MEM (sizes take
 * K/M/G suffixes), PEMS_TMP (colon-separated dirs), PEMS_IO
 * (uring|aio|sync), PEMS_QDEPTH, PEMS_MSG_MEM, PEMS_STACK, PEMS_STATS (1: print at
 * exit, 2: also one line per superstep), PEMS_COMPRESS (zstd[:LEVEL]|auto|off),
 * PEMS_STATS_JSON (file), PEMS_MSG_HOLD (0: no_hold), PEMS_GLOBALS (shared|private).
 * 0 means "choose for me" for numbers. */
struct pems_config {
	unsigned procs;		/* v, total VPs; 0: = maxprocs of bsp_begin */
	unsigned threads;	/* k, workers per rank; 0: online cores */
	size_t mu;		/* bytes per context; 0: derived from mem */
	size_t mem;		/* M, bytes per rank; 0: 1/4 of RAM */
	size_t stack;		/* bytes of each VP's stack (inside mu) */
	size_t msg_mem;		/* bytes of M for message buffers; 0: M/8 */
	const char *tmp[PEMS_MAX_TMP];	/* scratch dirs, "%r" = rank */
	unsigned ntmp;		/* 0: $TMPDIR or ./pems-tmp */
	enum pems_io_kind io;
	unsigned qdepth;	/* requests in flight per worker */
	bool stats;		/* print statistics on stderr at bsp_end */
	const char *stats_json;	/* write statistics as JSON here */
	bool quiet;		/* no warnings/progress on stderr */
	/* checkpoints (docs/checkpoint.md): at a barrier, into ckpt_dir
	 * (NULL: none; PEMS_CHECKPOINT_DIR), every ckpt_every supersteps
	 * (PEMS_CHECKPOINT_EVERY), or with 0 at the first barrier ckpt_secs
	 * after the last checkpoint (PEMS_CHECKPOINT_SECS; 0: 60 s) */
	const char *ckpt_dir;
	unsigned ckpt_every;
	unsigned ckpt_secs;
	enum pems_compress compress;	/* spilled data; default off */
	int compress_level;	/* zstd level (-7..19); 0: 1 */
	/* never keep full message chunks in memory, write them all
	 * (PEMS_MSG_HOLD=0; for measuring the disk path) */
	bool no_hold;
	/* bsp_begin/bsp_init programs: the VPs of a rank share the program's
	 * globals (MulticoreBSP style) instead of each having its own copy
	 * (PEMS_GLOBALS=shared; default private: docs/api.md) */
	bool shared_globals;
};

/* Returns 0, or -PEMS_E_CONFIG when a variable is malformed (then a
 * message naming it is printed and @cfg is incomplete). */
PEMS_API int pems_config_init(struct pems_config *cfg);
/* Use @cfg (copied) for bsp_begin and pems_spmd(NULL, ...), instead of
 * the environment's.  Returns 0, -EINVAL (ntmp or threads out of range)
 * or -EBUSY (inside an SPMD section). */
PEMS_API int pems_configure(const struct pems_config *cfg);
/* Run @spmd(@arg) on every VP as one SPMD section with @cfg (copied;
 * NULL: the one of pems_configure, else the environment's) -- the
 * library form of bsp_begin/bsp_end: @spmd must not call them -- and
 * return on the caller's thread when all VPs have returned.  Returns 0,
 * or -errno / -PEMS_E_* when the runtime cannot start (bad configuration,
 * scratch space); an error in the SPMD section (bsp_abort) exits the
 * process with status 1. */
PEMS_API int pems_spmd(const struct pems_config *cfg, void (*spmd)(void *arg), void *arg);

/* Multi-rank runs (mpirun): this process's rank and the number of ranks
 * (0 and 1 without mpirun; MPI starts on first use), and a barrier over
 * ranks for code outside the SPMD section (e.g. before renaming a shared
 * output file). */
PEMS_API unsigned pems_rank(void);
PEMS_API unsigned pems_nranks(void);
PEMS_API void pems_rank_barrier(void);

/* The budget rules of a configuration, for planners choosing v and mu
 * and for cost models: for @cfg (threads, procs, mem, msg_mem, mu,
 * compress; threads and procs 0 count as 1) on @nranks ranks (0: this
 * process's), where a VP keeps at most @ctx bytes between supersteps:
 *   overhead  bytes of M besides k*mu (the computing contexts): message
 *             buffers (msg_mem, or M/8, at least 4 MiB), fixed tables,
 *             delivery and compression buffers
 *   msg       of which message buffers
 *   chunk     bytes of one message chunk
 *   hold      bytes of full message chunks a rank can keep in memory
 *             across a barrier instead of writing them (pems/msg.c
 *             invariant 7): what M leaves beside the overhead and k*mu,
 *             less room to prefetch and write back 2k contexts of @ctx,
 *             but at least half of it; shared with finished contexts
 * Returns 0. */
struct pems_budget {
	size_t overhead, msg, chunk, hold;
};
PEMS_API int pems_budget(const struct pems_config *cfg, unsigned nranks, size_t ctx,
			 struct pems_budget *out);
/* Bytes of message memory for chunks of @chunk bytes with @threads
 * workers and @procs VPs on a rank: (2*procs + 8) * threads chunks
 * (pems/msg.c invariant 5).  The runtime's chunk is the largest power
 * of two from 4 KiB to 1 MiB whose message memory msg_mem holds. */
PEMS_API size_t pems_msg_mem(unsigned threads, unsigned procs, size_t chunk);
/* Unlink @path if the program aborts (bsp_abort or a fatal runtime
 * error), so that no partial output survives; NULL clears the list. */
PEMS_API void pems_remove_on_abort(const char *path);

/* A job's ownership of @path (a lock file, created 0600 holding this
 * process's PID): an exclusive flock, never waited for.  Returns the
 * descriptor holding it (O_CLOEXEC; closed at exit), or -EBUSY with
 * *@holder = the holder's PID (0 if not known), or -errno. */
PEMS_API int pems_lock(const char *path, long *holder);
/* Remove @path (when it still names the file locked by @fd; NULL: keep
 * it) and release the lock; @fd < 0 is a no-op. */
PEMS_API void pems_unlock(const char *path, int fd);

/* Checkpoints need a process started with ASLR off (docs/checkpoint.md).
 * pems_checkpoint_exec re-executes the program so, once, with the same
 * @argv (main's) and environment; call it first in main.  It returns
 * when the process already was (or cannot be) re-executed.  Programs
 * that set PEMS_CHECKPOINT_DIR get this before main. */
PEMS_API void pems_checkpoint_exec(char **argv);
/* Resume the run checkpointed in @dir: checks the manifest, the inputs
 * and the program, then replaces this process with the run (never
 * returns on success).  With @argv (NULL-terminated), it must equal the
 * checkpointed command line.  Returns -errno / -PEMS_E_* with a message
 * printed. */
PEMS_API int pems_checkpoint_resume(const char *dir, char **argv);
/* Save @len bytes at @addr (process memory outside the contexts, e.g. a
 * global that VP code updates) in every checkpoint and restore them on
 * resume; register before the SPMD section, in the same order on every
 * start.  Up to 16 areas; returns 0 or -EINVAL. */
PEMS_API int pems_checkpoint_global(void *addr, size_t len);
/* True in a process that resumes a checkpointed run (its setup must not
 * discard what the run wrote before the checkpoint). */
PEMS_API bool pems_resuming(void);

/* Parse "64M", "1G", "4096" (K/M/G/T, powers of 1024) into bytes.
 * Returns 0 or -EINVAL. */
PEMS_API int pems_parse_size(const char *s, size_t *out);
/* Parse "zstd", "zstd:LEVEL" (-7..19), "auto" or "off" into @mode and
 * @level (0 when not given).  Returns 0 or -EINVAL. */
PEMS_API int pems_parse_compress(const char *s, enum pems_compress *mode, int *level);
/* Parse an I/O backend name "uring", "aio" or "sync" into @out.
 * Returns 0 or -EINVAL. */
PEMS_API int pems_parse_io(const char *s, enum pems_io_kind *out);
/* The name of backend @kind ("uring", "aio", "sync"; "unknown" for
 * another value).  A static string. */
PEMS_API const char *pems_io_name(enum pems_io_kind kind);
/* pems-specific error codes (returned negated, above errno's range).
 * PEMS_E_BUDGET is returned only after pems printed on stderr what the
 * budget must be, so callers need not explain it again. */
#define PEMS_E_BUDGET 1001	/* --mem too small for the job */
#define PEMS_E_SCRATCH 1002	/* not enough scratch space */
#define PEMS_E_CONFIG 1003	/* invalid configuration */
/* A message for -errno or -PEMS_E_*. */
PEMS_API const char *pems_strerror(int err);
/* The configuration in effect (after bsp_begin: with derived values). */
PEMS_API const struct pems_config *pems_current_config(void);

/* ---- context memory: allocated inside the calling VP's context, so it
 * keeps its address and spills with the VP.  Allocating beyond mu aborts
 * with a message naming the VP and superstep.  Outside the SPMD section
 * these fall back to malloc. */
PEMS_API void *pems_malloc(size_t n);
PEMS_API void *pems_calloc(size_t n, size_t size);
PEMS_API void *pems_realloc(void *p, size_t n);
PEMS_API void pems_free(void *p);
/* Bytes of this VP's context in use (heap high-water + stack). */
PEMS_API size_t pems_context_used(void);
/* Bytes this VP may still allocate. */
PEMS_API size_t pems_context_avail(void);

#ifdef PEMS_CONTEXT_MALLOC
#define malloc(n) pems_malloc(n)
#define calloc(n, s) pems_calloc((n), (s))
#define realloc(p, n) pems_realloc((p), (n))
#define free(p) pems_free(p)
#endif

/* ---- collectives ---- */
enum pems_type { PEMS_INT32, PEMS_INT64, PEMS_UINT64, PEMS_FLOAT, PEMS_DOUBLE, PEMS_BYTE };
enum pems_op { PEMS_SUM, PEMS_MIN, PEMS_MAX, PEMS_PROD };
/* User operation: inout[i] = inout[i] (op) in[i] for @count elements.
 * Must be associative; pems applies it in VP order. */
typedef void (*pems_user_op)(void *inout, const void *in, size_t count);

/* Every VP passes @count elements of @type; all VPs receive the
 * combination (in VP order) in @out.  @in and @out may be equal. */
PEMS_API void pems_allreduce(const void *in, void *out, size_t count,
			     enum pems_type type, enum pems_op op);
PEMS_API void pems_allreduce_user(const void *in, void *out, size_t count,
				  size_t elem_size, pems_user_op op);
/* Like allreduce, but only @root receives @out (others may pass NULL). */
PEMS_API void pems_reduce(bsp_pid_t root, const void *in, void *out,
			  size_t count, enum pems_type type, enum pems_op op);
/* @root's @nbytes at @buf are copied into @buf on every VP. */
PEMS_API void pems_broadcast(bsp_pid_t root, void *buf, size_t nbytes);
/* VP i's @nbytes land at out + i*nbytes on @root (out: v*nbytes bytes);
 * pems_allgather delivers to every VP. */
PEMS_API void pems_gather(bsp_pid_t root, const void *in, void *out, size_t nbytes);
PEMS_API void pems_allgather(const void *in, void *out, size_t nbytes);
/* out = combination of the inputs of VPs 0..pid-1 (identity on VP 0). */
PEMS_API void pems_exscan(const void *in, void *out, size_t count,
			  enum pems_type type, enum pems_op op);
/* MPI-style alltoallv in bytes: VP i's sendbuf+sdispls[j] (sendcounts[j]
 * bytes) lands at recvbuf+rdispls[i] on VP j, straight from the message
 * store at the receiver's next swap-in.  Unlike the collectives above it
 * does NOT sync: like bsp_put it copies the data at call time and the
 * data arrives after the next bsp_sync, so the caller may free sendbuf
 * first (and save writing it back with its context).  At most one
 * alltoallv or exchange per VP per superstep; recvbuf and rdispls must
 * stay valid until that sync. */
PEMS_API void pems_alltoallv(const void *sendbuf, const size_t *sendcounts,
			     const size_t *sdispls, void *recvbuf,
			     const size_t *recvcounts, const size_t *rdispls);
/* alltoallv where receivers need not know their counts: after the next
 * bsp_sync the incoming bytes, concatenated in source-VP order, are in a
 * new context allocation *recvbuf (pems_free it) of *recvbytes bytes;
 * recvcounts (may be NULL, else v entries) gets the bytes from each
 * source.  Does not sync (see pems_alltoallv); the pointers must stay
 * valid until the sync. */
PEMS_API void pems_exchange(const void *sendbuf, const size_t *sendcounts,
			    void **recvbuf, size_t *recvbytes, size_t *recvcounts);

/* ---- parallel file I/O, straight into or out of context memory.
 * Any VP may read or write any byte range; offsets need no alignment
 * (aligned interiors use O_DIRECT).  Return bytes done or -errno. */
PEMS_API int pems_file_open(const char *path, int flags, int mode);
PEMS_API int pems_file_close(int fd);
PEMS_API long long pems_file_read(int fd, void *buf, size_t len, uint64_t off);
PEMS_API long long pems_file_write(int fd, const void *buf, size_t len, uint64_t off);

/* Read @n pieces of @len bytes (len <= 4096) at file offsets @offs into
 * @out back to back, all in flight at once (random sampling).  Returns
 * n*len or -errno. */
PEMS_API long long pems_file_read_pieces(int fd, void *out, const uint64_t *offs,
					 size_t n, size_t len);

/* Asynchronous transfers: pems_file_start begins reading or writing
 * (@write true) @len bytes at @off like pems_file_read/write and returns
 * at once; the VP computes meanwhile and collects the result with
 * pems_file_wait (bytes done or -errno, as pems_file_read/write).  The
 * buffer belongs to the transfer until then.  Every started transfer
 * must be waited for before the VP's next bsp_sync (else the run ends
 * with an error).  The aligned interior is in flight whole, as 1 MiB
 * requests: start a few MiB at a time.  pems_file_start returns 0 or
 * -errno (then nothing is in flight and @a need not be waited for). */
struct pems_file_aio {
	void *state;		/* owned by the library until pems_file_wait */
};
PEMS_API int pems_file_start(int fd, bool write, void *buf, size_t len, uint64_t off,
			     struct pems_file_aio *a);
PEMS_API long long pems_file_wait(struct pems_file_aio *a);

/* ---- statistics, read after bsp_end (VP 0) or in the SPMD section ---- */
struct pems_stats {
	uint64_t supersteps;
	uint64_t ctx_read, ctx_written;		/* bytes */
	uint64_t msg_read, msg_written;		/* bytes of message store I/O */
	uint64_t file_read, file_written;	/* bytes via pems_file_* */
	uint64_t h_bytes;			/* bytes sent, all supersteps */
	uint64_t h_max;				/* max over supersteps of h */
	double compute_secs, io_wait_secs, total_secs;
	uint64_t peak_resident;			/* bytes of contexts resident */
	/* spilled blocks (contexts, message chunks) before and after
	 * --compress, without page padding: raw == stored when nothing
	 * was compressed; *_written above are what the disk saw */
	uint64_t ctx_raw, ctx_stored, msg_raw, msg_stored;	/* bytes */
	uint64_t msg_held;	/* bytes of full message chunks kept in memory
				 * instead of written and read back */
	/* the run's configuration: VPs, workers and ranks; bytes */
	unsigned procs, threads, nranks;
	size_t mu, mem;
};
PEMS_API void pems_get_stats(struct pems_stats *out);
/* Optional progress hook, called on the runtime thread after each
 * superstep with the superstep number. */
PEMS_API void pems_set_progress(void (*fn)(uint64_t superstep, void *arg), void *arg);

/* Per-superstep statistics, for comparing a run with a cost model
 * superstep by superstep.  While recording is on (it is off until
 * pems_steps_record(true)), each SPMD section keeps one record per
 * superstep on every rank: the rank's own counters between two barriers,
 * the last superstep's bytes and times the mean over ranks.  A section
 * forgets the records of the one before. */
struct pems_step {
	double secs;		/* wall seconds, barrier to barrier */
	double cpu;		/* CPU seconds of this process, every thread */
	double compute_secs, io_wait_secs;
	uint64_t ctx_read, ctx_written, msg_read, msg_written;	/* bytes */
	uint64_t file_read, file_written, h_bytes;		/* bytes */
};
PEMS_API void pems_steps_record(bool on);
/* The records of the last section (owned by pems, valid until the next
 * section starts) and their number in *@n; NULL when there are none. */
PEMS_API const struct pems_step *pems_steps(size_t *n);

#ifdef __cplusplus
}
#endif
#endif
