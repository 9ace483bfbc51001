/*
 * pems_algorithms.h - bundled BSP algorithms (layer algorithms/).
 * Written only against the public BSP API (bsp.h, pems.h).  Each entry
 * point plans its job from the configuration in the job (job->cfg),
 * runs one SPMD section with the plan, and returns 0 or -errno; on failure it has printed
 * "pems: ..." on stderr and left no output under the final name.
 */
#ifndef PEMS_ALGORITHMS_H
#define PEMS_ALGORITHMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pems.h"
#include "formats/pems_formats.h"	/* record formats: enum pems_format */

/* Fill cfg->procs (unless set), cfg->msg_mem (unless set) and the
 * defaults of cfg->mem and cfg->threads for a job over @bytes whose VPs
 * need mu_for(bytes, v) bytes each (plan.c).  Returns 0, or -EINVAL
 * with "pems: error: <who>: ..." printed when --mem cannot hold it. */
int pems_plan(struct pems_config *cfg, uint64_t bytes, const char *who,
	      uint64_t (*mu_for)(uint64_t bytes, unsigned v));

/* Where a plan is for: the cores of a node (the default k), the ranks
 * the job runs on (their delivery buffers), and whether a failure stays
 * silent.  pems_plan_here() is this process: online cores, pems_nranks(). */
struct pems_plan_env {
	unsigned cores, nranks;
	bool quiet;
};
struct pems_plan_env pems_plan_here(bool quiet);
/* pems_plan() for @env instead of this process. */
int pems_plan_for(struct pems_config *cfg, uint64_t bytes, const char *who,
		  uint64_t (*mu_for)(uint64_t bytes, unsigned v),
		  const struct pems_plan_env *env);
/* pems_plan_for() with one worker beyond the cores when --threads is not
 * given, @env is one rank and the budget still leaves message chunks of
 * 256 KiB (for jobs whose VPs block on I/O: the sorts). */
int pems_plan_extra(struct pems_config *cfg, uint64_t bytes, const char *who,
		    uint64_t (*mu_for)(uint64_t bytes, unsigned v),
		    const struct pems_plan_env *env);

/*
 * The plans the bundled algorithms would make, without running anything
 * (cost models: pems-run model).  @cfg as the job would get it (mem,
 * threads, procs, msg_mem, mu; 0 = the planner's choice); on return
 * procs (v), threads (k), mu and msg_mem are the job's.  The message
 * chunk is msg_mem / (2kv + 8k).  Returns 0 or -EINVAL when --mem cannot
 * hold the job.
 *   sort: records of @fmt, @bytes of input
 *   aggregate: kv input of @bytes (a csv plan depends on sampling the
 *   file: -EINVAL), the aggregates of @job
 */
int pems_sort_plan(struct pems_config *cfg, enum pems_format fmt, uint64_t bytes,
		   const struct pems_plan_env *env);
struct pems_aggregate_job;
int pems_aggregate_plan(struct pems_config *cfg, const struct pems_aggregate_job *job,
			uint64_t bytes, const struct pems_plan_env *env);

/*
 * The constants of the sort's and the aggregate's supersteps that decide
 * their bytes and their work (for cost models: pems-run model), read
 * from the algorithms' own definitions so that a change there reaches
 * the model without a copy to keep in step.  Sizes in bytes.
 */
struct pems_sort_shape {
	unsigned samples;	/* records sampled per VP (superstep 0) */
	size_t key;		/* one sample key / splitter */
	size_t sample_msg;	/* what each VP sends VP 0 in superstep 1 */
};
void pems_sort_shape(struct pems_sort_shape *s);

struct pems_aggregate_shape {
	unsigned table;		/* core table: entries a fill holds before a flush */
	unsigned pass_fills;	/* after a poor fill, rows go raw for this many fills */
	unsigned poor;		/* a fill is poor below this many rows per entry */
	unsigned raw_count;	/* a flushed state of count <= this goes out as its rows */
	size_t state;		/* one core state (count, sum, min, max with the key) */
	size_t row;		/* one kv row */
	unsigned samples;	/* keys sampled per VP */
	unsigned sample_pages;	/* random 4 KiB pages read per VP for them (kv) */
	size_t sample_msg;	/* what each VP sends VP 0 for the plan */
	size_t info;		/* per-VP record allgathered after the merge */
	size_t chunk_hdr;	/* header of each (sender, owner) part of the exchange */
	unsigned compact;	/* compacted when the groups' states take at most
				 * 1/compact of the bytes received */
};
void pems_aggregate_shape(struct pems_aggregate_shape *s);

