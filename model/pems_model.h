/*
 * pems_model.h - a BSP cost model of the bundled algorithms (layer model/).
 *
 * A job is the list of its supersteps, each described by the algorithm
 * itself (pems_sort_cost, pems_aggregate_cost, pems_sgd_cost in
 * pems_algorithms.h): bytes through pems_file_*, bytes of the message
 * store, random reads, bytes crossing ranks, collective bytes, VP 0's
 * serial sort, and the kernel work by kind.  This library prices them
 * with the parameters of one machine, measured by pems_model_calibrate()
 * and kept in a text file ("pems-model 1", docs/cost-model.md).  Per
 * superstep, on a node with c cores, t workers and one disk:
 *
 *   T = max(D, C/c_eff, (F+C)/t, (X/p)*g) + E_s(D, K) + a*min(D, K)
 *       + Y*g + Z + l,        K = max(C/c_eff, (F+C)/t)
 *
 * D: disk time of the node's bytes; C: core-seconds; F: disk time of
 * synchronous file calls (a worker waiting computes nothing); X: bytes
 * crossing ranks; Y: collective bytes a rank receives; Z: VP 0's serial
 * work; l: superstep latency; E_s: what the expected max of D and K
 * exceeds their max by when each deviates by a share s ("spread"); a: the
 * share of the lesser the runs did not hide ("overlap").
 *
 * Rates are work per CPU second of the real algorithms, so other load on
 * the machine does not lengthen them; nothing is fitted to the runs the
 * model is compared with.  Uses only the public headers, the algorithms'
 * planners and gen/ (calibration inputs); functions return 0 or -errno
 * unless they say.
 */
#ifndef PEMS_MODEL_H
#define PEMS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "pems.h"
#include "pems_algorithms.h"

#define PEMS_MODEL_MAXP 16	/* rank counts a per-p term holds */
#define PEMS_MODEL_MAXAGG 8	/* "agg_at" lines */
#define PEMS_MODEL_MAXSTEPS PEMS_COST_MAXSTEPS

/* ---- parameters: one machine ---- */

/* A term measured per rank count: "KEY P VALUE" lines. */
struct pems_model_ptab {
	unsigned n;
	struct { unsigned p; double v; } e[PEMS_MODEL_MAXP];
};

/* A term measured per algorithm (and rank count): "KEY ALGO P VALUE", or
 * "KEY ALGO VALUE" kept at p = 0.  ALGO: sort-u64, sort-rec100,
 * aggregate, aggregate-pre (an aggregate whose load hashes most rows), sgd. */
struct pems_model_atab {
	unsigned n;
	struct { char algo[16]; unsigned p; double v; } e[8 * PEMS_MODEL_MAXP];
};

/* The parameter file as a value; every rate is per core and positive. */
struct pems_model_params {
	char date[32];
	double cores;
	double load;			/* other runnable threads met (CFS share) */
	double poll;			/* cores an idle comm thread takes (p > 1) */
	double read_bw, write_bw;	/* bytes/s, 64 MiB pems_file_* calls */
	double fwrite_bw;		/* bytes/s into a hole (outputs not sized) */
	double iops;			/* 4 KiB random reads/s, 32 in flight per VP */
	double lat;			/* s per synchronous call beyond its bytes */
	double copy_bw;			/* memcpy bytes/s, one core */
	double qsort_ns;		/* ns per n*log2(n), 24-byte keys */
	double vp_secs;			/* runtime core-seconds per VP per superstep */
	double setup;			/* seconds per run outside the supersteps */
	double flush_bw;		/* bytes written per second of a run's end */
	double overlap;			/* share of the lesser of disk and compute
					 * not hidden under the greater */
	double spread;			/* relative deviation of disk and compute */
	double sort_part[2];		/* bytes/s, sort superstep 2: u64, rec100 */
	double sort_local[2];		/* bytes/s, sort superstep 3 */
	double agg_raw, agg_hash;	/* rows/s, aggregate superstep 2 */
	double agg_merge, agg_write;	/* rows/s, supersteps 3, 4 */
	double agg_compact, agg_fmt;	/* groups/s: compacting (3), formatting (4) */
	double sgd;			/* rows * dim / s */
	unsigned nbsp;			/* "bsp P L G": latency, s per byte */
	struct { unsigned p; double l, g; } bsp[PEMS_MODEL_MAXP];
	struct pems_model_ptab setup_p;		/* "setup_mpi P S" */
	struct pems_model_ptab poll_p;		/* "poll_p P C" */
	struct pems_model_ptab cpu_p;		/* "cpu_p P F" */
	struct pems_model_atab cpu_a;		/* "cpu_alg A P F" */
	struct pems_model_ptab lbusy;		/* "lbusy P S" */
	unsigned ncpus;				/* "cpu_step A S P F" */
	struct { char algo[16]; unsigned step, p; double f; } cpu_s[16 * PEMS_MODEL_MAXP];
	struct pems_model_ptab overlap_p;	/* "overlap_p P A" */
	struct pems_model_atab ovl_a;		/* "overlap_alg A P S" */
	struct pems_model_atab ks;		/* "kscale A F" */
	unsigned nagg;				/* "agg_at X M W", ascending X */
	struct { double x, merge, write; } agg_at[PEMS_MODEL_MAXAGG];
};

