/*
 * plan.c - choosing v, mu and the message memory of a job from --mem.
 *
 * Memory of a rank, for v VPs and message chunks of C bytes:
 *   k * mu(v)          the VPs computing (mu falls as v grows)
 *   (2kv + 8k) * C     message buffers (pems_msg_mem(); grows with v)
 *   overhead           what pems_budget() says the runtime takes
 * Take the v that minimises the sum, for the largest C <= 1 MiB that fits
 * with a 1/16 margin -- message I/O runs at disk speed only with large
 * requests.  Shared by every bundled algorithm, and by the cost model
 * (pems-run model), which plans other machines through pems_plan_for().
 */
#include <stdio.h>
#include <unistd.h>

#include "pems_algorithms.h"

static uint64_t msg_for(unsigned v, unsigned k, uint64_t c)
{
	return pems_msg_mem(k, v, (size_t)c);
}

/* What the runtime takes of @mem besides the k computing contexts. */
static size_t overhead(const struct pems_config *cfg, unsigned k, unsigned v, size_t mem,
		       uint64_t msg, unsigned nranks)
{
	struct pems_config c = *cfg;
	struct pems_budget b;

	c.threads = k;
	c.procs = v;
	c.mem = mem;
	c.msg_mem = (size_t)msg;
	pems_budget(&c, nranks ? nranks : 1, 0, &b);
	return b.overhead;
}

static unsigned best_v_for(uint64_t bytes, unsigned k, uint64_t c,
			   uint64_t (*mu_for)(uint64_t, unsigned), uint64_t *need)
{
	unsigned v, best = k;

	*need = UINT64_MAX;
	for (v = k; v < 100000; v++) {
		uint64_t n = k * mu_for(bytes, v) + msg_for(v, k, c);

		if (n < *need) {
			*need = n;
			best = v;
		} else if (n > *need * 2) {
			break;
		}
	}
	return best;
}

/* Does a budget of @mem fit the job?  On success *v and *msg are the VPs
 * and message memory for the largest chunk that fits. */
static bool plan_fits(const struct pems_config *cfg, uint64_t bytes, unsigned k,
		      size_t mem, uint64_t (*mu_for)(uint64_t, unsigned),
		      const struct pems_plan_env *env, unsigned *v, uint64_t *msg)
{
	uint64_t c, need;

	for (c = 1u << 20; c >= 16u << 10; c /= 2) {
		if (cfg->procs) {
			*v = cfg->procs;
			need = k * mu_for(bytes, *v) + msg_for(*v, k, c);
		} else {
			*v = best_v_for(bytes, k, c, mu_for, &need);
		}
		*msg = msg_for(*v, k, c);
		if (need - *msg + overhead(cfg, k, *v, mem, *msg, env->nranks) +
		    mem / 16 <= mem)
			return true;
	}
	return false;
}

/* The least budget (MiB) that fits, so the error can say what to give:
 * doubling to a budget that fits, then bisection. */
static size_t plan_least_mib(const struct pems_config *cfg, uint64_t bytes, unsigned k,
			     uint64_t (*mu_for)(uint64_t, unsigned),
			     const struct pems_plan_env *env)
{
	size_t lo = cfg->mem >> 20, hi = lo * 2;
	unsigned v;
	uint64_t msg;

	while (!plan_fits(cfg, bytes, k, hi << 20, mu_for, env, &v, &msg)) {
		lo = hi;
		hi *= 2;
		if (hi > ((size_t)1 << 30))	/* 1 PiB: give up, say nothing */
			return 0;
	}
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (plan_fits(cfg, bytes, k, mid << 20, mu_for, env, &v, &msg))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

int pems_plan_for(struct pems_config *cfg, uint64_t bytes, const char *who,
		  uint64_t (*mu_for)(uint64_t bytes, unsigned v),
		  const struct pems_plan_env *env)
{
	uint64_t msg = 0;
	unsigned v = 1, k;

	if (!cfg->mem)
		cfg->mem = (size_t)sysconf(_SC_PHYS_PAGES) * 4096 / 4;
	if (!cfg->threads)
		cfg->threads = env->cores ? env->cores : 1;
	k = cfg->threads;
	if (cfg->mem < (48u << 20)) {
		if (!env->quiet)
			fprintf(stderr, "pems: error: %s: --mem %zu MiB is too small; give at least 48M\n",
				who, cfg->mem >> 20);
		return -PEMS_E_BUDGET;
	}
	if (!plan_fits(cfg, bytes, k, cfg->mem, mu_for, env, &v, &msg)) {
		if (!env->quiet)
			fprintf(stderr, "pems: error: %s: --mem %zu MiB is too small for %llu MiB of input with %u threads; it needs --mem %zuM or more (or fewer --threads)\n",
				who, cfg->mem >> 20, (unsigned long long)(bytes >> 20), k,
				plan_least_mib(cfg, bytes, k, mu_for, env));
		return -PEMS_E_BUDGET;
	}
	cfg->procs = v;
	if (!cfg->msg_mem)
		cfg->msg_mem = msg;
	return 0;
}

struct pems_plan_env pems_plan_here(bool quiet)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	return (struct pems_plan_env){ .cores = cores > 0 ? (unsigned)cores : 1,
				       .nranks = pems_nranks(), .quiet = quiet };
}

int pems_plan(struct pems_config *cfg, uint64_t bytes, const char *who,
	      uint64_t (*mu_for)(uint64_t bytes, unsigned v))
{
	struct pems_plan_env env = pems_plan_here(false);

	return pems_plan_for(cfg, bytes, who, mu_for, &env);
}

/*
 * One worker beyond the cores: a sort's VP blocks its worker while it
 * reads its slice, while its bucket is delivered and while it writes;
 * the extra worker keeps the cores busy meanwhile.  Taken only when
 * --threads is not given, on one rank, and the budget still allows
 * message chunks of MIN_CHUNK (message I/O runs at disk speed only
 * with large requests).
 */
#define MIN_CHUNK (256u << 10)

int pems_plan_extra(struct pems_config *cfg, uint64_t bytes, const char *who,
		    uint64_t (*mu_for)(uint64_t bytes, unsigned v),
		    const struct pems_plan_env *env)
{
	struct pems_plan_env quiet = *env;
	struct pems_config t = *cfg;

	if (!cfg->threads && env->nranks <= 1) {
		quiet.quiet = true;
		t.threads = (env->cores ? env->cores : 1) + 1;
		if (!pems_plan_for(&t, bytes, who, mu_for, &quiet) &&
		    t.msg_mem / pems_msg_mem(t.threads, t.procs, 1) >= MIN_CHUNK) {
			*cfg = t;
			return 0;
		}
	}
	return pems_plan_for(cfg, bytes, who, mu_for, env);
}