/*
 * Cost plans: a job's supersteps as a cost model sees them (model/,
 * pems-run model), each written next to its algorithm from the same
 * constants (sort/sort_cost.c, aggregate/agg_cost.c, sgd/sgd_cost.c), so
 * a change to an algorithm changes its plan in the same place.  The
 * plan says what moves and what is computed; the model prices it.
 */
#define PEMS_COST_MAXSTEPS 8
#define PEMS_COST_MAXWORK 3

/* Kernel work by kind, in the units a model measures a rate for. */
enum pems_work {
	PEMS_WORK_SORT_PART,	/* bytes classified, scattered, sent (per format) */
	PEMS_WORK_SORT_LOCAL,	/* bytes radix-sorted and written (per format) */
	PEMS_WORK_COPY,		/* bytes of plain copies */
	PEMS_WORK_AGG_HASH,	/* rows hashed into states (pre-aggregation) */
	PEMS_WORK_AGG_RAW,	/* rows passed on raw */
	PEMS_WORK_AGG_MERGE,	/* rows and states an owner receives; at: groups per VP */
	PEMS_WORK_AGG_COMPACT,	/* groups compacted into states */
	PEMS_WORK_AGG_WRITE,	/* parked rows walked by the write */
	PEMS_WORK_AGG_FMT,	/* groups finalized and formatted; at: groups per VP */
	PEMS_WORK_SGD,		/* rows * dim of gradient steps */
};

/* The job: its input and what the planner chose. */
struct pems_cost_job {
	double bytes;		/* input bytes */
	unsigned p, v;		/* ranks, VPs */
	enum pems_format fmt;	/* sort: PEMS_FMT_U64 or PEMS_FMT_REC100 */
	double groups, line;	/* aggregate (kv, count,sum): keys, output bytes per group */
	unsigned dim, epochs, shards, local_steps;	/* sgd over dense rows */
	bool sync_bsp;
	double batch;
};

/* One superstep (or @reps identical ones); bytes and counts of all ranks
 * unless marked. */
struct pems_cost_step {
	const char *name;
	double reps;
	unsigned nwork;
	struct { enum pems_work kind; double amount, at; } work[PEMS_COST_MAXWORK];
	double sort_keys;	/* 24-byte keys VP 0 sorts alone (qsort) */
	double file_r, file_w;	/* bytes through pems_file_* */
	bool file_async;	/* ... in pieces while the VP computes */
	bool file_alloc;	/* file_w lands in blocks allocated ahead */
	double reqs;		/* synchronous pems_file_* calls */
	double msg_r, msg_w;	/* bytes of message store read / written */
	double rand_r;		/* random 4 KiB reads */
	double xfer;		/* bytes crossing ranks */
	double coll;		/* collective bytes one rank receives */
};

struct pems_cost_plan {
	unsigned n;
	struct pems_cost_step s[PEMS_COST_MAXSTEPS];
};

/* The supersteps of @j into @pl; -EINVAL for a job the algorithm cannot
 * run (a format it does not sort, no VPs). */
int pems_sort_cost(const struct pems_cost_job *j, struct pems_cost_plan *pl);
int pems_aggregate_cost(const struct pems_cost_job *j, struct pems_cost_plan *pl);
int pems_sgd_cost(const struct pems_cost_job *j, struct pems_cost_plan *pl);
/* The plan sgd makes of v, k and the message memory for @shards shards
 * (v = shards, k = the cores, msg_mem = M/8 up to 64 MiB), without the
 * budget check (its contexts are small). */
int pems_sgd_plan(struct pems_config *cfg, unsigned shards, const struct pems_plan_env *env);
/* For writing plans (cost.c): append a superstep named @name (one rep,
 * nothing moved) and return it, NULL when the plan is full; add @amount
 * of work @kind at @at to it (dropped when its work list is full). */
struct pems_cost_step *pems_cost_add(struct pems_cost_plan *pl, const char *name);
void pems_cost_work(struct pems_cost_step *s, enum pems_work kind, double amount, double at);

