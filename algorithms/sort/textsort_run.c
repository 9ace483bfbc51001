/*
 * textsort_run.c - pems_textsort(): estimate the records, plan v and mu,
 * check space, run the SPMD section of textsort.c, commit the output.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "pems_algorithms.h"
#include "sort/tsort.h"

#define S S_ts
#define PIECE_MEM ((4u << 20) + 4096u)	/* textsort_out.c's writer */
#define PROBE (1u << 20)		/* bytes read to estimate record sizes */

int pems_text_first_record(const char *path, const struct pems_textspec *ts, uint8_t *buf,
			   size_t cap, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	ssize_t n;
	size_t f;
	bool oq;

	if (fd < 0)
		return -errno;
	n = pread(fd, buf, cap, 0);
	if (n < 0)
		rc = -errno;
	else if (n == 0)
		rc = -ENOENT;
	close(fd);
	if (rc)
		return rc;
	f = pems_text_frame(ts, buf, (size_t)n, &oq);
	if (!f && (size_t)n == cap)
		return -E2BIG;
	*len = f ? f - pems_text_term(ts) : (size_t)n;
	return 0;
}

/* Mean record bytes of the first MiB (fixed: the record size). */
static size_t estimate_records(const char *path)
{
	uint8_t *buf;
	size_t at = 0, n = 0, f;
	ssize_t got;
	int fd;
	bool oq;

	if (S.ts->kind == PEMS_TEXT_FIXED)
		return S.ts->rec_size;
	buf = malloc(PROBE);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	got = buf && fd >= 0 ? pread(fd, buf, PROBE, 0) : -1;
	if (fd >= 0)
		close(fd);
	while (got > 0 && at < (size_t)got) {
		f = pems_text_frame(S.ts, buf + at, (size_t)got - at, &oq);
		if (!f)
			break;
		at += f;
		n++;
	}
	free(buf);
	if (got > 0 && at < (size_t)got)
		n++;	/* a record longer than what was read counts too */
	return n ? (got > 0 ? (size_t)got : 0) / n + 1 : 64;
}

/*
 * Memory of one VP (bytes) for @bytes of input over v VPs, records of
 * L bytes (taken at half the estimate: the mean of a slice varies):
 *   partition  the slice and the rest of its last record (ext: a
 *              record may be up to mu/8, then this is an estimate), the
 *              same again in bucket order, 2 bytes a record of bucket
 *   sort       the bucket (1.5 slice: sampling imbalance, seen up to
 *              1.32 with 128 samples a VP) and 40 bytes
 *              a record (start, item, merge scratch), output pieces
 *   VP 0       the gathered samples and the splitters
 */
static uint64_t mu_for(uint64_t bytes, unsigned v)
{
	uint64_t slice = bytes / v + 1, ext = 256u << 10;
	uint64_t L = S.avg_rec / 2 ? S.avg_rec / 2 : 1, part, bucket, sort, tables;

	part = 2 * (slice + ext) + 2 * (slice / L + 1);
	if (S.ts->unique)	/* unique_drop: starts, items, scratch, flags */
		part += (slice / L + 1) * 41;
	bucket = slice * 3 / 2 + 4096;
	sort = bucket + (bucket / L + 1) * 40 + PIECE_MEM;
	tables = (uint64_t)v * (ts_sample_msg_bytes() + 128 * 32) + 2 * ts_spl_bytes(v) +
		 (uint64_t)v * 64 + (2u << 20);
	return (part > sort ? part : sort) + tables + (2u << 20);
}

/*
 * One worker beyond the cores, as sort.c takes: a VP blocks its worker
 * while it reads its slice, while its bucket is delivered and while it
 * writes; the extra worker keeps the cores busy meanwhile.  Only when
 * --threads is not given and the budget still allows message chunks of
 * MIN_CHUNK.
 */
#define MIN_CHUNK (256u << 10)

