/*
 * checkpoint.c - superstep checkpoints and resume.
 *
 * At a barrier no VP runs and no I/O is in flight (sched.c 2): every
 * context is resident or wholly in its context file, every message of
 * the next superstep is in a log or in a partial chunk in memory.  A
 * checkpoint writes the resident contexts back, fsyncs the scratch
 * files, saves what lives outside them (the runtime's tables: VP
 * registers, heaps, registrations, collective results, get replies,
 * message stream indices and partial chunks) into a state file and
 * commits a manifest.  Resuming re-executes the same program with the
 * same argv, its PEMS_* and TMPDIR variables and an environment of the
 * same size (the manifest keeps nothing else of it: invariant 1), lets
 * it set up the runtime exactly as the first time, then loads the state
 * instead of starting the VPs.  Every file it writes is mode 0600.
 *
 * A VP is a ucontext whose stack is in its slice and whose frames hold
 * return addresses and pointers into the program, libc, the runtime's
 * tables (rt, rt->vps) and the driver's stack.  Those are valid in the
 * new process only if it has the same address layout, hence:
 *
 * Invariants:
 *  (1) a checkpointing process runs with ASLR off and was started by
 *      execve(realpath of the binary, argv, environ + PEMS_CKPT_EXEC=
 *      start_|resume): both values have one length, so the initial stack
 *      is laid out alike on start and resume; everything before the
 *      runtime's setup is deterministic, and the resume path allocates
 *      nothing before the setup is done.  The manifest records rt, vps,
 *      region, the entry argument and a driver stack address; resume
 *      refuses when any differs;
 *  (2) a checkpoint never overwrites what the previous one refers to:
 *      write-backs go to the context copy the last checkpoint does not
 *      use (context.c 2) and messages to a log other than the one it
 *      reads (msg.c 4), until the new manifest is renamed into place;
 *  (3) commit order: contexts written, scratch fsynced, state file
 *      written under a temporary name, fsynced and renamed, manifest
 *      likewise, directory fsynced; only then the old state file goes.
 *      A kill at any point leaves the previous checkpoint whole;
 *  (4) only the first SPMD section of a process checkpoints; files
 *      opened with pems_file_open are reopened at the same descriptors;
 *      process memory outside the contexts is not saved (the driver
 *      recomputes it by running again up to the SPMD section);
 *  (5) the first exec adds pad variables (room to grow); resume runs
 *      with its caller's environment, the recorded PEMS_* and TMPDIR in
 *      place of its own, padded to the recorded count and bytes, so the
 *      initial stack is laid out alike and a rank started by mpirun gets
 *      the new job's launcher variables (OMPI_*, PMIX_*); MPI runs on its
 *      own thread (transport.c: its own malloc arena) and the VP table
 *      and context region are mapped at a fixed address (context.c);
 *  (6) several ranks: each writes its part (manifest.S.R, state.S.R),
 *      all meet, rank 0 commits by writing manifest (a copy of its
 *      part), all meet again, and only then does a rank drop the
 *      previous part and protect the new copies; resume is all ranks or
 *      none (an allreduce of the refusals), with the recorded rank count;
 *  (7) a job holds an exclusive lock on DIR/lock (DIR/lock.RANK) from
 *      pems_ckpt_init to its end, before it touches the dir or a scratch
 *      file named after it; a second job or resume for the same dir
 *      refuses, naming the holder's PID, and removes nothing.
 *
 * States of a checkpoint directory:
 *
 *   (none) --start--> EMPTY --barrier due--> COMMITTED(s) --barrier--> COMMITTED(s')
 *                       |                        |  kill: kept, resumable
 *                       +--success: removed------+--success: removed
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt.h"
#include "ctx.h"
#include "msg.h"
#include "tp.h"
#include "ckpt.h"
#include "sched_parts.h"
#include "spill.h"
#include "checkpoint.h"
#include "crc32c.h"

#define MARK "PEMS_CKPT_EXEC"
#define MARK_START "start_"
#define MARK_RESUME "resume"
#define PAD "PEMS_CKPT_PAD"	/* pads a rank's environment (invariant 5) */
#define NPAD 8
#define PAD_BYTES 8192
#define MAXF 256
#define MAXPATHS 512
#define IDENT_BYTES (1u << 20)

extern char **environ;

struct note {
	bool used;
	int flags, dfd, bfd;
	bool direct;
	char *path;
};

struct pems_ckpt {
	char dir[PATH_MAX];
	char id[32];
	unsigned rank, nranks;
	bool resume;		/* this process resumes from dir */
	unsigned every, secs;
	double last;		/* time of the last checkpoint (or start) */
	uint64_t last_step;
	bool committed;		/* dir holds a valid manifest of this job */
	char state[64];		/* its state file */
	char part[64];		/* its manifest part (several ranks) */
	char *paths[MAXPATHS];	/* scratch files, for cleanup */
	unsigned npaths;
	struct pems_worker w;	/* the driver's engine for write-backs */
	char lock[PATH_MAX + 16];	/* held lock file (invariant 7), fd: */
	int lockfd;
	bool spoiled;		/* it refers to data found corrupt */
};

static struct pems_ckpt ck;
static struct note notes[MAXF];
static struct { void *addr; size_t len; } globals[16];
static unsigned nglobals;
static unsigned runs;

/* ---- manifest text ---- */

static void put_esc(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!*p)
		fputs("%00", f);	/* an empty string is one %00 */
	for (; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '%')
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Decode one escaped token of @n bytes; NULL when malformed. */
static char *unesc(const char *s, size_t n)
{
	char *o = malloc(n + 1), *d = o;
	size_t i;

	if (!o)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] != '%') {
			*d++ = s[i];
			continue;
		}
		if (i + 2 >= n) {
			free(o);
			return NULL;
		}
		{
			int a = hexval(s[i + 1]), b = hexval(s[i + 2]);

			if (a < 0 || b < 0 || (a == 0 && b == 0 && n != 3)) {
				free(o);
				return NULL;
			}
			if (a || b)
				*d++ = (char)(a * 16 + b);
			i += 2;
		}
	}
	*d = 0;
	return o;
}

struct toks {
	const char *t[16];
	size_t n[16];
	unsigned count;
};

/* Split a line into at most 16 space-separated tokens; false if more. */
static bool split(const char *line, size_t len, struct toks *tk)
{
	size_t i = 0;

	tk->count = 0;
	while (i < len) {
		size_t j = i;

		while (j < len && line[j] != ' ')
			j++;
		if (j == i || tk->count == 16)
			return false;	/* empty token (double space) or too many */
		tk->t[tk->count] = line + i;
		tk->n[tk->count++] = j - i;
		i = j + 1;
		if (j < len && i == len)
			return false;	/* trailing space */
	}
	return tk->count > 0;
}

static bool tok_is(const struct toks *tk, unsigned i, const char *s)
{
	return i < tk->count && tk->n[i] == strlen(s) && !memcmp(tk->t[i], s, tk->n[i]);
}

