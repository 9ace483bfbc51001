/*
 * report.c - the model's reports: the table of a prediction, its summary
 * with the one-line "model=" record, and a projection's rows with their
 * "projection=" records (bench/model.sh reads those records by key).
 */
#include <math.h>
#include <stdio.h>

#include "model_internal.h"

static void print_row(FILE *f, const struct pems_model_time *t, const struct pems_model_run *ms)
{
	double pred = t->t * t->reps, r = t->reps;
	char idx[32];

	if (t->reps > 1)
		snprintf(idx, sizeof(idx), "%u-%u", t->first, t->first + (unsigned)t->reps - 1);
	else
		snprintf(idx, sizeof(idx), "%u", t->first);
	fprintf(f, "%-9s %-15s %8.3f %8.3f %8.3f %8.3f %8.3f %-6s %9.3f", idx, t->name,
		t->disk * r, t->cpu * r, t->chain * r, t->xfer * r,
		(t->t - fmax(fmax(t->disk, t->xfer), fmax(t->cpu, t->chain))) * r, t->bound, pred);
	if (ms && ms->nsteps >= t->first + t->reps) {
		double x = 0;
		unsigned i;

		for (i = t->first; i < t->first + (unsigned)t->reps; i++)
			x += ms->steps[i];
		fprintf(f, " %9.3f %6.2f", x, x > 0 ? pred / x : 0);
	}
	fputc('\n', f);
}

void pems_model_print_table(FILE *f, const struct pems_model_prediction *pr,
			    const struct pems_model_run *ms)
{
	unsigned i;

	fprintf(f, "%-9s %-15s %8s %8s %8s %8s %8s %-6s %9s%s\n", "superstep", "phase", "disk_s",
		"cpu_s", "chain_s", "net_s", "sync_s", "bound", "predicted",
		ms && ms->nsteps ? "  measured  ratio" : "");
	for (i = 0; i < pr->n; i++)
		print_row(f, &pr->s[i], ms);
	fprintf(f, "%-9s %-15s %53s %9.3f", "", "setup+flush", "", pr->setup);
	if (ms && ms->nsteps) {
		double x = ms->secs;

		for (i = 0; i < ms->nsteps; i++)
			x -= ms->steps[i];
		fprintf(f, " %9.3f", x);
	}
	fprintf(f, "\n%-9s %-15s %53s %9.3f", "", "total", "", pr->total);
	if (ms)
		fprintf(f, " %9.3f %6.2f", ms->secs, pr->total / ms->secs);
	fputc('\n', f);
}

void pems_model_print_summary(FILE *f, const struct pems_model_job *j,
			      const struct pems_model_params *m, const struct pems_model_layout *L,
			      const struct pems_model_prediction *pr, const struct pems_model_run *ms)
{

	fprintf(f, "work: kernels %.2f core-s, disk traffic %.3f GB", pr->work_cpu, pr->work_io / 1e9);
	if (ms)
		fprintf(f, "; measured: CPU %.2f s (rank 0 x p, all threads), disk traffic %.3f GB",
			ms->cpu, ms->io / 1e9);
	fprintf(f, "\nCPU share: the workers get %.2f cores (load %.1f threads, polling %.2f core per rank",
		pr->share, m->load, j->cost.p > 1 && !(L->cpu_f > 0) ? L->poll : 0);
	if (L->cpu_f > 0)
		fprintf(f, "; kernel work x %.2f at p = %u", L->cpu_f, j->cost.p);
	if (L->lbusy > 0)
		fprintf(f, "; repeated supersteps pay lbusy %.2f ms", L->lbusy * 1e3);
	fputc(')', f);
	if (ms)
		fprintf(f, "; the run used %.2f cores (CPU s / wall s, every thread)", ms->cpu / ms->secs);
	fprintf(f, "\nmodel=%s bytes=%.0f p=%u v=%u k=%u predicted_secs=%.4f pred_cpu=%.3f pred_io=%.0f pred_share=%.3f",
		pems_model_algo_name(j->algo), j->cost.bytes, j->cost.p, j->cost.v, j->k, pr->total,
		pr->work_cpu, pr->work_io, pr->share);
	if (ms)
		fprintf(f, " measured_secs=%.4f meas_cpu=%.3f meas_io=%.0f meas_share=%.3f ratio=%.4f"
			" run_v=%.0f run_k=%.0f", ms->secs, ms->cpu, ms->io, ms->cpu / ms->secs,
			pr->total / ms->secs, ms->v, ms->k);
	fputc('\n', f);
}

/* the superstep that takes longest (the first of equals) */
static unsigned worst_step(const struct pems_model_prediction *pr)
{
	unsigned i, worst = 0;
	double wt = -1;

	for (i = 0; i < pr->n; i++)
		if (pr->s[i].t * pr->s[i].reps > wt) {
			wt = pr->s[i].t * pr->s[i].reps;
			worst = i;
		}
	return worst;
}

void pems_model_print_projection(FILE *f, const struct pems_model_projection *pj)
{
	const struct pems_model_job *j = &pj->job;
	const struct pems_model_layout *L = &pj->layout;
	const struct pems_model_prediction *pr = &pj->pred;
	const struct pems_model_time *w;
	double n = pj->nodes, sp = pj->speedup, ks = L->ks > 0 ? L->ks : 1;

	if (!pj->fits) {
		fprintf(f, "%-6.0f %8s %10.3g %7s %9s %10s %10s %8s  does not fit: --mem %.0f MiB cannot hold v's tables\n",
			n, "-", j->cost.bytes, "-", "-", "-", "-", "-", j->mem / MIB);
		fprintf(f, "projection=%s nodes=%.0f fits=0\n", pems_model_algo_name(j->algo), n);
		return;
	}
	w = &pr->s[worst_step(pr)];
	fprintf(f, "%-6.0f %8u %10.3g %6.0fK %9.3f %10.3f %10.1f %7.0f%%  %s %.3f s; p=%u %.3f %.3f %.3f\n",
		n, j->cost.v, j->cost.bytes, j->chunk / 1024, L->l * 1e3, pr->total, sp, 100 * sp / n,
		w->name, w->t * w->reps, pj->terms_p, ks, L->ovl, w->cpu_f);
	fprintf(f, "projection=%s nodes=%.0f bytes=%.0f v=%u predicted_secs=%.4f speedup=%.2f fits=1"
		" terms_p=%u kscale=%.4f overlap=%.4f setup=%.4f\n", pems_model_algo_name(j->algo), n,
		j->cost.bytes, j->cost.v, pr->total, sp, pj->terms_p, ks, L->ovl, L->setup);
}
