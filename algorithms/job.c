/*
 * job.c - the run of one bundled algorithm (job.h): configuration,
 * input, output, progress thread, SPMD section, commit.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "pems_algorithms.h"
#include "job.h"

#define POLL_NS (200 * 1000 * 1000)

void pems_job_init(struct pems_job *j, const char *who, const struct pems_config *cfg,
		   pems_progress_fn progress, void *progress_arg, pems_job_poll_fn poll,
		   void *state)
{
	memset(j, 0, sizeof(*j));
	j->who = who;
	j->cfg = cfg ? *cfg : *pems_current_config();
	j->in = -1;
	j->out_handle = -1;
	j->o.lockfd = j->o.fd = j->o.handle = -1;
	j->progress = poll ? progress : NULL;
	j->progress_arg = progress_arg;
	j->poll = poll;
	j->state = state;
	atomic_init(&j->stop, 0);
}

int pems_job_lock(struct pems_job *j, const char *out)
{
	return pems_output_lock(&j->o, j->who, out);
}

int pems_job_input(struct pems_job *j, const char *path)
{
	struct stat st;
	int fd = pems_input_open(j->who, path, &st);	/* no FIFO, never blocks */

	if (fd < 0)
		return fd;
	close(fd);
	j->in = pems_file_open(path, O_RDONLY, 0);
	if (j->in < 0) {
		fprintf(stderr, "pems: error: %s: %s: %s\n", j->who, path, strerror(-j->in));
		return j->in;
	}
	return 0;
}

int pems_job_output(struct pems_job *j, const char *out, bool sized, uint64_t size)
{
	int rc = j->o.lockfd < 0 ? pems_job_lock(j, out) : 0;

	if (!rc)
		rc = pems_output_create(&j->o, &j->cfg, sized, size);
	if (rc) {
		j->out_handle = -1;
		return rc;
	}
	j->out = out;
	j->out_handle = j->o.handle;
	return 0;
}

bool pems_job_sort_progress(bool final, uint64_t part, uint64_t in, uint64_t written,
			    uint64_t out, char *phase, size_t len, uint64_t *done,
			    uint64_t *total)
{
	snprintf(phase, len, final ? "done" : written ? "sort+write" : "partition");
	*done = final ? out : written ? written : part;
	*total = final || written ? out : in;
	return true;
}

/* one report of the poll function to the progress callback */
static void show(struct pems_job *j, bool final)
{
	char phase[64];
	uint64_t done = 0, total = 0;

	if (j->poll(j->state, final, phase, sizeof(phase), &done, &total))
		j->progress(phase, done, total, j->progress_arg);
}

static void *progress_main(void *arg)
{
	struct pems_job *j = arg;
	struct timespec ts = { 0, POLL_NS };

	while (!atomic_load(&j->stop)) {
		show(j, false);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

int pems_job_run(struct pems_job *j, void (*spmd)(void *), void *arg)
{
	int rc;

	atomic_store(&j->stop, 0);
	j->have_thread = j->progress && !pthread_create(&j->thread, NULL, progress_main, j);
	rc = pems_spmd(&j->cfg, spmd, arg);
	atomic_store(&j->stop, 1);
	if (j->have_thread)
		pthread_join(j->thread, NULL);
	j->have_thread = false;
	if (!rc && j->progress)
		show(j, true);
	return rc;
}

int pems_job_end(struct pems_job *j, int rc, bool truncate, uint64_t size)
{
	if (j->out) {
		rc = pems_output_commit(&j->o, rc, truncate, size);
		if (rc && !(j->own_errors && (rc == -EINVAL || rc == -ERANGE)))
			fprintf(stderr, "pems: error: %s: finishing %s: %s\n", j->who, j->out,
				pems_strerror(rc));
		j->out = NULL;
		j->out_handle = -1;
	}
	if (j->in >= 0)
		pems_file_close(j->in);
	j->in = -1;
	pems_output_unlock(&j->o);
	return rc;
}

static int check_space(const char *who, const char *dir, uint64_t need, const char *what)
{
	struct statvfs sv;
	uint64_t avail;

	if (statvfs(dir, &sv))
		return 0;
	avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (avail < need) {
		fprintf(stderr, "pems: error: %s: %s %s needs about %llu MiB free but only %llu MiB are; free space or choose another %s\n",
			who, what, dir, (unsigned long long)(need >> 20),
			(unsigned long long)(avail >> 20),
			strcmp(what, "scratch dir") ? "output path" : "--tmp");
		return -ENOSPC;
	}
	return 0;
}

static void dir_of(const char *path, char *out, size_t n)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(out, n, ".");
	else if (slash == path)
		snprintf(out, n, "/");
	else
		snprintf(out, n, "%.*s", (int)(slash - path), path);
}

int pems_job_space(const struct pems_job *j, const char *out, uint64_t scratch,
		   uint64_t out_bytes)
{
	const struct pems_config *cfg = &j->cfg;
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	unsigned i;
	int rc;

	if (pems_resuming())
		return 0;	/* the run's scratch and output are allocated already */
	dir_of(out, dir, sizeof(dir));
	if (cfg->ntmp) {
		for (i = 0; i < cfg->ntmp; i++) {
			rc = check_space(j->who, cfg->tmp[i], scratch / cfg->ntmp, "scratch dir");
			if (rc)
				return rc;
		}
	} else {
		rc = check_space(j->who, tmp && *tmp ? tmp : ".", scratch, "scratch dir");
		if (rc)
			return rc;
	}
	return check_space(j->who, dir, out_bytes, "output directory");
}

void pems_job_fail(const char *who, const char *what, long long rc)
{
	bsp_abort("pems: error: %s: %s: %s", who, what,
		  rc < 0 ? strerror((int)-rc) : "short transfer (file changed?)");
}