/*
 * A job's output (output.c).  pems_output_lock first, before any work: an
 * exclusive lock on <out>.pems-lock (several ranks: <out>.pems-lock.RANK)
 * held until commit or unlock; a second job for the same OUT gets -EBUSY
 * with "pems: error: <who>: OUT is being written by another job (PID n)"
 * printed.  pems_output_create then opens the temporary output once
 * (O_TMPFILE with one rank and no checkpoint dir in @cfg, the job's
 * configuration (NULL: pems_current_config()), else <out>.pems-tmp),
 * sized to @size when @sized, as pems_file handle o->handle for every
 * rank to write into; on a fresh start it first removes the temporaries
 * a killed run left, saying so.  pems_output_commit closes the handle;
 * unless @rc: truncates to @size on rank 0 when @truncate, fsyncs, and
 * once every rank is done gives the file the name OUT (a named temporary
 * only if the name still is this job's file); on any failure the
 * temporary goes.  It releases the lock and returns @rc or the first new
 * -errno.  pems_output_unlock releases everything on a path that does
 * not commit (idempotent).  Other calls return 0 or -errno with
 * "pems: error: <who>: ..." printed.
 */
struct pems_output {
	const char *who, *out;
	char tmp[4096];		/* the temporary's name; "" with O_TMPFILE */
	char lock[4096];	/* the lock file's name */
	int lockfd, fd;		/* -1: not held, not open */
	int handle;		/* pems_file handle of the temporary, or -1 */
};
int pems_output_lock(struct pems_output *o, const char *who, const char *out);
int pems_output_create(struct pems_output *o, const struct pems_config *cfg, bool sized,
		       uint64_t size);
int pems_output_commit(struct pems_output *o, int rc, bool truncate, uint64_t size);
void pems_output_unlock(struct pems_output *o);

/* Open input @path for reading without blocking (a FIFO nobody writes
 * to) and check it before use: a regular file or a block device.
 * Returns a descriptor (blocking from here, O_CLOEXEC) with *@st filled,
 * or -errno (-ESPIPE: a FIFO, socket, character device or directory)
 * with "pems: error: <who>: ..." printed (input.c). */
struct stat;
int pems_input_open(const char *who, const char *path, struct stat *st);
/* NULL for a mode pems reads (regular file, block device), else what it
 * is, for messages: "a FIFO (a pipe)", "a socket", ... */
const char *pems_input_kind(unsigned mode);

struct pems_sort_job {
	const char *in;		/* input file, records of fmt */
	const char *out;	/* final output path (written as out.tmp.<pid>, then renamed) */
	enum pems_format fmt;	/* u64 or rec100 */
	/* progress: called on the runtime thread, may be NULL */
	void (*progress)(const char *phase, uint64_t done, uint64_t total, void *arg);
	void *progress_arg;
	/* the runtime configuration (copied; planned from): NULL takes
	 * pems_current_config() */
	const struct pems_config *cfg;
};

/* Sample sort of job->in into job->out: ~4N bytes of disk traffic.
 * Returns 0 or -errno. */
int pems_sort(const struct pems_sort_job *job);

/*
 * Sort of text lines, CSV rows or fixed-size records by GNU sort's keys
 * (formats/pems_formats.h), byte-compatible with LC_ALL=C sort: the
 * variable-length sample sort of sort/textsort.c, ~4N bytes of disk
 * traffic (CSV ~5N).  Data errors (CSV quoting, field count, a record
 * longer than the budget allows) end the run with "pems: error: sort:
 * IN: line N: ..." and status 1, nothing under job->out.
 */
struct pems_textsort_job {
	const char *in;		/* input file (regular) */
	const char *out;	/* final output path (temporary name, renamed) */
	const struct pems_textspec *ts;	/* finished (pems_textspec_finish) */
	/* the runtime configuration (copied; planned from): NULL takes
	 * pems_current_config() */
	const struct pems_config *cfg;
	void (*progress)(const char *phase, uint64_t done, uint64_t total, void *arg);
	void *progress_arg;
	uint64_t out_bytes;	/* result: bytes written */
};

/* Returns 0 or -errno (message printed). */
int pems_textsort(struct pems_textsort_job *job);
/* The first record of @path (a CSV header) without its terminator into
 * @buf (@cap bytes), its length in *len.  Returns 0, -ENOENT for an
 * empty file, -E2BIG when it is longer than @cap, or -errno. */
