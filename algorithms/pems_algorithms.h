/*
 * pems_algorithms.h - bundled BSP algorithms (layer algorithms/).
 * Written only against the public BSP API (bsp.h, pems.h).  Each entry
 * point runs one SPMD section with the configuration set by
 * pems_configure() and returns 0 or -errno; on failure it has printed
 * "pems: ..." on stderr and left no output under the final name.
 */
#ifndef PEMS_ALGORITHMS_H
#define PEMS_ALGORITHMS_H

#include <stddef.h>
#include <stdint.h>
#include "pems.h"

enum pems_format { PEMS_FMT_U64 = 0, PEMS_FMT_REC100 = 1, PEMS_FMT_ASCII100 = 2 };

/* Record size in bytes of @fmt (8, 100, 100). */
size_t pems_format_size(enum pems_format fmt);
/* Parse "u64", "rec100", "ascii100"; returns 0 or -EINVAL. */
int pems_format_parse(const char *name, enum pems_format *out);

struct pems_sort_job {
	const char *in;		/* input file, records of fmt */
	const char *out;	/* final output path (written as out.tmp.<pid>, then renamed) */
	enum pems_format fmt;	/* u64 or rec100 */
	/* progress: called on the runtime thread, may be NULL */
	void (*progress)(const char *phase, uint64_t done, uint64_t total, void *arg);
	void *progress_arg;
};

/* Sample sort of job->in into job->out: ~4N bytes of disk traffic.
 * Returns 0 or -errno. */
int pems_sort(const struct pems_sort_job *job);

#endif