static bool extra_worker(struct pems_config *cfg, uint64_t bytes,
			 const struct pems_plan_env *env)
{
	struct pems_plan_env quiet = *env;
	struct pems_config t = *cfg;
	uint64_t chunks;

	if (cfg->threads || env->nranks > 1)
		return false;
	quiet.quiet = true;
	t.threads = (env->cores ? env->cores : 1) + 1;
	if (pems_plan_for(&t, bytes, "sort", mu_for, &quiet))
		return false;
	chunks = 2ull * t.threads * t.procs + 8ull * t.threads;
	if (t.msg_mem / chunks < MIN_CHUNK)
		return false;
	*cfg = t;
	return true;
}

static int plan(struct pems_config *cfg, uint64_t bytes)
{
	struct pems_plan_env env = pems_plan_here(false);
	int rc = extra_worker(cfg, bytes, &env) ? 0 :
		 pems_plan_for(cfg, bytes, "sort", mu_for, &env);

	if (rc)
		return rc;
	if (cfg->procs < env.nranks * cfg->threads)	/* every rank gets VPs */
		cfg->procs = env.nranks * cfg->threads;
	if (cfg->procs > 65535)	/* bucket numbers are 16-bit */
		cfg->procs = 65535;
	if (!cfg->procs)
		cfg->procs = 1;
	if (!cfg->mu)
		cfg->mu = mu_for(bytes, cfg->procs);
	cfg->mu = (cfg->mu + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
	return 0;
}

static int check_space(const char *dir, uint64_t need, const char *what, const char *opt)
{
	struct statvfs sv;
	uint64_t avail;

	if (statvfs(dir, &sv))
		return 0;
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail < need) {
		fprintf(stderr, "pems: error: sort: %s %s needs about %llu MiB free but only %llu MiB are; free space or choose another %s\n",
			what, dir, (unsigned long long)(need >> 20),
			(unsigned long long)(avail >> 20), opt);
		return -PEMS_E_SCRATCH;
	}
	return 0;
}

static int space_ok(const struct pems_config *cfg, uint64_t bytes, const char *out)
{
	const char *tmp = getenv("TMPDIR"), *slash = strrchr(out, '/');
	uint64_t scratch = bytes + bytes / 16 + (256u << 20);
	char dir[4096];
	unsigned i;
	int rc;

	if (pems_resuming())
		return 0;
	for (i = 0; i < cfg->ntmp; i++)
		if ((rc = check_space(cfg->tmp[i], scratch / cfg->ntmp, "scratch dir", "--tmp")))
			return rc;
	if (!cfg->ntmp && (rc = check_space(tmp && *tmp ? tmp : ".", scratch, "scratch dir",
					     "--tmp")))
		return rc;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == out ? 1 : (int)(slash - out), out);
	return check_space(dir, bytes, "output directory", "output path");
}

/* ---- progress: a thread polls the counters ---- */

static atomic_int progress_stop;