int pems_text_first_record(const char *path, const struct pems_textspec *ts, uint8_t *buf,
			   size_t cap, size_t *len);

/* ---- GROUP BY aggregation (algorithms/aggregate) ----
 *
 * A user-defined aggregate over int64 values.  Its state is state_size
 * bytes (at most PEMS_AGG_STATE_MAX) stored at any alignment (use memcpy
 * for wide types).  It must be associative AND commutative: combine()
 * of the states of two row sets equals the state of their union, in
 * whichever order pems meets them (the order depends on v).  All
 * callbacks are pure functions of their arguments (they run on any VP,
 * any thread) and cannot fail, except finalize, which returns 0 or
 * -ERANGE when the result does not fit its type. */
#define PEMS_AGG_STATE_MAX 64
#define PEMS_AGG_MAX 16		/* aggregates of one job */

/* MEAN: an exact quotient num/den (den > 0) with its nearest double in
 * d; csv output prints it in decimal rounded to 9 places (half away from
 * zero, trailing zeros dropped), kv output the double. */
enum pems_agg_type { PEMS_AGG_INT64, PEMS_AGG_UINT64, PEMS_AGG_DOUBLE, PEMS_AGG_MEAN };

struct pems_agg_result {
	enum pems_agg_type type;
	union {
		int64_t i;
		uint64_t u;
		double d;
	};
	__int128 num;		/* MEAN only */
	uint64_t den;
};

struct pems_aggregate {
	const char *name;		/* output column name */
	size_t state_size;		/* bytes, 1..PEMS_AGG_STATE_MAX */
	void (*init)(void *state);	/* the empty set */
	void (*update)(void *state, int64_t value);	/* add one row */
	void (*combine)(void *state, const void *other);	/* state := state u other */
	int (*finalize)(const void *state, struct pems_agg_result *out);
};

/* The built-ins "count" (uint64), "sum" (int64, a 128-bit accumulator;
 * finalize gives -ERANGE outside int64), "min", "max" (int64; INT64_MAX /
 * INT64_MIN for no rows) and "avg" (MEAN: the exact 128-bit sum over
 * the count; d from long double division).  NULL for other names. */
const struct pems_aggregate *pems_aggregate_builtin(const char *name);

/* One group as handed out by pems_groupby_walk: the combined states of
 * the aggregates, back to back in the order given to pems_groupby(). */
typedef void (*pems_group_fn)(uint64_t key, const void *states, void *arg);

struct pems_groupby;	/* opaque; lives in the calling VP's context */
struct pems_groupby_plan;	/* key ranges and heavy keys; the same on every VP */

#define PEMS_GROUPBY_SAMPLES 256	/* sample keys per VP */

/* Collective (syncs twice): every VP passes up to PEMS_GROUPBY_SAMPLES
 * keys drawn at random from its rows (@m may be 0).  VP 0 picks the key
 * ranges of the v owners (balanced by sampled weight, a heavy key counted
 * once) and the heavy keys (frequent in the sample); all VPs receive the
 * plan.  Returns it in context memory (pems_free it). */
struct pems_groupby_plan *pems_groupby_plan(const uint64_t *keys, size_t m);

/* Collective, inside an SPMD section: every VP passes its @n rows (keys
 * and values at @rows as {u64 key, i64 value} pairs, pems_malloc'd; the
 * call takes ownership and frees them).  Rows are pre-aggregated: when
 * every aggregate is a built-in, in a cache-sized table that is flushed
 * when full (rows pass through raw while it shows little reduction);
 * otherwise in a bounded table of about @table_bytes (0: n*4 bytes),
 * skipped when a probe shows little reduction; heavy keys found by the
 * plan always.  Then the partial results are repartitioned by sampled
 * key ranges of @plan: VP i ends up owning every group whose key lies in its
 * range, ranges increasing with i.  Ends with (and includes) a few
 * bsp_syncs.  Returns this VP's groups (pems_groupby_free it); *ngroups
 * gets their number.  Aborts (bsp_abort) when a VP's share exceeds mu. */