/* Read a parameter file from @f (@name for messages) into @m.  Returns 0,
 * or -EINVAL with the reason in @err ("NAME: line N: ...", "NAME: 'key'
 * is missing or not positive"). */
int pems_model_read(FILE *f, const char *name, struct pems_model_params *m, char *err,
		    size_t errlen);
/* pems_model_read() of the file @path; -errno when it cannot be opened. */
int pems_model_load(const char *path, struct pems_model_params *m, char *err, size_t errlen);
/* Write @m to @path in the format pems_model_read() takes.  0 or -errno. */
int pems_model_save(const char *path, const struct pems_model_params *m);
/* Set the value at @p of a per-p term (replacing it); -ENOSPC when full. */
int pems_model_ptab_set(struct pems_model_ptab *t, unsigned p, double v);
/* l and g at @p ranks (g: what a byte crossing ranks costs beyond p = 1);
 * -ENOENT without a "bsp P" line. */
int pems_model_bsp(const struct pems_model_params *m, unsigned p, double *l, double *g);

/* ---- jobs ---- */

enum pems_model_algo { PEMS_MODEL_SORT, PEMS_MODEL_AGGREGATE, PEMS_MODEL_SGD };

/* A job; v, k = 0 leave them to the algorithm's planner. */
struct pems_model_job {
	enum pems_model_algo algo;
	struct pems_cost_job cost;	/* input and shape; cost.p, cost.v are p, v */
	double mem;			/* budget per rank, bytes */
	unsigned k;			/* workers per rank */
	double chunk, mu;		/* message chunk, context size (planned) */
	enum pems_compress compress;	/* of spills: its buffers take budget */
	int compress_level;
};

/* Defaults: 1 GiB budget, 1 Mi groups of 33 output bytes, sgd dim 64,
 * one epoch, batch 64, 64 local steps, 16 shards; compression as the
 * environment sets it for runs here (PEMS_COMPRESS). */
void pems_model_job_init(struct pems_model_job *j);
const char *pems_model_algo_name(enum pems_model_algo a);
/* "sort", "aggregate", "sgd"; -EINVAL otherwise. */
int pems_model_algo_parse(const char *name, enum pems_model_algo *out);
/* Plan @j as its algorithm would on ranks of @cores cores: v, k (unless
 * given), chunk, mu.  -PEMS_E_BUDGET when the budget cannot hold it. */
int pems_model_plan(struct pems_model_job *j, unsigned cores);

/* ---- where the ranks run ---- */

struct pems_model_layout {
	double nodes;				/* the p ranks spread over these */
	double cores, load, poll, read_bw, write_bw, fwrite_bw, iops, lat;	/* per node */
	double g, l;				/* s per byte per rank; s per superstep */
	double cpu_f;				/* CPU factor of the ranks on a node, 0: none */
	double lbusy;				/* l of repeated supersteps under load, 0: l */
	double cpu_fs[PEMS_MODEL_MAXSTEPS];	/* CPU factor per superstep, 0: cpu_f */
	double cpu_pre;				/* factor of the aggregate's hashed rows */
	double ks, ks_pre;			/* kscale of the algorithm, of hashed rows */
	bool has_ovl;				/* ovl holds the overlap, else overlap */
	double ovl;
	double setup;				/* seconds outside the supersteps */
};

/* This machine, @j's p ranks on it (predict); @j planned.  -ENOENT when
 * @m has no "bsp P" line for them. */
int pems_model_layout_here(struct pems_model_layout *L, const struct pems_model_params *m,
			   const struct pems_model_job *j);