static void *progress_main(void *arg)
{
	const struct pems_textsort_job *job = arg;
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	while (!atomic_load(&progress_stop)) {
		uint64_t w = atomic_load(&S.done[1]);

		if (w)
			job->progress("sort+write", w, S.out_size, job->progress_arg);
		else
			job->progress("partition", atomic_load(&S.done[0]), S.n,
				      job->progress_arg);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int run(struct pems_textsort_job *job, const struct pems_config *cfg)
{
	pthread_t th;
	bool have_th = false;
	int rc;

	atomic_store(&progress_stop, 0);
	if (job->progress && !pthread_create(&th, NULL, progress_main, job))
		have_th = true;
	rc = pems_spmd(cfg, ts_spmd, NULL);
	atomic_store(&progress_stop, 1);
	if (have_th)
		pthread_join(th, NULL);
	if (!rc && job->progress)
		job->progress("done", S.out_size, S.out_size, job->progress_arg);
	return rc;
}

/* Output bytes before -u: the input, plus a terminator for a last
 * record without one. */
static int output_size(const char *in, uint64_t n, uint64_t *size)
{
	uint8_t last = 0, eol = S.ts->kind == PEMS_TEXT_CSV ? '\n' : S.ts->eol;
	int fd;

	*size = n;
	if (!n || S.ts->kind == PEMS_TEXT_FIXED)
		return 0;
	fd = open(in, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pread(fd, &last, 1, (off_t)n - 1) != 1) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	*size += last != eol;
	return 0;
}

static int setup(struct pems_textsort_job *job, struct pems_config *cfg)
{
	struct stat st;
	uint8_t *hdr;
	size_t hl = 0;
	unsigned bad;
	int rc, nf;

	if (stat(job->in, &st))
		return -errno;
	S.n = (uint64_t)st.st_size;
	if (S.ts->kind == PEMS_TEXT_FIXED && (!S.ts->rec_size || S.n % S.ts->rec_size)) {
		fprintf(stderr, "pems: error: sort: %s: size %llu is not a multiple of the %zu-byte record\n",
			job->in, (unsigned long long)S.n, S.ts->rec_size);
		return -EINVAL;
	}
	if (S.ts->kind == PEMS_TEXT_CSV && S.ts->header && S.n) {
		hdr = malloc(16u << 20);
		rc = hdr ? pems_text_first_record(job->in, S.ts, hdr, 16u << 20, &hl) : -ENOMEM;
		nf = rc ? -1 : pems_csv_count(S.ts, hdr, hl, &bad);
		free(hdr);
		if (nf < 0) {
			fprintf(stderr, "pems: error: sort: %s: line 1: the header row is not valid CSV\n",
				job->in);
			return -EINVAL;
		}
		S.ncols = (unsigned)nf;
	}
	S.avg_rec = estimate_records(job->in);
	rc = output_size(job->in, S.n, &S.out_size);
	if (!rc)
		rc = plan(cfg, S.n);
	if (!rc)
		rc = space_ok(cfg, S.n, job->out);
	return rc;
}

int pems_textsort(struct pems_textsort_job *job)
{
	struct pems_config cfg = job->cfg ? *job->cfg : *pems_current_config();
	struct pems_output out;
	uint64_t size;
	int rc;

	memset(&S, 0, sizeof(S));
	S.job = job;
	S.ts = job->ts;
	rc = pems_output_lock(&out, "sort", job->out);	/* before any work */
	if (rc)
		return rc;
	rc = setup(job, &cfg);
	if (rc) {
		if (rc != -PEMS_E_BUDGET && rc != -EINVAL && rc != -PEMS_E_SCRATCH)
			fprintf(stderr, "pems: error: sort: %s: %s\n", job->in, pems_strerror(rc));
		goto out_unlock;
	}
	S.v = cfg.procs;
	S.max_rec = cfg.mu / 8;	/* read, copied, received, gathered: fits mu */
	if (getenv("PEMS_SORT_TRACE"))
		fprintf(stderr, "pems: sort trace: text v=%u k=%u mu=%zu MiB msg_mem=%zu MiB record~%zu B max_rec=%zu KiB\n",
			cfg.procs, cfg.threads, cfg.mu >> 20, cfg.msg_mem >> 20, S.avg_rec,
			S.max_rec >> 10);
	S.in = pems_file_open(job->in, O_RDONLY, 0);
	if (S.in < 0) {
		rc = S.in;
		fprintf(stderr, "pems: error: sort: %s: %s\n", job->in, strerror(-rc));
		goto out_unlock;
	}
	rc = pems_output_create(&out, &cfg, true, S.out_size);
	if (rc)
		goto out_close;
	S.out = out.handle;
	rc = run(job, &cfg);
	size = S.ts->unique ? S.unique_total : S.out_size;
	rc = pems_output_commit(&out, rc, S.ts->unique, size);
	if (rc)
		fprintf(stderr, "pems: error: sort: finishing %s: %s\n", job->out, pems_strerror(rc));
	else
		job->out_bytes = size;
out_close:
	pems_file_close(S.in);
out_unlock:
	pems_output_unlock(&out);
	return rc;
}