struct pems_groupby *pems_groupby(const struct pems_groupby_plan *plan,
				  void *rows, size_t n,
				  const struct pems_aggregate *const *aggs,
				  unsigned naggs, size_t table_bytes,
				  uint64_t *ngroups);
/* Call @fn for each group of this VP in increasing key order; local (no
 * sync), may be repeated in later supersteps. */
void pems_groupby_walk(const struct pems_groupby *g, pems_group_fn fn, void *arg);
/* Move the groups out of the context into the message store (one
 * pems_exchange to itself: counts as this superstep's exchange), so they
 * survive the next bsp_sync without a large context to write back and
 * swap in; after that sync, pems_groupby_unpark() brings them back
 * (delivered like any exchange).  No walk in between. */
void pems_groupby_park(struct pems_groupby *g);
void pems_groupby_unpark(struct pems_groupby *g);
/* Bytes of context memory the groups hold (for planners). */
size_t pems_groupby_bytes(const struct pems_groupby *g);
void pems_groupby_free(struct pems_groupby *g);

enum pems_agg_input { PEMS_AGG_IN_KV = 0, PEMS_AGG_IN_CSV = 1 };
enum pems_agg_output { PEMS_AGG_OUT_CSV = 0, PEMS_AGG_OUT_KV = 1 };

struct pems_aggregate_job {
	const char *in;		/* input file */
	const char *out;	/* final output path (written as out.pems-tmp, renamed) */
	enum pems_agg_input in_fmt;	/* kv: 16-byte LE {u64 key, i64 value} */
	enum pems_agg_output out_fmt;
	const char *key_col, *value_col;	/* csv: header name or 1-based index */
	const struct pems_aggregate *aggs[PEMS_AGG_MAX];
	unsigned naggs;
	void (*progress)(const char *phase, uint64_t done, uint64_t total, void *arg);
	void *progress_arg;
	/* results */
	uint64_t rows, groups;
	char errmsg[512];	/* data errors (bad CSV, overflow): why, without prefix */
	/* the runtime configuration (copied; planned from): NULL takes
	 * pems_current_config() */
	const struct pems_config *cfg;
};

/* GROUP BY key of job->in into job->out, sorted by key.  Output csv:
 * header "key,<agg names>", one line per group, avg as %.17g; kv: per
 * group u64 key then 8 bytes per aggregate (u64 / i64 / IEEE double,
 * little-endian).  Returns 0, -EINVAL (bad input: job->errmsg says
 * where), -ERANGE (an aggregate overflows: job->errmsg names the key), or
 * -errno after printing "pems: error: aggregate: ..." on stderr. */
int pems_aggregate(struct pems_aggregate_job *job);


/* ---- typed GROUP BY over CSV (algorithms/groupby) ----
 *
 * SELECT <by>, <agg> FROM in GROUP BY <by> ORDER BY <by> (NULLS LAST),
 * with SQL's NULL semantics, over a CSV/TSV file larger than memory.
 * Columns are str (bytes), i64 or f64 (parsed as strtod does), inferred
 * from the first MiB or declared by @schema; an empty field (or
 * @null_token) is NULL.  @agg: comma-separated output columns, each an
 * aggregate -- count(*), count(c), count(distinct c), sum, min, max,
 * avg/mean, median, sd/stddev, corr(a,b), r2(a,b), topN(c), bottomN(c)
 * -- or an expression of them with + - * / pow(x,n) and numbers. */
struct pems_csv_groupby_job {
	const struct pems_config *cfg;	/* runtime configuration (NULL: pems_current_config()) */
	const char *in;		/* input file (a regular file, or "-": standard input) */
	const char *out;	/* final output path (written as out.pems-tmp, renamed; "-": stdout) */
	const char *by;		/* group columns, "id1,id2" (NULL or "": one group) */
	const char *agg;	/* output columns, "sum(v1),mean(v3)" */
	const char *as;		/* their names, "s,m" (NULL: from the text, sum_v1) */
	const char *schema;	/* types, "id1:str,v3:f64" (NULL: inferred) */
	char delim;		/* field delimiter (0: ',') */
	bool no_header;		/* the first row is data; columns are c1, c2, ... */
	const char *null_token;	/* a field equal to it is NULL too (NULL: none) */
	bool skip_errors;	/* bad rows are skipped and counted, not fatal */
	void (*progress)(const char *phase, uint64_t done, uint64_t total, void *arg);
	void *progress_arg;
	/* results */
	uint64_t rows, groups, skipped;
	char errmsg[512];	/* why it failed (data, query), without prefix */
	char skipmsg[512];	/* skip_errors: the first rows skipped and why */
};

