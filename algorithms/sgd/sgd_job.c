/*
 * sgd_job.c - pems_sgd on the host side: the data files, the memory
 * plan, the run through the job harness (job.h), the loss log and the
 * model file, each written as a temporary and renamed by rank 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sgd/sgd_internal.h"
#include "job.h"

static int open_data(struct dfile *f, const char *path, const char *what, uint32_t *dim)
{
	const struct pems_sgd_job *j = sgd_g.job;
	struct stat st;
	uint8_t hdr[PEMS_SGD_DENSE_HEADER];
	int fd;

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = -1;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);	/* a FIFO must not hang */
	if (fd < 0 || fstat(fd, &st)) {
		int rc = -errno;

		fprintf(stderr, "pems: error: sgd: cannot read %s '%s': %s\n", what, path,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (pems_input_kind(st.st_mode)) {
		fprintf(stderr, "pems: error: sgd: %s '%s' is %s; sgd reads a regular file, at offsets and once per epoch: save the data to a file first\n",
			what, path, pems_input_kind(st.st_mode));
		close(fd);
		return -ESPIPE;
	}
	f->size = (uint64_t)st.st_size;
	if (j->format == PEMS_SGD_DENSE) {
		uint32_t hd = 0;

		if (f->size >= sizeof(hdr) && pread(fd, hdr, sizeof(hdr), 0) == (ssize_t)sizeof(hdr) &&
		    !memcmp(hdr, PEMS_SGD_DENSE_MAGIC, 8)) {
			memcpy(&hd, hdr + 8, 4);
			f->off0 = PEMS_SGD_DENSE_HEADER;
			if (*dim && *dim != hd) {
				fprintf(stderr, "pems: error: sgd: %s '%s' has dim %u in its header but --dim is %u\n",
					what, path, hd, *dim);
				close(fd);
				return -EINVAL;
			}
			*dim = hd;
		}
		if (!*dim) {
			fprintf(stderr, "pems: error: sgd: %s '%s' has no PEMSDENS header; give --dim\n",
				what, path);
			close(fd);
			return -EINVAL;
		}
		sgd_g.rowb = 4 * ((size_t)*dim + 1);
		if ((f->size - f->off0) % sgd_g.rowb) {
			fprintf(stderr, "pems: error: sgd: %s '%s': %llu bytes of rows is not a multiple of the %zu-byte row (1 + %u float32)\n",
				what, path, (unsigned long long)(f->size - f->off0), sgd_g.rowb, *dim);
			close(fd);
			return -EINVAL;
		}
		f->rows = (f->size - f->off0) / sgd_g.rowb;
	} else if (!*dim) {
		fprintf(stderr, "pems: error: sgd: --dim is required for LIBSVM data\n");
		close(fd);
		return -EINVAL;
	}
	close(fd);
	f->fd = pems_file_open(path, O_RDONLY, 0);
	if (f->fd < 0) {
		fprintf(stderr, "pems: error: sgd: cannot open %s '%s': %s\n", what, path,
			strerror(-f->fd));
		return f->fd;
	}
	return 0;
}

/* 1-based line number of byte @off of @path (for error messages) */
static uint64_t line_of(const char *path, uint64_t off)
{
	char buf[1 << 16];
	uint64_t line = 1, at = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	while (at < off && (n = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t i, lim = (uint64_t)n > off - at ? (ssize_t)(off - at) : n;

		for (i = 0; i < lim; i++)
			line += buf[i] == '\n';
		at += (uint64_t)n;
	}
	close(fd);
	return line;
}

/*
 * Memory plan per rank: k contexts of mu = model state + scratch (read
 * block, gradient, local model, sparse row) + stack, and the runtime's
 * overhead (message buffers etc.); v defaults to S (one shard per VP).
 */
static int plan(struct pems_config *cfg)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	struct pems_budget b;
	size_t d1 = sgd_g.d + 1, mu, need, over;

	if (!cfg->mem) {
		long pages = sysconf(_SC_PHYS_PAGES);

		cfg->mem = (size_t)pages * 4096 / 4;
	}
	if (!cfg->threads)
		cfg->threads = cores > 0 ? (unsigned)cores : 1;
	if (!cfg->procs)
		cfg->procs = sgd_g.S;
	mu = d1 * 8 * 4 + (size_t)sgd_g.S / cfg->procs * 64 + 4096 * 4 +
	     (sgd_g.job->format == PEMS_SGD_LIBSVM ? sgd_g.d * 12 + MAX_LINE : 2 * sgd_g.rowb + BLOCK) +
	     d1 * 8 * 2 + (d1 + X_NSLOTS) * 8 + 4 * PAGE + cfg->stack + (1u << 20);
	if (!cfg->mu)
		cfg->mu = (mu + (1u << 20) - 1) & ~(size_t)((1u << 20) - 1);
	if (!cfg->msg_mem) {
		cfg->msg_mem = cfg->mem / 8;
		if (cfg->msg_mem > (64u << 20))
			cfg->msg_mem = 64u << 20;
	}
	pems_budget(cfg, 0, 0, &b);
	over = b.overhead;
	need = cfg->threads * cfg->mu + over + cfg->mem / 16;
	if (need > cfg->mem) {
		fprintf(stderr, "pems: error: sgd: --mem %zu MiB is too small: %u threads x %zu MiB contexts + %zu MiB runtime; raise --mem to %zu MiB or lower --threads\n",
			cfg->mem >> 20, cfg->threads, cfg->mu >> 20, over >> 20,
			(need + (1u << 20) - 1) >> 20);
		return -EINVAL;
	}
	return 0;
}

/* pems_job_poll_fn: training bytes over all epochs */
static bool sgd_poll(void *state, bool final, char *phase, size_t len, uint64_t *done,
		     uint64_t *total)
{
	const struct pems_sgd_job *job = sgd_g.job;
	uint64_t per = sgd_g.tr.size ? sgd_g.tr.size - sgd_g.tr.off0 : 1;
	unsigned e;

	(void)state;
	if (final)
		return false;
	*done = atomic_load(&sgd_g.done);
	*total = sgd_g.total;
	e = (unsigned)(*done / (per ? per : 1)) + 1;
	if (e > job->epochs)
		e = job->epochs;
	snprintf(phase, len, "epoch %u/%u", e, job->epochs);
	return true;
}

static int open_tmp(const char *final, char *tmp, size_t n)
{
	snprintf(tmp, n, "%s.pems-tmp", final);
	unlink(tmp);
	return 0;
}

static int finish_file(const char *tmp, const char *final)
{
	if (rename(tmp, final)) {
		int rc = -errno;

		fprintf(stderr, "pems: error: sgd: cannot rename %s to %s: %s\n", tmp, final,
			strerror(errno));
		unlink(tmp);
		return rc;
	}
	return 0;
}

static void report_error(void)
{
	const char *path = sgd_g.err_test ? sgd_g.te.path : sgd_g.tr.path;

	if (sgd_g.job->format == PEMS_SGD_LIBSVM && sgd_g.err_off != UINT64_MAX &&
	    strncmp(sgd_g.err_msg, "cannot read", 11))
		fprintf(stderr, "pems: error: sgd: %s:%llu: %s\n", path,
			(unsigned long long)line_of(path, sgd_g.err_off), sgd_g.err_msg);
	else
		fprintf(stderr, "pems: error: sgd: %s\n", sgd_g.err_msg);
}

/* The job's parameters and data files (sgd_g.tr, sgd_g.te, sgd_g.d, sgd_g.S).  0 or -errno. */
static int sgd_setup(struct pems_sgd_job *job)
{
	uint32_t dim;
	int rc;

	if (!job->epochs || !job->batch || !(job->lr > 0) ||
	    (job->sync == PEMS_SGD_SYNC_LOCAL && !job->local_steps)) {
		fprintf(stderr, "pems: error: sgd: epochs, batch, lr and local steps must be positive\n");
		return -EINVAL;
	}
	dim = job->dim;
	rc = open_data(&sgd_g.tr, job->data, "training data", &dim);
	if (rc)
		return rc;
	sgd_g.d = dim;
	if (job->test) {
		rc = open_data(&sgd_g.te, job->test, "test data", &dim);
		if (rc)
			return rc;
		sgd_g.have_test = true;
	}
	sgd_g.S = job->shards ? job->shards : 16;
	if (sgd_g.S > PEMS_SGD_MAX_SHARDS) {
		fprintf(stderr, "pems: error: sgd: at most %u shards\n", PEMS_SGD_MAX_SHARDS);
		return -EINVAL;
	}
	job->data_bytes = sgd_g.tr.size;
	sgd_g.total = (sgd_g.tr.size - sgd_g.tr.off0) * job->epochs;
	return 0;
}

/* Rank 0: the loss log's temporary @tmp, with its header line. */
static int loss_log_open(const char *path, char *tmp, size_t len)
{
	open_tmp(path, tmp, len);
	sgd_g.csv = fopen(tmp, "w");
	if (!sgd_g.csv) {
		int rc = -errno;

		fprintf(stderr, "pems: error: sgd: cannot create %s: %s\n", tmp, strerror(errno));
		return rc;
	}
	pems_remove_on_abort(tmp);
	fputs("superstep,kind,epoch,step,rows,train_loss,test_loss,test_accuracy,comm_bytes\n",
	      sgd_g.csv);
	return 0;
}

/* Close the loss log and, unless @rc, rename it into place. */
static int loss_log_close(const char *path, const char *tmp, int rc)
{
	bool bad = ferror(sgd_g.csv);
	int cerr;

	errno = 0;
	cerr = fclose(sgd_g.csv) ? errno : 0;
	if ((cerr || bad) && !rc) {
		rc = cerr ? -cerr : -EIO;
		fprintf(stderr, "pems: error: sgd: cannot write %s: %s\n", tmp, strerror(-rc));
	}
	sgd_g.csv = NULL;
	if (rc)
		unlink(tmp);
	else
		rc = finish_file(tmp, path);
	return rc;
}

/* What the VPs found: a data error, divergence, or 0. */
static int sgd_outcome(const struct pems_sgd_job *job, bool r0)
{
	if (sgd_g.err_set) {
		report_error();
		return -EINVAL;
	}
	if (sgd_g.diverged) {
		if (r0)
			fprintf(stderr, "pems: error: sgd: training diverged in epoch %u (superstep %llu): loss or weights are not finite or beyond 6.7e7; lower --lr (now %g)%s\n",
				sgd_g.div_epoch + 1, (unsigned long long)sgd_g.div_superstep,
				job->lr, job->l2 > 0 ? "" : " or add --l2");
		return -EDOM;
	}
	/* another rank hit a data error and has printed it */
	return sgd_g.any_err ? -EINVAL : 0;
}

/* Rank 0: the model file, written as a temporary and renamed. */
static int write_model(const struct pems_sgd_job *job)
{
	char tmp[4096];
	int rc;

	open_tmp(job->out, tmp, sizeof(tmp));
	rc = pems_sgd_model_write(tmp, job->model, sgd_g.d, sgd_g.w_final);
	if (rc) {
		fprintf(stderr, "pems: error: sgd: cannot write %s: %s\n", tmp, strerror(-rc));
		unlink(tmp);
		return rc;
	}
	return finish_file(tmp, job->out);
}

static void sgd_reset(struct pems_sgd_job *job)
{
	pthread_mutex_destroy(&sgd_g.err_mu);
	memset(&sgd_g, 0, sizeof(sgd_g));
	pthread_mutex_init(&sgd_g.err_mu, NULL);
	sgd_g.job = job;
	sgd_g.tr.fd = sgd_g.te.fd = -1;
	sgd_g.test_loss = sgd_g.test_acc = sgd_g.train_loss = NAN;
	job->test_loss = job->test_accuracy = job->train_loss = NAN;
}

/* the run after the setup: the VPs, then the results and the files */
static int sgd_run(struct pems_sgd_job *job, struct pems_job *j, bool r0)
{
	char csv_tmp[4096];
	int rc;

	sgd_g.v = j->cfg.procs;
	sgd_g.w_final = calloc((size_t)sgd_g.d + 1, sizeof(double));
	if (!sgd_g.w_final)
		return -ENOMEM;
	if (r0 && job->loss_log) {
		rc = loss_log_open(job->loss_log, csv_tmp, sizeof(csv_tmp));
		if (rc)
			return rc;
	}
	/* VP 0 records losses, errors and epochs here: a resumed run needs
	 * them as they were at its checkpoint (docs/checkpoint.md) */
	pems_checkpoint_global(&sgd_g, sizeof(sgd_g));
	rc = pems_job_run(j, sgd_spmd, NULL);
	if (!rc)
		rc = sgd_outcome(job, r0);
	job->train_loss = sgd_g.train_loss;
	job->test_loss = sgd_g.test_loss;
	job->test_accuracy = sgd_g.test_acc;
	job->epochs_done = sgd_g.epochs_done;
	job->rows = sgd_g.tr.rows;
	if (sgd_g.csv)
		rc = loss_log_close(job->loss_log, csv_tmp, rc);
	if (!rc && r0)
		rc = write_model(job);
	pems_rank_barrier();
	pems_remove_on_abort(NULL);
	return rc;
}

int pems_sgd(struct pems_sgd_job *job)
{
	struct pems_job j;
	bool r0;
	int rc;

	/* pems_rank() is 0 on every rank until MPI is up: a barrier starts it */
	pems_rank_barrier();
	r0 = pems_rank() == 0;
	sgd_reset(job);
	pems_job_init(&j, "sgd", job->cfg, job->progress, job->progress_arg, sgd_poll, NULL);
	rc = pems_job_lock(&j, job->out);	/* before any work */
	if (!rc)
		rc = sgd_setup(job);
	if (!rc)
		rc = plan(&j.cfg);
	if (!rc)
		rc = sgd_run(job, &j, r0);
	pems_job_end(&j, rc, false, 0);
	free(sgd_g.w_final);
	sgd_g.w_final = NULL;
	if (sgd_g.tr.fd >= 0)
		pems_file_close(sgd_g.tr.fd);
	if (sgd_g.te.fd >= 0)
		pems_file_close(sgd_g.te.fd);
	return rc;
}
