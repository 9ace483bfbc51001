/*
 * textsort_run.c - pems_textsort(): estimate the records, plan v and mu,
 * check space, run the SPMD section of textsort.c, commit the output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pems_algorithms.h"
#include "sort/tsort.h"
#include "job.h"

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

static int plan(struct pems_config *cfg, uint64_t bytes)
{
	struct pems_plan_env env = pems_plan_here(false);
	int rc = pems_plan_extra(cfg, bytes, "sort", mu_for, &env);

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

/* pems_job_poll_fn: partition (input bytes), then sort+write (output) */
static bool ts_poll(void *state, bool final, char *phase, size_t len, uint64_t *done,
		    uint64_t *total)
{
	(void)state;
	return pems_job_sort_progress(final, atomic_load(&S.done[0]), S.n,
				      atomic_load(&S.done[1]), S.out_size, phase, len, done,
				      total);
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

static int setup(struct pems_textsort_job *job, struct pems_job *j)
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
		rc = plan(&j->cfg, S.n);
	/* scratch: the messages, a sixteenth for imbalance, 256 MiB of contexts */
	if (!rc)
		rc = pems_job_space(j, job->out, S.n + S.n / 16 + (256u << 20), S.n);
	return rc == -ENOSPC ? -PEMS_E_SCRATCH : rc;
}

int pems_textsort(struct pems_textsort_job *job)
{
	struct pems_job j;
	uint64_t size;
	int rc;

	memset(&S, 0, sizeof(S));
	S.job = job;
	S.ts = job->ts;
	pems_job_init(&j, "sort", job->cfg, job->progress, job->progress_arg, ts_poll, NULL);
	rc = pems_job_lock(&j, job->out);	/* before any work */
	if (rc)
		return pems_job_end(&j, rc, false, 0);
	rc = setup(job, &j);
	if (rc) {
		if (rc != -PEMS_E_BUDGET && rc != -EINVAL && rc != -PEMS_E_SCRATCH)
			fprintf(stderr, "pems: error: sort: %s: %s\n", job->in, pems_strerror(rc));
		return pems_job_end(&j, rc, false, 0);
	}
	S.v = j.cfg.procs;
	S.max_rec = j.cfg.mu / 8;	/* read, copied, received, gathered: fits mu */
	if (getenv("PEMS_SORT_TRACE"))
		fprintf(stderr, "pems: sort trace: text v=%u k=%u mu=%zu MiB msg_mem=%zu MiB record~%zu B max_rec=%zu KiB\n",
			j.cfg.procs, j.cfg.threads, j.cfg.mu >> 20, j.cfg.msg_mem >> 20, S.avg_rec,
			S.max_rec >> 10);
	rc = pems_job_input(&j, job->in);
	if (!rc)
		rc = pems_job_output(&j, job->out, true, S.out_size);
	if (!rc) {
		S.in = j.in;
		S.out = j.out_handle;
		rc = pems_job_run(&j, ts_spmd, NULL);
	}
	size = S.ts->unique ? S.unique_total : S.out_size;
	rc = pems_job_end(&j, rc, S.ts->unique, size);
	if (!rc)
		job->out_bytes = size;
	return rc;
}