/* Check job's by/agg/as/schema syntax, without reading the file: 0, or
 * -EINVAL with job->errmsg set (a usage error). */
int pems_csv_groupby_check(struct pems_csv_groupby_job *job);
/* Run the query of @job into job->out.  Output: a header of the key
 * columns' names and the output names, then one line per group (a
 * topN: one per value) in key order; NULL as an empty field.  Returns
 * 0, -EINVAL (bad data or a query the file cannot answer: job->errmsg
 * says where -- line and column), or -errno after printing
 * "pems: error: groupby: ..." on stderr. */
int pems_csv_groupby(struct pems_csv_groupby_job *job);

/* ---- sgd: data-parallel SGD over training data larger than memory ---- */

enum pems_sgd_model { PEMS_SGD_LINEAR = 0, PEMS_SGD_LOGISTIC = 1 };
enum pems_sgd_format { PEMS_SGD_DENSE = 0, PEMS_SGD_LIBSVM = 1 };
enum pems_sgd_sync { PEMS_SGD_SYNC_BSP = 0, PEMS_SGD_SYNC_LOCAL = 1 };
enum pems_sgd_lr { PEMS_SGD_LR_CONST = 0, PEMS_SGD_LR_SQRT = 1, PEMS_SGD_LR_STEP = 2 };

/* Dense training data: an optional 16-byte header "PEMSDENS", u32 dim,
 * u32 0 (little-endian), then rows of 1 + dim little-endian float32:
 * the label, then the features.  Without the header, --dim gives d. */
#define PEMS_SGD_DENSE_MAGIC "PEMSDENS"
#define PEMS_SGD_DENSE_HEADER 16
#define PEMS_SGD_MAX_SHARDS 65536

struct pems_sgd_job {
	enum pems_sgd_model model;
	enum pems_sgd_format format;	/* of data and test */
	const char *data;		/* training file */
	const char *test;		/* test file or NULL: evaluated after each epoch */
	uint32_t dim;			/* d; 0: from the dense header */
	unsigned epochs;
	enum pems_sgd_sync sync;
	unsigned local_steps;		/* H (sync local): steps between averages */
	double lr;			/* base learning rate */
	enum pems_sgd_lr schedule;
	double lr_decay;		/* step: factor every lr_step epochs */
	unsigned lr_step;
	uint64_t batch;			/* rows per mini-batch of one shard */
	double l2;			/* lambda: + lambda/2 |w|^2 (bias excluded) */
	unsigned shards;		/* S logical data shards; 0: 16 */
	uint64_t seed;			/* initial weights; 0: all zero */
	const char *out;		/* model file (tmp + rename) */
	const char *loss_log;		/* per-superstep CSV or NULL */
	void (*progress)(const char *phase, uint64_t done, uint64_t total, void *arg);
	void *progress_arg;
	/* results, filled by pems_sgd */
	uint64_t rows;			/* training rows (one epoch) */
	uint64_t data_bytes;		/* training file bytes */
	double train_loss;		/* mean loss of the last epoch (progressive) */
	double test_loss, test_accuracy; /* of the final model; NaN: no test */
	unsigned epochs_done;
	/* the runtime configuration (copied; planned from): NULL takes
	 * pems_current_config() */
	const struct pems_config *cfg;
};

/* Train job->model over job->data: each epoch streams the data once.
 * Returns 0, -EINVAL (bad data: message with line/row printed), -EDOM
 * (diverged: message printed) or -errno. */
int pems_sgd(struct pems_sgd_job *job);

/* Model file (text, also written by gen as OUT.weights):
 *   pems-sgd-model 1 / model linear|logistic / dim D / bias B /
 *   D lines "j w_j" (j = 1..D).  @w has dim + 1 entries, bias last.
 * Returns 0 or -errno; read allocates *w (free it). */
int pems_sgd_model_write(const char *path, enum pems_sgd_model model,
			 uint32_t dim, const double *w);
int pems_sgd_model_read(const char *path, enum pems_sgd_model *model,
			uint32_t *dim, double **w);

#endif
