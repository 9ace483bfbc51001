/*
 * sort_cost.c - the sort's supersteps as a cost model sees them
 * (pems_sort_cost, pems_algorithms.h), from sort.c's own constants
 * (pems_sort_shape): sample, splitters, partition, sort+write.
 */
#include <errno.h>
#include <math.h>

#include "pems_algorithms.h"

int pems_sort_cost(const struct pems_cost_job *j, struct pems_cost_plan *pl)
{
	struct pems_sort_shape sh;
	double rec, n, v = j->v, p = j->p, ns;
	struct pems_cost_step *s;

	if ((j->fmt != PEMS_FMT_U64 && j->fmt != PEMS_FMT_REC100) || !j->v || !j->p)
		return -EINVAL;
	pems_sort_shape(&sh);
	rec = (double)pems_format_size(j->fmt);
	n = j->bytes / rec;
	ns = v * fmin(sh.samples, n / v);
	pl->n = 0;
	s = pems_cost_add(pl, "sample");
	s->rand_r = ns * (1 + (rec - 1) / 4096);	/* a record may straddle pages */
	s = pems_cost_add(pl, "splitters");
	s->sort_keys = ns;
	s->coll = v * (double)sh.sample_msg + v * (double)sh.key;	/* gather at VP 0, broadcast */
	s = pems_cost_add(pl, "partition");
	s->file_r = j->bytes;	/* classify_slice: 4 MiB pieces, 4 in flight */
	s->file_async = true;
	s->msg_w = j->bytes;
	s->xfer = j->bytes * ((p - 1) / p);
	pems_cost_work(s, PEMS_WORK_SORT_PART, j->bytes, 0);
	pems_cost_work(s, PEMS_WORK_COPY, v * v * 8, 0);	/* the bucket-size table */
	s->coll = p * v * 8;				/* allreduce of bucket sizes */
	s = pems_cost_add(pl, "sort+write");
	s->msg_r = j->bytes;
	s->file_w = j->bytes;	/* output pieces written asynchronously */
	s->file_async = true;
	s->file_alloc = true;	/* output.c fallocates the sized output */
	pems_cost_work(s, PEMS_WORK_SORT_LOCAL, j->bytes, 0);
	return 0;
}