static bool tok_u64(const struct toks *tk, unsigned i, int base, uint64_t *out)
{
	char buf[32], *end;

	if (i >= tk->count || tk->n[i] == 0 || tk->n[i] >= sizeof(buf))
		return false;
	memcpy(buf, tk->t[i], tk->n[i]);
	buf[tk->n[i]] = 0;
	if (buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')
		return false;
	errno = 0;
	*out = strtoull(buf, &end, base);
	return !errno && !*end;
}

static bool tok_i64(const struct toks *tk, unsigned i, int64_t *out)
{
	uint64_t u;
	bool neg = i < tk->count && tk->n[i] > 1 && tk->t[i][0] == '-';
	struct toks t2 = *tk;

	if (neg) {
		t2.t[i]++;
		t2.n[i]--;
	}
	if (!tok_u64(&t2, i, 10, &u) || u > INT64_MAX)
		return false;
	*out = neg ? -(int64_t)u : (int64_t)u;
	return true;
}

static bool tok_uint(const struct toks *tk, unsigned i, unsigned max, unsigned *out)
{
	uint64_t u;

	if (!tok_u64(tk, i, 10, &u) || u > max)
		return false;
	*out = (unsigned)u;
	return true;
}

static bool tok_str(const struct toks *tk, unsigned i, char **out)
{
	if (i >= tk->count || *out)
		return false;	/* missing, or given twice */
	*out = unesc(tk->t[i], tk->n[i]);
	return *out != NULL;
}

static bool push_str(char ***arr, unsigned *n, const struct toks *tk, unsigned i)
{
	char **a, *s = NULL;

	if (*n >= 1u << 16 || !tok_str(tk, i, &s))
		return false;
	a = realloc(*arr, (*n + 1) * sizeof(*a));
	if (!a) {
		free(s);
		return false;
	}
	a[(*n)++] = s;
	*arr = a;
	return true;
}

void pems_manifest_free(struct pems_manifest *m)
{
	unsigned i;

	for (i = 0; i < m->argc; i++)
		free(m->argv[i]);
	for (i = 0; i < m->envc; i++)
		free(m->envp[i]);
	for (i = 0; i < m->ndirs && m->tmp; i++)
		free(m->tmp[i]);
	for (i = 0; i < m->nfiles; i++)
		free(m->files[i].path);
	for (i = 0; i < m->nmaps; i++)
		free(m->maps[i].path);
	for (i = 0; i < m->ncleanup; i++)
		free(m->cleanup[i]);
	free(m->argv);
	free(m->envp);
	free(m->tmp);
	free(m->files);
	free(m->maps);
	free(m->cleanup);
	free(m->exe);
	free(m->cwd);
	free(m->dir);
	free(m->state);
	memset(m, 0, sizeof(*m));
}

static bool parse_config(struct pems_manifest *m, const struct toks *tk)
{
	/* !m->tmp first: a second config line must not change ndirs under
	 * the tmp array of the first (found by tests/fuzz/fuzz_manifest.c) */
	return !m->tmp && tk->count == 12 && tok_uint(tk, 1, 1u << 30, &m->v) &&
	       tok_uint(tk, 2, 64, &m->k) && tok_uint(tk, 3, 1u << 20, &m->p) &&
	       tok_uint(tk, 4, 2, &m->io) && tok_uint(tk, 5, PEMS_MAX_TMP, &m->ndirs) &&
	       m->ndirs >= 1 && tok_u64(tk, 6, 10, &m->mu) && tok_u64(tk, 7, 10, &m->mem) &&
	       tok_u64(tk, 8, 10, &m->stack) && tok_u64(tk, 9, 10, &m->msg_mem) &&
	       tok_u64(tk, 10, 10, &m->chunk) && tok_uint(tk, 11, PEMS_NLOGS - 1, &m->wlog) &&
	       (m->tmp = calloc(m->ndirs, sizeof(char *))) != NULL;
}

static bool parse_file(struct pems_manifest *m, const struct toks *tk)
{
	struct pems_mf_file f = { 0 }, *a;
	uint64_t hc, tc;
	unsigned h, fl, dfd, bfd, dir;

	if (tk->count != 11 || !tok_uint(tk, 1, MAXF - 1, &h) ||
	    !tok_uint(tk, 2, INT32_MAX, &fl) || !tok_uint(tk, 3, 1u << 20, &dfd) ||
	    !tok_uint(tk, 4, 1u << 20, &bfd) || !tok_uint(tk, 5, 1, &dir) ||
	    !tok_u64(tk, 6, 10, &f.size) || !tok_i64(tk, 7, &f.mtime_ns) ||
	    !tok_u64(tk, 8, 16, &hc) || hc > UINT32_MAX || !tok_u64(tk, 9, 16, &tc) ||
	    tc > UINT32_MAX || m->nfiles >= MAXF || !tok_str(tk, 10, &f.path))
		return false;
	f.h = (int)h;
	f.flags = (int)fl;
	f.dfd = (int)dfd;
	f.bfd = (int)bfd;
	f.direct = dir;
	f.head_crc = (uint32_t)hc;
	f.tail_crc = (uint32_t)tc;
	a = realloc(m->files, (m->nfiles + 1) * sizeof(*a));
	if (!a) {
		free(f.path);
		return false;
	}
	a[m->nfiles++] = f;
	m->files = a;
	return true;
}

static bool parse_map(struct pems_manifest *m, const struct toks *tk)
{
	struct pems_mf_map x = { 0 }, *a;

	if (tk->count != 4 || m->nmaps >= 4096 || !tok_u64(tk, 1, 10, &x.size) ||
	    !tok_i64(tk, 2, &x.mtime_ns) || !tok_str(tk, 3, &x.path))
		return false;
	a = realloc(m->maps, (m->nmaps + 1) * sizeof(*a));
	if (!a) {
		free(x.path);
		return false;
	}
	a[m->nmaps++] = x;
	m->maps = a;
	return true;
}

static bool parse_line(struct pems_manifest *m, const struct toks *tk, unsigned *seen)
{
	unsigned i;
	uint64_t u;

	if (tok_is(tk, 0, "superstep"))
		return tk->count == 3 && tok_u64(tk, 1, 10, &m->superstep) &&
		       tok_u64(tk, 2, 10, &m->supersteps) && (*seen |= 1);
	if (tok_is(tk, 0, "run"))
		return tk->count == 2 && tok_uint(tk, 1, 1u << 20, &m->run);
	if (tok_is(tk, 0, "exe"))
		return tk->count == 2 && tok_str(tk, 1, &m->exe) && (*seen |= 2);
	if (tok_is(tk, 0, "cwd"))
		return tk->count == 2 && tok_str(tk, 1, &m->cwd) && (*seen |= 4);
	if (tok_is(tk, 0, "dir"))
		return tk->count == 2 && tok_str(tk, 1, &m->dir) && (*seen |= 8);
	if (tok_is(tk, 0, "arg"))
		return tk->count == 2 && push_str(&m->argv, &m->argc, tk, 1);
	if (tok_is(tk, 0, "env"))
		return tk->count == 2 && push_str(&m->envp, &m->envc, tk, 1);
	if (tok_is(tk, 0, "envsize"))
		return tk->count == 4 && tok_uint(tk, 1, 1u << 20, &m->env_count) &&
		       m->env_count > 0 && tok_u64(tk, 2, 10, &m->env_bytes) &&
		       m->env_bytes <= (64u << 20) && tok_uint(tk, 3, 1, &i) &&
		       (m->launched = i, *seen |= 128);
	if (tok_is(tk, 0, "config"))
		return parse_config(m, tk) && (*seen |= 16);
	if (tok_is(tk, 0, "tmp"))
		return tk->count == 3 && m->tmp && tok_uint(tk, 1, m->ndirs - 1, &i) &&
		       tok_str(tk, 2, &m->tmp[i]);
	if (tok_is(tk, 0, "layout")) {
		if (tk->count != PEMS_MF_LAYOUT + 1)
			return false;
		for (i = 0; i < PEMS_MF_LAYOUT; i++)
			if (!tok_u64(tk, i + 1, 16, &m->layout[i]))
				return false;
		*seen |= 32;
		return true;
	}
	if (tok_is(tk, 0, "file"))
		return parse_file(m, tk);
	if (tok_is(tk, 0, "map"))
		return parse_map(m, tk);
	if (tok_is(tk, 0, "cleanup"))
		return tk->count == 2 && push_str(&m->cleanup, &m->ncleanup, tk, 1);
	if (tok_is(tk, 0, "state"))
		return tk->count == 5 && tok_str(tk, 1, &m->state) &&
		       tok_u64(tk, 2, 10, &m->state_size) && tok_u64(tk, 3, 16, &u) &&
		       u <= UINT32_MAX && (m->state_crc = (uint32_t)u, true) &&
		       tok_uint(tk, 4, PEMS_NLOGS - 1, &m->rlog) && (*seen |= 64);
	return false;
}

static int bad(char *err, size_t errlen, int rc, const char *why, unsigned line)
{
	if (err && errlen && line)
		snprintf(err, errlen, "%s (line %u)", why, line);
	else if (err && errlen)
		snprintf(err, errlen, "%s", why);
	return rc;
}

int pems_manifest_parse(const char *text, size_t len, struct pems_manifest *m,
			char *err, size_t errlen)
{
	static const char head[] = "pems-checkpoint 1\n";
	const char *end, *p, *last;
	unsigned line = 1, seen = 0, i;
	struct toks tk;
	uint64_t crc;
	int rc = 0;

	memset(m, 0, sizeof(*m));
	if (len < sizeof(head) - 1 || memcmp(text, head, sizeof(head) - 1))
		return bad(err, errlen, -EINVAL, "not a pems checkpoint manifest", 1);
	/* the last line is "crc32c XXXXXXXX\n" over everything before it */
	if (len < sizeof(head) - 1 + 16 || text[len - 1] != '\n' ||
	    memcmp(text + len - 16, "crc32c ", 7))
		return bad(err, errlen, -EINVAL, "truncated: no crc32c line at the end", 0);
	last = text + len - 16;
	{
		struct toks c;

		if (!split(last, 15, &c) || c.count != 2 || c.n[1] != 8 || !tok_u64(&c, 1, 16, &crc))
			return bad(err, errlen, -EINVAL, "malformed crc32c line", 0);
	}
	if (pems_crc32c(0, text, (size_t)(last - text)) != (uint32_t)crc)
		return bad(err, errlen, -EBADMSG, "checksum mismatch: the manifest is corrupt", 0);
	m->version = PEMS_MF_VERSION;
	for (p = text + sizeof(head) - 1; p < last; p = end + 1) {
		line++;
		end = memchr(p, '\n', (size_t)(last - p));
		if (!end || memchr(p, 0, (size_t)(end - p)) || !split(p, (size_t)(end - p), &tk) ||
		    !parse_line(m, &tk, &seen)) {
			rc = bad(err, errlen, errno == ENOMEM ? -ENOMEM : -EINVAL, "malformed line", line);
			goto fail;
		}
	}
	if (seen != 255 || !m->argc) {
		rc = bad(err, errlen, -EINVAL, "a required field is missing", line);
		goto fail;
	}
	for (i = 0; i < m->ndirs; i++)
		if (!m->tmp[i]) {
			rc = bad(err, errlen, -EINVAL, "a scratch dir is missing", line);
			goto fail;
		}
	return 0;
fail:
	pems_manifest_free(m);
	return rc;
}

/* ---- reading and checking a checkpoint directory ---- */

static int read_all(const char *path, char **out, size_t *len, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	struct stat st;
	char *buf;
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || (size_t)st.st_size > max) {
		rc = fstat(fd, &st) ? -errno : -EFBIG;
		close(fd);
		return rc;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, buf, (size_t)st.st_size, 0);
	if (n != st.st_size) {
		rc = n < 0 ? -errno : -EIO;
		free(buf);
		close(fd);
		return rc;
	}
	close(fd);
	buf[n] = 0;
	*out = buf;
	*len = (size_t)n;
	return 0;
}

