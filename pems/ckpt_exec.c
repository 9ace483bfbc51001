/*
 * ckpt_exec.c - reading and checking a checkpoint directory, starting a
 * process that can checkpoint (ASLR off, checkpoint.c invariants 1 and
 * 5) and resuming one (pems_checkpoint_resume).
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
#include "ckpt_int.h"

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

/* The job that holds the output of checkpoint @dir (DIR = OUT.pems-ckpt,
 * the lock OUT.pems-lock[.0]), or 0: a resume that finds no manifest may
 * have come while another resume of the same checkpoint finishes, which
 * removes the checkpoint before it renames OUT. */
static long output_holder(const char *dir)
{
	static const char *const suffix[] = { ".pems-lock", ".pems-lock.0" };
	size_t n = strlen(dir), k = strlen(".pems-ckpt");
	char path[PATH_MAX + 32];
	long holder = 0;
	unsigned i;

	if (n <= k || strcmp(dir + n - k, ".pems-ckpt"))
		return 0;
	for (i = 0; i < 2 && !holder; i++) {
		snprintf(path, sizeof(path), "%.*s%s", (int)(n - k), dir, suffix[i]);
		holder = pems_lock_held(path);
	}
	return holder;
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
		long pid = output_holder(dir);

		if (pid > 0)
			fprintf(stderr, "pems: error: resume: no checkpoint in %s: another job (PID %ld) resumed it first and is finishing; wait for it\n",
				dir, pid);
		else if (pid < 0)
			fprintf(stderr, "pems: error: resume: no checkpoint in %s: another job resumed it first and is finishing; wait for it\n",
				dir);
		else
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
int pems_ck_load_manifest(const char *dir, unsigned rank, unsigned size, struct pems_manifest *m)
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

int64_t pems_ck_mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* CRC-32C of the first and last MiB of an open file of @size bytes. */
int pems_ck_ident_crcs(int fd, uint64_t size, uint32_t *head, uint32_t *tail)
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
int pems_ck_check_inputs(const struct pems_manifest *m)
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
		if ((uint64_t)st.st_size != f->size || pems_ck_mtime_ns(&st) != f->mtime_ns ||
		    pems_ck_ident_crcs(fd, f->size, &h, &t) || h != f->head_crc || t != f->tail_crc) {
			fprintf(stderr, "pems: error: resume: input %s changed since the checkpoint (%s); refusing to resume, start the run again\n",
				f->path, (uint64_t)st.st_size != f->size ? "size differs" :
				pems_ck_mtime_ns(&st) != f->mtime_ns ? "modification time differs" :
				"contents differ");
			close(fd);
			return -PEMS_E_CONFIG;
		}
		close(fd);
	}
	return 0;
}

int pems_ck_check_maps(const struct pems_manifest *m)
{
	unsigned i;

	for (i = 0; i < m->nmaps; i++) {
		struct stat st;

		if (stat(m->maps[i].path, &st) || (uint64_t)st.st_size != m->maps[i].size ||
		    pems_ck_mtime_ns(&st) != m->maps[i].mtime_ns) {
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
bool pems_ck_recorded_var(const char *s)
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
		if (!pems_ck_recorded_var(environ[i]) && !pad_var(environ[i]))
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
void pems_ck_lock_name(const char *dir, unsigned rank, unsigned nranks, char *p, size_t len)
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

	pems_ck_lock_name(dir, rank, size, p, sizeof(p));
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

	rc = pems_ck_load_manifest(dir, rank, size, &m);
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
	rc = pems_ck_check_inputs(&m);
	if (!rc)
		rc = pems_ck_check_maps(&m);
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
