/*
 * checkpoint.h - superstep checkpoints: the manifest format and its
 * parser (kept free of side effects so that it can be fuzzed), and the
 * hooks the runtime calls (checkpoint.c).
 */
#ifndef PEMS_CHECKPOINT_H
#define PEMS_CHECKPOINT_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#define PEMS_MF_VERSION 1
#define PEMS_MF_LAYOUT 5	/* addresses checked on resume */

/* a file the SPMD section opened with pems_file_open */
struct pems_mf_file {
	int h, flags, dfd, bfd;
	bool direct;
	uint64_t size;		/* identity, checked on resume: */
	int64_t mtime_ns;
	uint32_t head_crc, tail_crc;	/* CRC-32C of the first and last MiB */
	char *path;
};

/* a mapped binary or library: same size and mtime on resume */
struct pems_mf_map {
	uint64_t size;
	int64_t mtime_ns;
	char *path;
};

/* One parsed manifest.  Strings and arrays are owned by it and released
 * by pems_manifest_free(). */
struct pems_manifest {
	unsigned version;
	uint64_t superstep;		/* the superstep the run resumes at */
	uint64_t supersteps;		/* supersteps completed */
	unsigned run;			/* index of the SPMD section in the process */
	char *exe, *cwd, *dir;
	char **argv, **envp;		/* envp: PEMS_* and TMPDIR only */
	unsigned argc, envc;
	unsigned env_count;		/* the whole environment's strings and */
	uint64_t env_bytes;		/* bytes (NULs included): its layout */
	bool launched;			/* started by mpirun */
	unsigned v, k, p, io, ndirs;
	uint64_t mu, mem, stack, msg_mem, chunk;
	char **tmp;			/* ndirs scratch dirs */
	uint64_t layout[PEMS_MF_LAYOUT];
	struct pems_mf_file *files;
	unsigned nfiles;
	struct pems_mf_map *maps;
	unsigned nmaps;
	char **cleanup;
	unsigned ncleanup;
	char *state;			/* state file name in dir */
	uint64_t state_size;
	uint32_t state_crc;
	unsigned wlog, rlog;
};

/* Parse @len bytes of manifest text into @m (zeroed first).  Checks the
 * trailing CRC-32C line and every field; no I/O, no global state.
 * Returns 0, or -EINVAL (malformed), -EBADMSG (checksum mismatch),
 * -ENOMEM; @m is then empty.  @err (may be NULL) gets a reason. */
int pems_manifest_parse(const char *text, size_t len, struct pems_manifest *m,
			char *err, size_t errlen);
void pems_manifest_free(struct pems_manifest *m);
/* Write @s to @f escaped as a manifest field (the parser's inverse). */
void pems_mf_put_esc(FILE *f, const char *s);

#endif