static int load_file(const char *dir, const char *name, struct pems_manifest *m)
{
	char path[PATH_MAX + 64], err[128];
	char *text = NULL;
	size_t len = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = read_all(path, &text, &len, 64u << 20);
	if (rc == -ENOENT && !strcmp(name, "manifest")) {
		fprintf(stderr, "pems: error: resume: no checkpoint in %s (the run was stopped before its first checkpoint, or finished); start it again\n",
			dir);
		return rc;
	}
	if (rc) {
		fprintf(stderr, "pems: error: resume: cannot read %s: %s; the checkpoint cannot be used\n",
			path, strerror(-rc));
		return rc;
	}
	rc = pems_manifest_parse(text, len, m, err, sizeof(err));
	free(text);
	if (rc)
		fprintf(stderr, "pems: error: resume: %s: %s; the checkpoint cannot be used, start the run again\n",
			path, err);
	return rc;
}

/* The manifest of rank @rank of a job of @size ranks (invariant 6):
 * DIR/manifest itself for one rank; with several, DIR/manifest (the
 * commit, a copy of rank 0's part) names the superstep and the rank's
 * own part is DIR/manifest.S.RANK.  A different number of ranks is
 * refused here, before anything runs. */
static int load_manifest(const char *dir, unsigned rank, unsigned size, struct pems_manifest *m)
{
	char name[64];
	uint64_t s;
	int rc;

	rc = load_file(dir, "manifest", m);
	if (rc)
		return rc;
	if (m->p != size) {
		if (m->p > 1)
			fprintf(stderr, "pems: error: resume: the checkpoint in %s was written by %u ranks and this job has %u; resume it with all of them: mpirun -np %u pems-run resume %s\n",
				dir, m->p, size, m->p, dir);
		else
			fprintf(stderr, "pems: error: resume: the checkpoint in %s was written by one process and this job has %u ranks; resume it without mpirun: pems-run resume %s\n",
				dir, size, dir);
		pems_manifest_free(m);
		return -PEMS_E_CONFIG;
	}
	if (size == 1)
		return 0;
	s = m->superstep;
	pems_manifest_free(m);
	snprintf(name, sizeof(name), "manifest.%llu.%u", (unsigned long long)s, rank);
	rc = load_file(dir, name, m);
	if (!rc && (m->superstep != s || m->p != size)) {
		fprintf(stderr, "pems: error: resume: %s/%s belongs to another checkpoint; the checkpoint cannot be used\n",
			dir, name);
		pems_manifest_free(m);
		rc = -EBADMSG;
	}
	return rc;
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* CRC-32C of the first and last MiB of an open file of @size bytes. */
static int ident_crcs(int fd, uint64_t size, uint32_t *head, uint32_t *tail)
{
	char *buf = malloc(IDENT_BYTES);
	size_t n = size < IDENT_BYTES ? (size_t)size : IDENT_BYTES;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	if (pread(fd, buf, n, 0) != (ssize_t)n)
		rc = -EIO;
	*head = pems_crc32c(0, buf, n);
	if (!rc && pread(fd, buf, n, (off_t)(size - n)) != (ssize_t)n)
		rc = -EIO;
	*tail = pems_crc32c(0, buf, n);
	free(buf);
	return rc;
}

/* Refuse when an input the run read changed since the checkpoint. */
static int check_inputs(const struct pems_manifest *m)
{
	unsigned i;

	for (i = 0; i < m->nfiles; i++) {
		const struct pems_mf_file *f = &m->files[i];
		struct stat st;
		uint32_t h, t;
		int fd;

		if ((f->flags & O_ACCMODE) != O_RDONLY)
			continue;
		fd = open(f->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			fprintf(stderr, "pems: error: resume: input %s: %s; the run needs its input unchanged\n",
				f->path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -ENOENT;
		}
		if ((uint64_t)st.st_size != f->size || mtime_ns(&st) != f->mtime_ns ||
		    ident_crcs(fd, f->size, &h, &t) || h != f->head_crc || t != f->tail_crc) {
			fprintf(stderr, "pems: error: resume: input %s changed since the checkpoint (%s); refusing to resume, start the run again\n",
				f->path, (uint64_t)st.st_size != f->size ? "size differs" :
				mtime_ns(&st) != f->mtime_ns ? "modification time differs" :
				"contents differ");
			close(fd);
			return -PEMS_E_CONFIG;
		}
		close(fd);
	}
	return 0;
}

static int check_maps(const struct pems_manifest *m)
{
	unsigned i;

	for (i = 0; i < m->nmaps; i++) {
		struct stat st;

		if (stat(m->maps[i].path, &st) || (uint64_t)st.st_size != m->maps[i].size ||
		    mtime_ns(&st) != m->maps[i].mtime_ns) {
			fprintf(stderr, "pems: error: resume: %s changed since the checkpoint (rebuilt or upgraded); a run resumes only with the same program and libraries\n",
				m->maps[i].path);
			return -PEMS_E_CONFIG;
		}
	}
	return 0;
}

/* ---- starting a process that can checkpoint, and resuming one ---- */

static int exec_with(const char *exe, char *const *argv, char **env)
{
	int pers = personality(0xffffffff);

	if (pers == -1 || personality((unsigned long)pers | ADDR_NO_RANDOMIZE) == -1)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	execve(exe, argv, env);
	personality((unsigned long)pers);
	return -errno;
}

/* ---- the environment of a resumed process (invariants 1 and 5) ---- */

static bool pad_var(const char *s)
{
	return !strncmp(s, PAD, strlen(PAD));
}

/* What the manifest keeps of the environment: the run's configuration
 * (PEMS_*, which includes MARK) and TMPDIR (the default scratch dir);
 * resume brings these back and takes everything else from its caller. */
static bool recorded_var(const char *s)
{
	return (!strncmp(s, "PEMS_", 5) && !pad_var(s)) || !strncmp(s, "TMPDIR=", 7);
}

/* Rank and size from the launcher's environment (before MPI_Init). */
static bool launch_rank(unsigned *rank, unsigned *size)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK"), *n = getenv("OMPI_COMM_WORLD_SIZE");

	if (!pems_tp_launched())
		return false;
	*rank = r ? (unsigned)strtoul(r, NULL, 10) : 0;
	*size = n ? (unsigned)strtoul(n, NULL, 10) : 1;
	return true;
}

/* Append pad variables to @env (which has room for @count strings and a
 * NULL) so that it holds exactly @count strings of @bytes bytes in all
 * (NULs included): the kernel then lays out the initial stack, hence
 * main's frame, at the same addresses whatever the variables hold.
 * *@pad gets the malloc'd pad text (free it after execve).  Returns the
 * new count, or 0 when @env is already too large. */
static size_t pad_env(char **env, size_t n, size_t count, size_t bytes, char **pad)
{
	size_t have = 0, i, npad, min, first;
	char *p;

	*pad = NULL;
	for (i = 0; i < n; i++)
		have += strlen(env[i]) + 1;
	if (n >= count)
		return 0;
	npad = count - n;
	for (min = 0, i = 0; i < npad; i++)	/* "PEMS_CKPT_PADi=" + NUL */
		min += strlen(PAD) + (size_t)snprintf(NULL, 0, "%zu", i) + 2;
	if (have + min > bytes)
		return 0;
	first = bytes - have - min;
	p = *pad = malloc(bytes - have + 1);
	if (!p)
		return 0;
	for (i = 0; i < npad; i++) {
		env[n + i] = p;
		p += sprintf(p, "%s%zu=", PAD, i);
		if (!i) {
			memset(p, 'x', first);
			p += first;
			*p = 0;
		}
		p++;
	}
	env[n + npad] = NULL;
	return n + npad;
}

/* The start adds NPAD variables and PAD_BYTES / 2 bytes of room, so that
 * the environment a resume is started from may be somewhat larger than
 * this one (resume_env pads it to the recorded count and bytes). */
PEMS_API void pems_checkpoint_exec(char **argv)
{
	char exe[PATH_MAX], **env, *pad = NULL;
	size_t n = 0, i, bytes = 0;

	if (getenv(MARK) || !argv || !argv[0])
		return;
	if (!realpath("/proc/self/exe", exe))
		return;
	while (environ[n])
		n++;
	env = malloc((n + 2 + NPAD) * sizeof(*env));
	if (!env)
		return;
	for (i = 0; i < n; i++)
		env[i] = environ[i];
	env[n++] = MARK "=" MARK_START;
	env[n] = NULL;
	for (i = 0; i < n; i++)
		bytes += strlen(env[i]) + 1;
	bytes += PAD_BYTES / 2 + NPAD * (strlen(PAD) + 3);
	if (pad_env(env, n, n + NPAD, bytes, &pad))
		exec_with(exe, argv, env);
	free(pad);
	free(env);	/* cannot re-exec: run on without checkpoints */
}

/* Programs that ask for checkpoints through the environment start over
 * with ASLR off before main (invariant 1). */
__attribute__((constructor)) static void ckpt_ctor(int argc, char **argv)
{
	const char *d = getenv("PEMS_CHECKPOINT_DIR");

	(void)argc;
	if (d && *d)
		pems_checkpoint_exec(argv);
}

PEMS_API bool pems_resuming(void)
{
	const char *m = getenv(MARK);

	return m && !strcmp(m, MARK_RESUME);
}

/* The environment to resume with: the caller's own, with the recorded
 * PEMS_* and TMPDIR in place of its, padded to the recorded count and
 * bytes (invariants 1 and 5: a rank started by mpirun thus gets this
 * job's launcher variables).  *@pad: as pad_env. */
static int resume_env(const struct pems_manifest *m, bool launched, char ***out, char **pad)
{
	size_t n = 0, i, have = 0, extra = 0;
	char **env;

	if (m->launched && !launched) {
		fprintf(stderr, "pems: error: resume: the checkpoint was written by a job started with mpirun; resume it the same way: mpirun -np %u pems-run resume %s\n",
			m->p, m->dir);
		return -PEMS_E_CONFIG;
	}
	for (i = 0; environ[i]; i++)
		extra++;
	env = calloc(m->envc + extra + m->env_count + 1, sizeof(*env));
	if (!env)
		return -ENOMEM;
	for (i = 0; environ[i]; i++)
		if (!recorded_var(environ[i]) && !pad_var(environ[i]))
			env[n++] = environ[i];
	for (i = 0; i < m->envc; i++) {
		env[n] = m->envp[i];
		if (!strcmp(env[n], MARK "=" MARK_START))
			env[n] = MARK "=" MARK_RESUME;	/* same length: invariant 1 */
		n++;
	}
	for (i = 0; i < n; i++)
		have += strlen(env[i]) + 1;
	if (!pad_env(env, n, m->env_count, m->env_bytes, pad)) {
		fprintf(stderr, "pems: error: resume: this environment (%zu variables, %zu bytes with the run's PEMS_* and TMPDIR) does not fit the layout of the checkpointed run's (%u variables, %llu bytes); resume from a shell like the one that started the run, with fewer or shorter variables\n",
			n, have, m->env_count, (unsigned long long)m->env_bytes);
		free(env);
		return -PEMS_E_CONFIG;
	}
	*out = env;
	return 0;
}

/* The lock file of this rank in @dir (one per rank: ranks share it). */
static void lock_name(const char *dir, unsigned rank, unsigned nranks, char *p, size_t len)
{
	if (nranks > 1)
		snprintf(p, len, "%s/lock.%u", dir, rank);
	else
		snprintf(p, len, "%s/lock", dir);
}

/* Refuse at once when a job holds the checkpoint (its lock, invariant 7):
 * the run itself, or another resume of it.  The lock is released again
 * before the exec, which takes it anew in pems_ckpt_init. */
static int check_not_held(const char *dir, unsigned rank, unsigned size)
{
	char p[PATH_MAX + 16];
	long holder = 0;
	int fd;

	lock_name(dir, rank, size, p, sizeof(p));
	fd = pems_lock(p, &holder);
	if (fd == -EBUSY) {
		fprintf(stderr, "pems: error: resume: the checkpoint in %s is in use by another job (PID %ld): the run or another resume of it; wait for it to finish\n",
			dir, holder);
		return -PEMS_E_CONFIG;
	}
	pems_unlock(NULL, fd);
	return 0;
}

PEMS_API int pems_checkpoint_resume(const char *dir, char **argv)
{
	struct pems_manifest m;
	char **env = NULL, *pad = NULL;
	unsigned i, rank = 0, size = 1;
	bool launched = launch_rank(&rank, &size);
	int rc;

	rc = load_manifest(dir, rank, size, &m);
	if (rc)
		return rc;
	rc = check_not_held(dir, rank, size);
	if (rc)
		goto out;
	if (argv) {
		/* a command line given again must be the checkpointed one */
		for (i = 0; argv[i] || i < m.argc; i++)
			if (!argv[i] || i >= m.argc || strcmp(argv[i], m.argv[i])) {
				fprintf(stderr, "pems: error: resume: the command line differs from the checkpointed run's at argument %u: '%s' (was '%s'); a run resumes only with the same input, output and configuration (or use 'pems-run resume %s')\n",
					i, argv[i] ? argv[i] : "(none)",
					i < m.argc ? m.argv[i] : "(none)", dir);
				rc = -PEMS_E_CONFIG;
				goto out;
			}
	}
	if (chdir(m.cwd)) {
		rc = -errno;
		fprintf(stderr, "pems: error: resume: cannot enter the run's directory %s: %s\n",
			m.cwd, strerror(errno));
		goto out;
	}
	rc = check_inputs(&m);
	if (!rc)
		rc = check_maps(&m);
	if (rc)
		goto out;
	rc = resume_env(&m, launched, &env, &pad);
	if (rc)
		goto out;
	m.argv = realloc(m.argv, (m.argc + 1) * sizeof(char *));
	if (!m.argv) {
		rc = -ENOMEM;
		goto out;
	}
	m.argv[m.argc] = NULL;
	rc = exec_with(m.exe, m.argv, env);
	fprintf(stderr, "pems: error: resume: cannot run %s: %s\n", m.exe, strerror(-rc));
out:
	free(pad);
	free(env);
	pems_manifest_free(&m);
	return rc;
}

/* ---- process memory that VP code changes (invariant 4) ---- */

PEMS_API int pems_checkpoint_global(void *addr, size_t len)
{
	unsigned i;

	for (i = 0; i < nglobals; i++)
		if (globals[i].addr == addr) {
			globals[i].len = len;
			return 0;
		}
	if (nglobals == 16 || !addr)
		return -EINVAL;
	globals[nglobals].addr = addr;
	globals[nglobals++].len = len;
	return 0;
}

/* ---- files opened by the SPMD section (bsp/file.c) ---- */

void pems_ckpt_file_note(int h, const char *path, int flags, int dfd, int bfd, bool direct)
{
	if (h < 0 || h >= MAXF)
		return;
	free(notes[h].path);
	notes[h] = (struct note){ .used = true, .flags = flags, .dfd = dfd, .bfd = bfd,
				  .direct = direct, .path = strdup(path) };
}

void pems_ckpt_file_forget(int h)
{
	if (h < 0 || h >= MAXF)
		return;
	free(notes[h].path);
	memset(&notes[h], 0, sizeof(notes[h]));
}

/* Reopen a file the SPMD section had open, at the same descriptors. */
static int reopen_file(const struct pems_mf_file *f)
{
	struct note *n = &notes[f->h];
	int bfd, dfd, fl = f->flags & ~(O_CREAT | O_TRUNC | O_EXCL);
	bool direct;

	if (n->used && n->path && !strcmp(n->path, f->path))
		return 0;	/* the driver opened it again before the section */
	if (n->used || fcntl(f->bfd, F_GETFD) != -1 || fcntl(f->dfd, F_GETFD) != -1) {
		fprintf(stderr, "pems: error: resume: descriptor of %s is taken in the new process\n",
			f->path);
		return -EBUSY;
	}
	bfd = open(f->path, fl);
	if (bfd < 0 || dup2(bfd, f->bfd) < 0) {
		fprintf(stderr, "pems: error: resume: cannot reopen %s: %s\n", f->path, strerror(errno));
		return -errno;
	}
	if (bfd != f->bfd)
		close(bfd);
	dfd = pems_io_open(f->path, fl, 0, &direct);
	if (dfd < 0 || dup2(dfd, f->dfd) < 0) {
		fprintf(stderr, "pems: error: resume: cannot reopen %s\n", f->path);
		return dfd < 0 ? dfd : -errno;
	}
	if (dfd != f->dfd)
		close(dfd);
	pems_ckpt_file_note(f->h, f->path, f->flags, f->dfd, f->bfd, f->direct);
	return pems_fio_restore(f->h, f->dfd, f->bfd, f->direct);
}

/* ---- runtime hooks ---- */

/* A job owns its checkpoint dir (and the scratch named after it) while it
 * runs: a second job for the same dir, or a second resume of the same
 * checkpoint, refuses here and touches nothing (invariant 7). */
static int lock_dir(const struct pems_rt *rt)
{
	long holder = 0;
	int fd;

	lock_name(ck.dir, rt->rank, rt->nranks, ck.lock, sizeof(ck.lock));
	fd = pems_lock(ck.lock, &holder);
	if (fd >= 0) {
		ck.lockfd = fd;
		return 0;
	}
	ck.lock[0] = 0;
	if (fd == -EBUSY)
		fprintf(stderr, "pems: error: checkpoint dir %s is in use by another job (PID %ld); wait for it to finish, or pass another --checkpoint-dir\n",
			ck.dir, holder);
	else
		fprintf(stderr, "pems: error: checkpoint dir %s: cannot lock it: %s\n", ck.dir,
			strerror(-fd));
	return fd == -EBUSY ? -PEMS_E_CONFIG : -PEMS_E_SCRATCH;
}

/* Called by rt_init before any scratch file: invariant (1) forbids
 * allocating here on resume, so this only fills the static state. */
int pems_ckpt_init(struct pems_rt *rt)
{
	const char *m = getenv(MARK), *d = rt->cfg.ckpt_dir;
	unsigned run = runs++;
	char cwd[PATH_MAX];
	int rc;

	rt->nlogs = 2;
	rt->plog = -1;
	rt->wlog = 0;
	rt->rlog = 1;
	if (!d || !*d || run)
		return 0;
	if (!m) {
		if (rt->cfg.ckpt_every && !rt->cfg.quiet)
			fprintf(stderr, "pems: warning: checkpoints are off: the process was not started for them (set PEMS_CHECKPOINT_DIR, or call pems_checkpoint_exec first in main)\n");
		return 0;
	}
	memset(&ck, 0, sizeof(ck));
	ck.lockfd = -1;
	if (d[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	if (snprintf(ck.dir, sizeof(ck.dir), "%s%s%s", cwd, cwd[0] ? "/" : "", d) >=
	    (int)sizeof(ck.dir) - 64) {
		fprintf(stderr, "pems: error: checkpoint dir %s: name too long\n", d);
		return -PEMS_E_CONFIG;
	}
	ck.rank = rt->rank;
	ck.nranks = rt->nranks;
	/* ranks may share scratch dirs: their files differ by rank */
	if (rt->nranks > 1)
		snprintf(ck.id, sizeof(ck.id), "%08x.%u", pems_crc32c(0, ck.dir, strlen(ck.dir)),
			 rt->rank);
	else
		snprintf(ck.id, sizeof(ck.id), "%08x", pems_crc32c(0, ck.dir, strlen(ck.dir)));
	ck.resume = !strcmp(m, MARK_RESUME);
	ck.committed = ck.resume;	/* a refused resume keeps its checkpoint */
	ck.every = rt->cfg.ckpt_every;
	ck.secs = rt->cfg.ckpt_secs ? rt->cfg.ckpt_secs : 60;
	ck.last = pems_now();
	if (mkdir(ck.dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "pems: error: checkpoint dir %s: %s; pass another --checkpoint-dir\n",
			ck.dir, strerror(errno));
		return -PEMS_E_SCRATCH;
	}
	rc = lock_dir(rt);
	if (rc)
		return rc;
	if (!ck.resume) {
		char p[PATH_MAX + 16];

		/* a manifest of an earlier run of this job is obsolete now */
		snprintf(p, sizeof(p), "%s/manifest", ck.dir);
		unlink(p);
	}
	rt->ckpt = &ck;
	rt->nlogs = 3;
	return 0;
}

/* Path of scratch file @name in @dir; with checkpoints it has a stable
 * name (and must be kept), else it is unlinked once open. */
bool pems_ckpt_scratch_path(struct pems_rt *rt, const char *dir, const char *name,
			    char *path, size_t len, int *flags)
{
	if (!rt->ckpt) {
		snprintf(path, len, "%s/pems-%d-%s", dir, (int)getpid(), name);
		*flags = O_RDWR | O_CREAT | O_TRUNC;
		return false;
	}
	snprintf(path, len, "%s/pems-ckpt-%s-%s", dir, ck.id, name);
	*flags = ck.resume ? O_RDWR : O_RDWR | O_CREAT | O_TRUNC;
	if (ck.npaths < MAXPATHS)
		ck.paths[ck.npaths++] = strdup(path);
	return true;
}

/* ---- writing a checkpoint ---- */

struct wr {
	FILE *f;
	uint32_t crc;
	uint64_t n;
	bool err;
};

static void put(struct wr *w, const void *p, size_t n)
{
	if (!n)
		return;
	if (fwrite(p, 1, n, w->f) != n)
		w->err = true;
	w->crc = pems_crc32c(w->crc, p, n);
	w->n += n;
}

static void put_u64(struct wr *w, uint64_t x)
{
	put(w, &x, sizeof(x));
}

/* Write back every resident context (kept resident) and wait. */
static void write_back(struct pems_rt *rt)
{
	unsigned i;

	if (!ck.w.io) {
		ck.w.rt = rt;
		ck.w.id = rt->k;
		if (pems_io_create(&ck.w.io, (enum pems_io_backend)rt->cfg.io, rt->cfg.qdepth) &&
		    pems_io_create(&ck.w.io, PEMS_IO_SYNC, rt->cfg.qdepth))
			pems_fatal("checkpoint: cannot create an I/O engine");
	}
	for (i = 0; i < rt->vlocal; i++) {
		struct pems_vp *vp = &rt->vps[i];

		if (vp->where != VP_RESIDENT)
			continue;
		if (vp->state == VP_ENDED && !(vp->lid == 0 && rt->post_bsp))
			continue;
		vp->keep = true;
		pems_ctx_swap_out(&ck.w, vp);
		while (pems_io_inflight(ck.w.io))
			pems_worker_reap(&ck.w, 1);
		if (vp->where != VP_RESIDENT)
			pems_fatal("checkpoint: write-back of VP %u did not complete", vp->pid);
	}
	ck.w.writebacks = 0;
}

/* The worker @i: 0..k-1, then k the comm thread's (several ranks). */
static struct pems_worker *log_owner(const struct pems_rt *rt, unsigned i)
{
	return i < rt->k ? &rt->workers[i] : i == rt->k ? rt->tpw : NULL;
}

static void sync_fd(int fd, const char *what)
{
	if (fd > 0 && fdatasync(fd) && errno != EINVAL && errno != EROFS)
		pems_fatal("checkpoint: fsync of %s: %s", what, strerror(errno));
}

static void sync_scratch(struct pems_rt *rt)
{
	unsigned i, l;

	for (i = 0; i < rt->ndirs; i++) {
		sync_fd(rt->ctx_fd[0][i], "a context file");
		sync_fd(rt->ctx_fd[1][i], "a context file");
	}
	for (i = 0; log_owner(rt, i); i++)
		for (l = 0; l < rt->nlogs; l++)
			sync_fd(log_owner(rt, i)->msg_fd[l], "a message log");
	for (i = 0; i < MAXF; i++)
		if (notes[i].used && (notes[i].flags & O_ACCMODE) != O_RDONLY)
			sync_fd(notes[i].bfd, notes[i].path);
}

/* Log id of chunk fd: worker * PEMS_NLOGS + log. */
static int64_t log_id(const struct pems_rt *rt, int fd)
{
	struct pems_worker *w;
	unsigned i, l;

	for (i = 0; (w = log_owner(rt, i)); i++)
		for (l = 0; l < rt->nlogs; l++)
			if (w->msg_fd[l] == fd)
				return (int64_t)i * PEMS_NLOGS + l;
	pems_fatal("checkpoint: a message chunk is in no log (internal error)");
}

static void save_streams(struct wr *w, struct pems_rt *rt)
{
	size_t i, n = (size_t)rt->norigins * rt->vlocal;

	for (i = 0; i < n; i++) {
		struct pems_chunk *c;
		uint64_t cnt = 0;

		for (c = rt->in[i].head; c; c = c->next)
			cnt++;
		put_u64(w, cnt);
		for (c = rt->in[i].head; c; c = c->next) {
			put_u64(w, c->len);
			if (c->buf) {	/* a partial chunk, in memory only */
				put_u64(w, PEMS_NONE);
				put(w, c->buf, c->len);
			} else {
				put_u64(w, (uint64_t)log_id(rt, c->fd));
				put_u64(w, c->off);
				put(w, &c->blk, sizeof(c->blk));	/* as stored (spill.h) */
				put_u64(w, c->step);
				put_u64(w, c->writer);
			}
		}
	}
}

static size_t reply_bytes(const struct pems_rt *rt)
{
	size_t i, b = 0;

	for (i = 0; i < rt->nreplies; i++)
		if (rt->replies[i].seq + rt->replies[i].nbytes > b)
			b = rt->replies[i].seq + rt->replies[i].nbytes;
	return b;
}

static void save_state(struct wr *w, struct pems_rt *rt)
{
	unsigned i;

	put_u64(w, 0x31544b43534d4550ull);	/* "PEMSCKT1" */
	put_u64(w, rt->superstep);
	put_u64(w, rt->vlocal);
	put_u64(w, rt->ended);
	put_u64(w, rt->post_bsp);
	put_u64(w, (uint64_t)(int64_t)rt->exit_code);
	put_u64(w, rt->h_max);
	for (i = 0; i < rt->vlocal; i++) {
		struct pems_vp *vp = &rt->vps[i];

		put(w, vp, sizeof(*vp));
		put(w, vp->regs, vp->nregs * sizeof(*vp->regs));
		/* the descriptors of its blocks on disk (context.c invariant 5) */
		put_u64(w, vp->blk ? vp->nblk + 1 : 0);
		if (vp->blk)
			put(w, vp->blk, (vp->nblk + 1) * sizeof(*vp->blk));
	}
	put(w, &rt->coll, sizeof(rt->coll));
	put(w, rt->coll.result, rt->coll.rcap);
	put_u64(w, rt->nreplies);
	put(w, rt->replies, rt->nreplies * sizeof(*rt->replies));
	put_u64(w, reply_bytes(rt));
	put(w, rt->reply_data, reply_bytes(rt));
	if (rt->nreplies)
		put(w, rt->reply_first, (rt->vlocal + 1) * sizeof(size_t));
	put(w, rt->xchg_in, rt->v * sizeof(*rt->xchg_in));
	put(w, rt->send_in, rt->v * sizeof(*rt->send_in));
	save_streams(w, rt);
	put_u64(w, nglobals);
	for (i = 0; i < nglobals; i++) {
		put_u64(w, (uintptr_t)globals[i].addr);
		put_u64(w, globals[i].len);
		put(w, globals[i].addr, globals[i].len);
	}
	put_u64(w, 0x444e45u);	/* "END" */
}

static void fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* Write @name in ck.dir atomically: tmp name, fsync, rename (invariant 3). */
static FILE *open_tmp(const char *name, char *tmp, size_t len)
{
	FILE *f;
	int fd;

	snprintf(tmp, len, "%s/%s.tmp", ck.dir, name);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	/* 0600 also for a stale temporary that a kill left behind */
	f = fd < 0 || fchmod(fd, 0600) ? NULL : fdopen(fd, "w");
	if (!f && fd >= 0)
		close(fd);
	if (!f)
		pems_fatal("checkpoint: cannot create %s: %s; free space or pass another --checkpoint-dir",
			   tmp, strerror(errno));
	return f;
}

static void close_commit(FILE *f, const char *tmp, const char *name, bool err)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", ck.dir, name);
	if (err || fflush(f) || fsync(fileno(f))) {
		fclose(f);
		unlink(tmp);
		pems_fatal("checkpoint: writing %s failed: %s; free space or pass another --checkpoint-dir",
			   path, strerror(errno ? errno : EIO));
	}
	fclose(f);
	if (rename(tmp, path))
		pems_fatal("checkpoint: rename to %s: %s", path, strerror(errno));
}

static void put_maps(FILE *f)
{
	FILE *m = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128], last[PATH_MAX] = "";

	if (!m)
		return;
	while (fgets(line, sizeof(line), m)) {
		char *p = strchr(line, '/'), *nl;
		struct stat st;

		if (!p || !strstr(line, " r-xp ") || !(nl = strchr(p, '\n')))
			continue;
		*nl = 0;
		if (!strcmp(p, last) || stat(p, &st))
			continue;
		snprintf(last, sizeof(last), "%s", p);
		fprintf(f, "map %llu %lld ", (unsigned long long)st.st_size,
			(long long)mtime_ns(&st));
		put_esc(f, p);
		fputc('\n', f);
	}
	fclose(m);
}

/* A /proc file (its size is not known up front). */
static int read_proc(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap), *nb;

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		return -errno;
	}
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap) {
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

/* /proc/self/cmdline as NUL-separated strings, one "arg" line each */
static void put_args(FILE *f)
{
	char *buf = NULL;
	size_t len = 0, i;

	if (read_proc("/proc/self/cmdline", &buf, &len) || !len)
		pems_fatal("checkpoint: cannot read /proc/self/cmdline");
	for (i = 0; i < len; i += strlen(buf + i) + 1) {
		fputs("arg ", f);
		put_esc(f, buf + i);
		fputc('\n', f);
	}
	free(buf);
}

/* Of the initial environment only what configures the run (recorded_var)
 * is written, never the rest (tokens, passwords); its count and bytes
 * are, since they place the initial stack (invariant 1). */
static void put_env(FILE *f)
{
	char *buf = NULL;
	size_t len = 0, i, count = 0;

	if (read_proc("/proc/self/environ", &buf, &len) || !len)
		pems_fatal("checkpoint: cannot read /proc/self/environ");
	for (i = 0; i < len; i += strlen(buf + i) + 1, count++) {
		const char *s = buf + i;

		if (!strcmp(s, MARK "=" MARK_RESUME))
			s = MARK "=" MARK_START;
		if (!recorded_var(s))
			continue;
		fputs("env ", f);
		put_esc(f, s);
		fputc('\n', f);
	}
	fprintf(f, "envsize %zu %zu %d\n", count, len, (int)pems_tp_launched());
	free(buf);
}

static void put_files(FILE *f)
{
	unsigned i;

	for (i = 0; i < MAXF; i++) {
		struct note *n = &notes[i];
		struct stat st;
		uint32_t h = 0, t = 0;

		if (!n->used)
			continue;
		if (fstat(n->bfd, &st))
			pems_fatal("checkpoint: %s: %s", n->path, strerror(errno));
		if ((n->flags & O_ACCMODE) == O_RDONLY && ident_crcs(n->bfd, (uint64_t)st.st_size, &h, &t))
			pems_fatal("checkpoint: reading %s failed", n->path);
		fprintf(f, "file %u %d %d %d %d %llu %lld %08x %08x ", i, n->flags, n->dfd, n->bfd,
			n->direct, (unsigned long long)st.st_size, (long long)mtime_ns(&st), h, t);
		put_esc(f, n->path);
		fputc('\n', f);
	}
}

/* The manifest text, its CRC line included; @len gets its length. */
static char *manifest_text(struct pems_rt *rt, const void *stack_mark, const char *state,
			   const struct wr *sw, size_t *lenp)
{
	char exe[PATH_MAX], cwd[PATH_MAX], *text;
	const char **paths;
	unsigned i, n;
	size_t len;
	FILE *f;

	if (!realpath("/proc/self/exe", exe) || !getcwd(cwd, sizeof(cwd)))
		pems_fatal("checkpoint: cannot name the program or its directory: %s", strerror(errno));
	f = open_memstream(&text, &len);
	if (!f)
		pems_fatal("checkpoint: out of memory");
	fprintf(f, "pems-checkpoint 1\nsuperstep %llu %llu\nrun 0\nexe ",
		(unsigned long long)rt->superstep, (unsigned long long)rt->supersteps);
	put_esc(f, exe);
	fputs("\ncwd ", f);
	put_esc(f, cwd);
	fputs("\ndir ", f);
	put_esc(f, ck.dir);
	fputc('\n', f);
	put_args(f);
	put_env(f);
	fprintf(f, "config %u %u %u %u %u %zu %zu %zu %zu %zu %u\n", rt->v, rt->k, rt->nranks,
		(unsigned)rt->cfg.io, rt->ndirs, rt->mu, rt->cfg.mem, rt->stack, rt->cfg.msg_mem,
		rt->chunk_size, rt->wlog);
	for (i = 0; i < rt->ndirs; i++) {
		fprintf(f, "tmp %u ", i);
		put_esc(f, rt->tmpdir[i]);
		fputc('\n', f);
	}
	fprintf(f, "layout %llx %llx %llx %llx %llx\n", (unsigned long long)(uintptr_t)rt,
		(unsigned long long)(uintptr_t)rt->vps, (unsigned long long)(uintptr_t)rt->region,
		(unsigned long long)(uintptr_t)rt->entry_arg,
		(unsigned long long)(uintptr_t)stack_mark);
	put_files(f);
	put_maps(f);
	n = pems_cleanup_list(&paths);
	for (i = 0; i < n; i++) {
		fputs("cleanup ", f);
		put_esc(f, paths[i]);
		fputc('\n', f);
	}
	free(paths);
	fprintf(f, "state %s %llu %08x %u\n", state, (unsigned long long)sw->n, sw->crc, rt->rlog);
	if (fflush(f))
		pems_fatal("checkpoint: out of memory");
	fprintf(f, "crc32c %08x\n", pems_crc32c(0, text, len));
	if (fclose(f))
		pems_fatal("checkpoint: out of memory");
	*lenp = len;
	return text;
}

/* Write @name in ck.dir atomically (invariant 3). */
static void write_text(const char *name, const char *text, size_t len)
{
	char tmp[PATH_MAX + 64];
	FILE *f = open_tmp(name, tmp, sizeof(tmp));

	fwrite(text, 1, len, f);
	close_commit(f, tmp, name, ferror(f));
	fsync_dir(ck.dir);
}

/* All ranks meet (an allreduce); only the driver, at a barrier. */
static void meet(struct pems_rt *rt)
{
	uint64_t one = 1;

	pems_tp_sum_u64(rt, &one, 1);
}

static void remove_state(const char *name)
{
	char p[PATH_MAX + 300];

	if (!name[0])
		return;
	snprintf(p, sizeof(p), "%s/%s", ck.dir, name);
	unlink(p);
}

static void checkpoint(struct pems_rt *rt, const void *stack_mark)
{
	char name[64], part[64], tmp[PATH_MAX + 64], *text;
	const char *st = getenv("PEMS_STATS");
	struct wr w = { 0 };
	double t0 = pems_now();
	unsigned i;
	size_t len;

	write_back(rt);
	sync_scratch(rt);
	if (rt->nranks > 1)
		snprintf(name, sizeof(name), "state.%llu.%u", (unsigned long long)rt->superstep,
			 rt->rank);
	else
		snprintf(name, sizeof(name), "state.%llu", (unsigned long long)rt->superstep);
	w.f = open_tmp(name, tmp, sizeof(tmp));
	save_state(&w, rt);
	close_commit(w.f, tmp, name, w.err);
	text = manifest_text(rt, stack_mark, name, &w, &len);
	if (rt->nranks == 1) {
		write_text("manifest", text, len);
	} else {
		/* invariant 6: every part durable, then rank 0 commits */
		snprintf(part, sizeof(part), "manifest.%llu.%u",
			 (unsigned long long)rt->superstep, rt->rank);
		write_text(part, text, len);
		ck.committed = true;	/* from here a signal keeps the scratch */
		meet(rt);
		if (rt->rank == 0)
			write_text("manifest", text, len);
		meet(rt);
		if (strcmp(ck.part, part))
			remove_state(ck.part);
		snprintf(ck.part, sizeof(ck.part), "%s", part);
	}
	free(text);
	/* committed: the new copies and log are the protected ones (2) */
	for (i = 0; i < rt->vlocal; i++)
		rt->vps[i].ckpt_copy = rt->vps[i].copy;
	rt->plog = (int)rt->rlog;
	if (strcmp(ck.state, name))
		remove_state(ck.state);
	snprintf(ck.state, sizeof(ck.state), "%s", name);
	ck.committed = true;
	ck.last = pems_now();
	ck.last_step = rt->superstep;
	if (st && atoi(st) >= 2)
		fprintf(stderr, "pems: checkpoint at superstep %llu: %.3fs, state %llu bytes\n",
			(unsigned long long)rt->superstep, ck.last - t0, (unsigned long long)w.n);
}

void pems_ckpt_barrier(struct pems_rt *rt, const void *stack_mark)
{
	bool due;

	if (!rt->ckpt)
		return;
	if (ck.every) {
		due = rt->superstep - ck.last_step >= ck.every;
	} else {
		uint64_t n = pems_now() - ck.last >= ck.secs;

		/* every rank checkpoints at the same barrier: when one's
		 * clock says so (an allreduce; invariant 6) */
		if (rt->nranks > 1)
			pems_tp_sum_u64(rt, &n, 1);
		due = n > 0;
	}
	if (due)
		checkpoint(rt, stack_mark);
}

/* ---- resuming inside the re-executed process ---- */

struct rd {
	FILE *f;
	const char *path;
};

static void get(struct rd *r, void *p, size_t n)
{
	if (n && fread(p, 1, n, r->f) != n)
		pems_fatal("resume: %s is truncated; the checkpoint cannot be used", r->path);
}

static uint64_t get_u64(struct rd *r)
{
	uint64_t x;

	get(r, &x, sizeof(x));
	return x;
}

static void *get_alloc(struct rd *r, size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		pems_fatal("resume: out of memory");
	get(r, p, n);
	return p;
}

static void load_vp(struct rd *r, struct pems_rt *rt, struct pems_vp *vp)
{
	struct pems_vp s;

	get(r, &s, sizeof(s));
	if (s.lid != vp->lid || s.pid != vp->pid || s.base != vp->base)
		pems_fatal("resume: %s does not match this run's VPs", r->path);
	vp->state = s.state;
	vp->uc = s.uc;
	/* the saved registers point at their own fp state */
	vp->uc.uc_mcontext.fpregs = &vp->uc.__fpregs_mem;
	vp->heap = s.heap;
	vp->heap.touched = vp->heap.brk;
	vp->globals = s.globals;	/* its copy of the globals, in its heap */
	vp->sp_off = s.sp_off;
	vp->disk_heap = s.disk_heap;
	vp->disk_sp = s.disk_sp;
	vp->ended_at_end = s.ended_at_end;
	vp->nregs = vp->capregs = s.nregs;
	vp->next_reg_id = s.next_reg_id;
	vp->regs = s.nregs ? get_alloc(r, s.nregs * sizeof(*vp->regs)) : NULL;
	{
		uint64_t nb = get_u64(r);

		if (nb > (s.disk_heap + PEMS_CTX_BLOCK - 1) / PEMS_CTX_BLOCK + 1)
			pems_fatal("resume: %s: bad block table of VP %u", r->path, vp->pid);
		free(vp->blk);
		vp->blk = nb ? get_alloc(r, nb * sizeof(*vp->blk)) : NULL;
		vp->nblk = nb ? (unsigned)nb - 1 : 0;
		vp->capblk = (unsigned)nb;
		vp->disk_step = s.disk_step;
		vp->zimage = s.zimage;
	}
	vp->q_buf = s.q_buf;
	vp->q_pos = s.q_pos;
	vp->q_len = s.q_len;
	vp->q_count = s.q_count;
	vp->tagsize = s.tagsize;
	vp->tagsize_next = s.tagsize_next;
	vp->coll = s.coll;
	vp->xchg = s.xchg;
	vp->sync_count = s.sync_count;
	vp->past_end = s.past_end;
	vp->copy = vp->ckpt_copy = s.copy;
	vp->where = VP_DISK;
	(void)rt;
}

static void load_streams(struct rd *r, struct pems_rt *rt)
{
	size_t i, n = (size_t)rt->norigins * rt->vlocal;

	for (i = 0; i < n; i++) {
		uint64_t cnt = get_u64(r), j;

		for (j = 0; j < cnt; j++) {
			struct pems_chunk *c = calloc(1, sizeof(*c));
			uint64_t id;

			if (!c)
				pems_fatal("resume: out of memory");
			c->len = get_u64(r);
			id = get_u64(r);
			if (c->len > rt->chunk_size)
				pems_fatal("resume: %s: bad message chunk", r->path);
			if (id == PEMS_NONE) {
				pems_msg_buf_restore(rt, c);
				get(r, c->buf, c->len);
				c->off = PEMS_NONE;
			} else {
				if (id / PEMS_NLOGS > rt->k || !log_owner(rt, (unsigned)(id / PEMS_NLOGS)) ||
				    id % PEMS_NLOGS >= rt->nlogs)
					pems_fatal("resume: %s: bad message log", r->path);
				c->fd = log_owner(rt, (unsigned)(id / PEMS_NLOGS))->msg_fd[id % PEMS_NLOGS];
				c->off = get_u64(r);
				get(r, &c->blk, sizeof(c->blk));
				c->step = get_u64(r);
				c->writer = (unsigned)get_u64(r);
				if (c->blk.stored > c->len)
					pems_fatal("resume: %s: bad message chunk", r->path);
			}
			if (rt->in[i].tail)
				rt->in[i].tail->next = c;
			else
				rt->in[i].head = c;
			rt->in[i].tail = c;
		}
	}
}

static void load_state(struct rd *r, struct pems_rt *rt)
{
	struct pems_coll_state c;
	unsigned i;
	uint64_t n;
	size_t b;

	if (get_u64(r) != 0x31544b43534d4550ull || get_u64(r) != rt->superstep ||
	    get_u64(r) != rt->vlocal)
		pems_fatal("resume: %s does not belong to the manifest", r->path);
	rt->ended = (unsigned)get_u64(r);
	rt->post_bsp = get_u64(r);
	rt->exit_code = (int)(int64_t)get_u64(r);
	rt->h_max = get_u64(r);
	for (i = 0; i < rt->vlocal; i++)
		load_vp(r, rt, &rt->vps[i]);
	get(r, &c, sizeof(c));
	rt->coll.kind = c.kind;
	rt->coll.count = c.count;
	rt->coll.elem = c.elem;
	rt->coll.bytes = c.bytes;
	rt->coll.type = c.type;
	rt->coll.op = c.op;
	rt->coll.uop = c.uop;
	rt->coll.root = c.root;
	rt->coll.user = c.user;
	rt->coll.name = c.name;
	rt->coll.rcap = c.rcap;
	rt->coll.result = c.rcap ? get_alloc(r, c.rcap) : NULL;
	rt->nreplies = get_u64(r);
	rt->replies = get_alloc(r, rt->nreplies * sizeof(*rt->replies));
	b = get_u64(r);
	rt->reply_data = get_alloc(r, b);
	if (rt->nreplies)
		rt->reply_first = get_alloc(r, (rt->vlocal + 1) * sizeof(size_t));
	get(r, rt->xchg_in, rt->v * sizeof(*rt->xchg_in));
	get(r, rt->send_in, rt->v * sizeof(*rt->send_in));
	load_streams(r, rt);
	n = get_u64(r);
	if (n != nglobals)
		pems_fatal("resume: the program registered %u checkpointed globals, the checkpoint has %llu",
			   nglobals, (unsigned long long)n);
	for (i = 0; i < nglobals; i++)
		if (get_u64(r) != (uintptr_t)globals[i].addr || get_u64(r) != globals[i].len)
			pems_fatal("resume: checkpointed global %u differs in address or size", i);
		else
			get(r, globals[i].addr, globals[i].len);
	if (get_u64(r) != 0x444e45u)
		pems_fatal("resume: %s: bad end marker", r->path);
}

static int check_config(const struct pems_rt *rt, const struct pems_manifest *m)
{
	char now[200], was[200];
	unsigned i;

	snprintf(now, sizeof(now), "v=%u k=%u p=%u io=%u mu=%zu mem=%zu stack=%zu msg_mem=%zu chunk=%zu dirs=%u",
		 rt->v, rt->k, rt->nranks, (unsigned)rt->cfg.io, rt->mu, rt->cfg.mem, rt->stack,
		 rt->cfg.msg_mem, rt->chunk_size, rt->ndirs);
	snprintf(was, sizeof(was), "v=%u k=%u p=%u io=%u mu=%llu mem=%llu stack=%llu msg_mem=%llu chunk=%llu dirs=%u",
		 m->v, m->k, m->p, m->io, (unsigned long long)m->mu, (unsigned long long)m->mem,
		 (unsigned long long)m->stack, (unsigned long long)m->msg_mem,
		 (unsigned long long)m->chunk, m->ndirs);
	if (strcmp(now, was)) {
		fprintf(stderr, "pems: error: resume: the configuration differs from the checkpointed run (%s, was %s); refusing to resume\n",
			now, was);
		return -PEMS_E_CONFIG;
	}
	for (i = 0; i < rt->ndirs; i++)
		if (strcmp(rt->tmpdir[i], m->tmp[i])) {
			fprintf(stderr, "pems: error: resume: scratch dir %u is %s, was %s; refusing to resume\n",
				i, rt->tmpdir[i], m->tmp[i]);
			return -PEMS_E_CONFIG;
		}
	return 0;
}

static int check_layout(const struct pems_rt *rt, const struct pems_manifest *m,
			const void *stack_mark)
{
	static const char *const what[PEMS_MF_LAYOUT] = {
		"runtime", "VP table", "context region", "entry argument", "driver stack"
	};
	uint64_t now[PEMS_MF_LAYOUT] = { (uintptr_t)rt, (uintptr_t)rt->vps, (uintptr_t)rt->region,
					 (uintptr_t)rt->entry_arg, (uintptr_t)stack_mark };
	unsigned i;

	for (i = 0; i < PEMS_MF_LAYOUT; i++)
		if (now[i] != m->layout[i]) {
			fprintf(stderr, "pems: error: resume: the %s is at 0x%llx, was 0x%llx: the process layout differs from the checkpointed run's (resume through 'pems-run resume', with the same program, libraries and environment)\n",
				what[i], (unsigned long long)now[i],
				(unsigned long long)m->layout[i]);
			return -PEMS_E_CONFIG;
		}
	return 0;
}

static int verify_state(const char *path, const struct pems_manifest *m)
{
	FILE *f = fopen(path, "r");
	char *buf = malloc(1 << 20);
	uint32_t crc = 0;
	uint64_t n = 0;
	size_t got;

	if (!f || !buf) {
		free(buf);
		if (f)
			fclose(f);
		fprintf(stderr, "pems: error: resume: cannot read %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	while ((got = fread(buf, 1, 1 << 20, f)) > 0) {
		crc = pems_crc32c(crc, buf, got);
		n += got;
	}
	fclose(f);
	free(buf);
	if (n != m->state_size || crc != m->state_crc) {
		fprintf(stderr, "pems: error: resume: %s is corrupt (%llu bytes, CRC %08x; the manifest says %llu bytes, CRC %08x); the checkpoint cannot be used\n",
			path, (unsigned long long)n, crc, (unsigned long long)m->state_size,
			m->state_crc);
		return -EBADMSG;
	}
	return 0;
}

int pems_ckpt_restore(struct pems_rt *rt, const void *stack_mark)
{
	struct pems_manifest m;
	char path[PATH_MAX + 80];
	struct rd r;
	unsigned i;
	int rc;

	if (!rt->ckpt || !ck.resume)
		return 0;
	memset(&m, 0, sizeof(m));
	rc = load_manifest(ck.dir, rt->rank, rt->nranks, &m);
	if (rc)
		goto out;
	if (m.run != 0 || !m.superstep) {
		fprintf(stderr, "pems: error: resume: %s/manifest: unsupported checkpoint\n", ck.dir);
		rc = -PEMS_E_CONFIG;
		goto out;
	}
	rc = check_config(rt, &m);
	if (!rc)
		rc = check_layout(rt, &m, stack_mark);
	if (!rc)
		rc = check_inputs(&m);
	if (!rc)
		rc = check_maps(&m);
	snprintf(path, sizeof(path), "%s/%s", ck.dir, m.state);
	if (!rc)
		rc = verify_state(path, &m);
	for (i = 0; !rc && i < m.nfiles; i++)
		rc = reopen_file(&m.files[i]);
	if (rc)
		goto out;
	r.path = path;
	r.f = fopen(path, "r");
	if (!r.f) {
		rc = -errno;
		goto out;
	}
	rt->superstep = m.superstep;
	rt->supersteps = m.supersteps;
	rt->wlog = m.wlog;
	rt->rlog = m.rlog;
	rt->plog = (int)m.rlog;
	load_state(&r, rt);
	fclose(r.f);
	for (i = 0; i < m.ncleanup; i++)
		pems_remove_on_abort_once(m.cleanup[i]);
	snprintf(ck.state, sizeof(ck.state), "%s", m.state);
	if (rt->nranks > 1)
		snprintf(ck.part, sizeof(ck.part), "manifest.%llu.%u",
			 (unsigned long long)m.superstep, rt->rank);
	ck.committed = true;
	ck.last_step = rt->superstep;
	if (!rt->cfg.quiet && rt->rank == 0)
		fprintf(stderr, "pems: resuming at superstep %llu from %s\n",
			(unsigned long long)rt->superstep, ck.dir);
out:
	pems_manifest_free(&m);
	if (rt->nranks > 1) {
		/* every rank resumes, or none (invariant 6) */
		uint64_t bad = rc != 0;

		pems_tp_sum_u64(rt, &bad, 1);
		if (bad && !rc) {
			if (!rt->cfg.quiet)
				fprintf(stderr, "pems: error: resume: rank %u stops: another rank refused to resume (its message says why)\n",
					rt->rank);
			rc = -PEMS_E_CONFIG;
		}
	}
	return rc;
}

/* ---- the end of a run ---- */

/* A state file or manifest (part) of this rank, or its temporary. */
static bool own_file(const char *name)
{
	char n[256], *dot;
	size_t len = strlen(name);

	if (strncmp(name, "state.", 6) && strncmp(name, "manifest.", 9))
		return false;
	if (ck.nranks == 1)
		return true;
	if (len >= sizeof(n))
		return false;
	memcpy(n, name, len + 1);
	if (len > 4 && !strcmp(n + len - 4, ".tmp"))
		n[len - 4] = 0;
	if (!strcmp(n, "manifest"))
		return ck.rank == 0;	/* the commit's temporary */
	dot = strrchr(n, '.');
	return dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1) &&
	       strtoul(dot + 1, NULL, 10) == ck.rank;
}

static void remove_all(struct pems_rt *rt)
{
	char p[PATH_MAX + 128];
	struct dirent *e;
	unsigned i;
	DIR *d;

	if (ck.rank == 0) {
		snprintf(p, sizeof(p), "%s/manifest", ck.dir);
		unlink(p);	/* first: from here on nothing is resumable */
		fsync_dir(ck.dir);
	}
	if (ck.nranks > 1)
		meet(rt);	/* no rank removes a part of a live checkpoint */
	remove_state(ck.state);
	ck.state[0] = 0;
	remove_state(ck.part);
	ck.part[0] = 0;
	for (i = 0; i < ck.npaths; i++)
		unlink(ck.paths[i]);
	/* state files and parts of checkpoints that a kill left uncommitted
	 * (with several ranks each removes its own: names end in .RANK) */
	d = opendir(ck.dir);
	while (d && (e = readdir(d)))
		if (own_file(e->d_name))
			remove_state(e->d_name);
	if (d)
		closedir(d);
	pems_unlock(ck.lock, ck.lockfd);
	ck.lockfd = -1;
	ck.lock[0] = 0;
	rmdir(ck.dir);
	ck.committed = false;
}

/* Success: the checkpoint and the scratch files go. */
void pems_ckpt_finish(struct pems_rt *rt)
{
	unsigned i;

	if (!rt->ckpt)
		return;
	remove_all(rt);
	for (i = 0; i < ck.npaths; i++)
		free(ck.paths[i]);
	ck.npaths = 0;
	if (ck.w.io)
		pems_io_destroy(ck.w.io);
	ck.w.io = NULL;
	rt->ckpt = NULL;
}

/* The runtime could not start: scratch of a fresh run goes. */
void pems_ckpt_abandon(struct pems_rt *rt)
{
	unsigned i;

	if (!rt->ckpt)
		return;
	for (i = 0; i < ck.npaths; i++) {
		if (!ck.committed)
			unlink(ck.paths[i]);
		free(ck.paths[i]);
	}
	pems_unlock(ck.committed ? NULL : ck.lock, ck.lockfd);
	ck.lockfd = -1;
	ck.lock[0] = 0;
	if (!ck.committed)
		rmdir(ck.dir);
	ck.npaths = 0;
	rt->ckpt = NULL;
}

/* A checkpoint of this run is on disk (or may be: several ranks, from
 * the moment this rank's part is written): what it needs stays. */
bool pems_ckpt_kept(void)
{
	return ck.dir[0] && pems_rt && pems_rt->ckpt && ck.committed && !ck.spoiled;
}

/* This process was started for checkpoints (invariant 1). */
bool pems_ckpt_started(void)
{
	return getenv(MARK) != NULL;
}

/* Data written in superstep @step was read back corrupt: the last
 * checkpoint refers to it when it was written then or before (a resume
 * would meet it again and fail the same way). */
void pems_ckpt_corrupt(uint64_t step)
{
	if (ck.dir[0] && pems_rt && pems_rt->ckpt && ck.committed &&
	    (step <= ck.last_step || !ck.last_step))
		ck.spoiled = true;
}

/* A checkpoint that cannot be resumed goes with its scratch, so that the
 * advice is one that works: run the command again. */
static void drop_spoiled(void)
{
	char msg[PATH_MAX + 160];
	unsigned i;
	int n;

	if (ck.rank == 0) {
		snprintf(msg, sizeof(msg), "%s/manifest", ck.dir);
		unlink(msg);	/* first: from here on nothing is resumable */
	}
	remove_state(ck.state);
	remove_state(ck.part);
	for (i = 0; i < ck.npaths; i++)
		unlink(ck.paths[i]);
	if (ck.lock[0])
		unlink(ck.lock);
	rmdir(ck.dir);
	n = snprintf(msg, sizeof(msg), "pems: the checkpoint in %s refers to the corrupt data, so it cannot be resumed and was removed; run the command again to start over\n",
		     ck.dir);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		n = 0;
}

/* A fatal error or a signal: keep a committed checkpoint (and the
 * scratch it needs) for resume, else remove everything.  Async-signal-
 * safe (only unlink, rmdir and write). */
void pems_ckpt_die(void)
{
	char msg[PATH_MAX + 128];
	int n;

	if (!ck.dir[0] || !pems_rt || !pems_rt->ckpt)
		return;
	if (!ck.committed) {
		unsigned i;

		for (i = 0; i < ck.npaths; i++)
			unlink(ck.paths[i]);
		if (ck.lock[0])
			unlink(ck.lock);	/* exit releases the lock */
		rmdir(ck.dir);
		return;
	}
	if (ck.spoiled) {
		drop_spoiled();
		return;
	}
	if (!ck.last_step)
		return;	/* several ranks: this rank's part of a first checkpoint
			 * is written, the commit may not be (invariant 6) */
	if (ck.nranks > 1)
		n = snprintf(msg, sizeof(msg), "pems: rank %u: the checkpoint of superstep %llu is kept in %s; continue with: mpirun -np %u pems-run resume %s\n",
			     ck.rank, (unsigned long long)ck.last_step, ck.dir, ck.nranks, ck.dir);
	else
		n = snprintf(msg, sizeof(msg), "pems: the checkpoint of superstep %llu is kept in %s; continue with: pems-run resume %s\n",
			     (unsigned long long)ck.last_step, ck.dir, ck.dir);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		n = 0;
}
