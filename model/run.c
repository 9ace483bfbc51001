/*
 * run.c - reading a measured run: the --stats-json file pems-run writes
 * (cli/progress.c), whose "steps" array holds pems_steps() records.  Only
 * the keys the comparison needs are read, by name, so new keys in the
 * file do not break it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"

static int json_num(const char *s, const char *key, double *out)
{
	char pat[64];
	const char *q;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	q = strstr(s, pat);
	if (!q)
		return -1;
	*out = strtod(q + strlen(pat), NULL);
	return 0;
}

static char *slurp(const char *path, int *rc)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	*rc = 0;
	if (!f) {
		*rc = -errno;
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, len > 0 ? (size_t)len + 1 : 1);
	if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
		free(buf);
		buf = NULL;
		*rc = -EIO;
	}
	fclose(f);
	return buf;
}

/* the top-level keys (@buf ends before the steps) */
static void run_totals(const char *buf, struct pems_model_run *r)
{
	static const char *const io[] = { "ctx_read", "ctx_written", "msg_read",
					   "msg_written", "file_read", "file_written" };
	unsigned i;
	double x;

	json_num(buf, "v", &r->v);
	json_num(buf, "k", &r->k);
	json_num(buf, "p", &r->p);
	json_num(buf, "mem", &r->mem);
	for (i = 0; i < 6; i++)
		if (!json_num(buf, io[i], &x))
			r->io += x;
}

/* each step's seconds; the CPU of rank 0's steps, times p */
static void run_steps(char *o, struct pems_model_run *r)
{
	char *c;

	r->steps = calloc(strlen(o) / 8 + 1, sizeof(double));
	while (r->steps && (o = strstr(o, "{\"secs\":")) != NULL) {
		r->steps[r->nsteps++] = strtod(o + 8, NULL);
		c = strstr(o, "\"cpu\":");
		if (c)
			r->cpu += strtod(c + 6, NULL) * (r->p > 1 ? r->p : 1);
		o++;
	}
}

int pems_model_run_load(const char *path, struct pems_model_run *r, char *err, size_t errlen)
{
	char *buf, *q;
	int rc;

	memset(r, 0, sizeof(*r));
	buf = slurp(path, &rc);
	if (!buf) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(-rc));
		return rc;
	}
	q = strstr(buf, "\"steps\":");
	if (q)
		*q = '\0';
	if (json_num(buf, "secs", &r->secs) || json_num(buf, "bytes", &r->bytes)) {
		free(buf);
		snprintf(err, errlen, "%s: not a --stats-json file (no \"secs\" and \"bytes\")", path);
		return -EINVAL;
	}
	run_totals(buf, r);
	if (q)
		run_steps(q + 1, r);
	free(buf);
	return 0;
}

void pems_model_run_free(struct pems_model_run *r)
{
	free(r->steps);
	r->steps = NULL;
	r->nsteps = 0;
}