/* A cluster of nodes like this machine, one rank per node. */
struct pems_model_net {
	double gbit;		/* network bandwidth, Gbit/s per node */
	double latency;		/* s per message hop */
	double msg_overhead;	/* s per message */
	double read_bw, write_bw;	/* per node; 0: calibrated */
	unsigned node_terms;	/* for nodes > 1: the terms of this many ranks here */
};
/* @j (planned for @nodes ranks) on @nodes nodes of @net. */
void pems_model_layout_nodes(struct pems_model_layout *L, const struct pems_model_params *m,
			     const struct pems_model_job *j, const struct pems_model_net *net,
			     double nodes);

/* ---- predictions ---- */

struct pems_model_time {
	const char *name;	/* the algorithm's name of the superstep */
	unsigned first;		/* its number (the first of reps) */
	double reps;		/* identical supersteps */
	double t;		/* seconds of one */
	double disk, cpu, chain, xfer, comm;	/* the terms of one */
	double cpu_f;		/* the CPU factor applied */
	const char *bound;	/* "disk", "cpu", "chain", "net" */
};

struct pems_model_prediction {
	unsigned n;
	struct pems_model_time s[PEMS_MODEL_MAXSTEPS];
	double setup;		/* seconds outside the supersteps, flush included */
	double total;		/* seconds */
	double work_cpu;	/* kernel core-seconds */
	double work_io;		/* bytes of disk traffic */
	double share;		/* cores the workers get */
};

/* Predict planned job @j on @L. */
void pems_model_predict(const struct pems_model_job *j, const struct pems_model_params *m,
			const struct pems_model_layout *L, struct pems_model_prediction *out);

/* One node count of a projection: @job (as given, p and v aside) on
 * @nodes nodes of @net, the input @bytes in all or, with per_node, on
 * each node.  sgd gets at least one shard per worker.  fits is false
 * when the budget cannot hold the job there (job then holds its shape;
 * layout and pred are not set). */
struct pems_model_projection {
	double nodes, speedup;		/* speedup: set by the caller */
	bool fits;
	unsigned terms_p;		/* the ranks here whose terms stand for a node */
	struct pems_model_job job;	/* as planned for the nodes */
	struct pems_model_layout layout;
	struct pems_model_prediction pred;
};
void pems_model_project(const struct pems_model_job *j, const struct pems_model_params *m,
			const struct pems_model_net *net, double nodes, bool per_node,
			struct pems_model_projection *out);

/* ---- reports (bench/model.sh reads their "model=" and "projection="
 * records by key) ---- */

struct pems_model_run;

/* the table: one row per superstep (measured seconds next to them with
 * @ms), setup+flush, total */
void pems_model_print_table(FILE *f, const struct pems_model_prediction *pr,
			    const struct pems_model_run *ms);
/* work, CPU share and the "model=" record */
void pems_model_print_summary(FILE *f, const struct pems_model_job *j,
			      const struct pems_model_params *m, const struct pems_model_layout *L,
			      const struct pems_model_prediction *pr, const struct pems_model_run *ms);
/* a row of the projection table and its "projection=" record */
void pems_model_print_projection(FILE *f, const struct pems_model_projection *pj);

/* ---- a measured run: the --stats-json file of 'pems-run ALGO' ---- */

struct pems_model_run {
	double secs, bytes, v, k, p, mem;
	double io;		/* bytes read and written, all ranks */
	double cpu;		/* CPU seconds: rank 0's supersteps times p */
	double *steps;		/* seconds per superstep (owned; pems_model_run_free) */
	unsigned nsteps;
};
/* -errno, or -EINVAL when @path has no "secs" and "bytes" (message in @err). */
int pems_model_run_load(const char *path, struct pems_model_run *r, char *err, size_t errlen);
void pems_model_run_free(struct pems_model_run *r);

/* ---- calibration ---- */

struct pems_model_cal {
	const char *dir;	/* scratch directory for the tests */
	double size;		/* bytes of the disk test */
	double ksize;		/* bytes of each kernel input */
	unsigned k;		/* workers */
	unsigned runs;		/* runs of each kernel (median) */
	const char *bsp_csv;	/* bench/bsp-params.sh CSV: l, g of p > 1, or NULL */
	bool base;		/* keep the kernel rates of the params given */
	char err[512];		/* why, when pems_model_calibrate fails */
};

/* Measure this machine into @m (with c->base: @m holds the old file,
 * whose kernel rates, g and l stay).  Minutes; runs SPMD sections of
 * its own, so not under mpirun.  0 or -errno with c->err set. */
int pems_model_calibrate(struct pems_model_cal *c, struct pems_model_params *m);

#endif
