/*
 * config.c - runtime configuration: defaults, environment, size parsing,
 * and the derivation of k, mu and the memory split from M.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "rt.h"
#include "config.h"
#include "msg.h"
#include "spill.h"

PEMS_API int pems_parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v, mul = 1;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 't': case 'T': mul <<= 10; /* fall through */
	case 'g': case 'G': mul <<= 10; /* fall through */
	case 'm': case 'M': mul <<= 10; /* fall through */
	case 'k': case 'K': mul <<= 10; end++; break;
	case 'b': case 'B': case '\0': break;
	default: return -EINVAL;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (v && mul > ~0ull / v)
		return -ERANGE;
	*out = (size_t)(v * mul);
	return 0;
}

PEMS_API int pems_parse_compress(const char *s, enum pems_compress *mode, int *level)
{
	char *end;
	long l;

	if (!s)
		return -EINVAL;
	*level = 0;
	if (!strcmp(s, "off") || !strcmp(s, "none")) {
		*mode = PEMS_COMPRESS_OFF;
		return 0;
	}
	if (!strcmp(s, "auto")) {
		*mode = PEMS_COMPRESS_AUTO;
		return 0;
	}
	if (strncmp(s, "zstd", 4) || (s[4] && s[4] != ':'))
		return -EINVAL;
	*mode = PEMS_COMPRESS_ZSTD;
	if (!s[4])
		return 0;
	errno = 0;
	l = strtol(s + 5, &end, 10);
	if (errno || end == s + 5 || *end || l < -7 || l > 19 || l == 0)
		return -EINVAL;
	*level = (int)l;
	return 0;
}

/* The backend names are io/'s table (pems_io_backend_parse); the public
 * enum mirrors io/'s, value for value. */
_Static_assert((int)PEMS_IO_KIND_URING == (int)PEMS_IO_URING &&
	       (int)PEMS_IO_KIND_AIO == (int)PEMS_IO_AIO &&
	       (int)PEMS_IO_KIND_SYNC == (int)PEMS_IO_SYNC,
	       "enum pems_io_kind mirrors enum pems_io_backend");

PEMS_API int pems_parse_io(const char *s, enum pems_io_kind *out)
{
	enum pems_io_backend b;

	if (pems_io_backend_parse(s, &b))
		return -EINVAL;
	*out = (enum pems_io_kind)b;
	return 0;
}

PEMS_API const char *pems_io_name(enum pems_io_kind kind)
{
	return pems_io_backend_name((enum pems_io_backend)kind);
}

/* The environment variables are read in a fixed order and the first bad
 * one ends pems_config_init: the functions below set *out, or print why
 * not and return -PEMS_E_CONFIG. */
static int env_uint(const char *name, unsigned *out)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return 0;
	v = strtoul(s, &end, 10);
	if (*end || v > 1u << 30) {
		fprintf(stderr, "pems: error: %s=%s is not a number; unset it or give e.g. %s=4\n",
			name, s, name);
		return -PEMS_E_CONFIG;
	}
	*out = (unsigned)v;
	return 0;
}

static int env_size(const char *name, size_t *out)
{
	const char *s = getenv(name);
	size_t v;

	if (!s || !*s)
		return 0;
	if (pems_parse_size(s, &v)) {
		fprintf(stderr, "pems: error: %s=%s is not a size; use e.g. %s=256M\n",
			name, s, name);
		return -PEMS_E_CONFIG;
	}
	*out = v;
	return 0;
}

/* PEMS_TMP holds colon-separated dirs; the strings live (in one static
 * buffer) for the process. */
static void env_tmp(struct pems_config *cfg)
{
	static char dup[8192];
	const char *s = getenv("PEMS_TMP");
	char *tok, *save;

	if (!s || !*s)
		return;
	snprintf(dup, sizeof(dup), "%s", s);
	cfg->ntmp = 0;
	for (tok = strtok_r(dup, ":", &save); tok && cfg->ntmp < PEMS_MAX_TMP;
	     tok = strtok_r(NULL, ":", &save))
		cfg->tmp[cfg->ntmp++] = tok;
}

static int env_io(struct pems_config *cfg)
{
	const char *s = getenv("PEMS_IO");

	if (!s || !*s)
		return 0;
	if (pems_parse_io(s, &cfg->io)) {
		fprintf(stderr, "pems: error: PEMS_IO=%s: unknown backend; use uring, aio or sync\n", s);
		return -PEMS_E_CONFIG;
	}
	return 0;
}

static int env_compress(struct pems_config *cfg)
{
	const char *s = getenv("PEMS_COMPRESS");

	if (!s || !*s)
		return 0;
	if (pems_parse_compress(s, &cfg->compress, &cfg->compress_level)) {
		fprintf(stderr, "pems: error: PEMS_COMPRESS=%s: use zstd, zstd:LEVEL (-7..19, not 0), auto or off\n", s);
		return -PEMS_E_CONFIG;
	}
	return 0;
}

/* The numbers and sizes of the environment, in the order they are read. */
static int env_numbers(struct pems_config *cfg)
{
	int rc;

	if ((rc = env_uint("PEMS_PROCS", &cfg->procs)) ||
	    (rc = env_uint("PEMS_THREADS", &cfg->threads)) ||
	    (rc = env_uint("PEMS_QDEPTH", &cfg->qdepth)) ||
	    (rc = env_size("PEMS_MU", &cfg->mu)) ||
	    (rc = env_size("PEMS_MEM", &cfg->mem)) ||
	    (rc = env_size("PEMS_STACK", &cfg->stack)) ||
	    (rc = env_size("PEMS_MSG_MEM", &cfg->msg_mem)))
		return rc;
	env_tmp(cfg);
	if ((rc = env_io(cfg)) || (rc = env_compress(cfg)))
		return rc;
	return 0;
}

PEMS_API int pems_config_init(struct pems_config *cfg)
{
	const char *s;
	int rc;

	memset(cfg, 0, sizeof(*cfg));
	cfg->stack = 256 << 10;
	cfg->qdepth = 32;
	cfg->io = PEMS_IO_KIND_URING;
	rc = env_numbers(cfg);
	if (rc)
		return rc;
	s = getenv("PEMS_STATS");
	cfg->stats = s && *s && strcmp(s, "0");
	s = getenv("PEMS_STATS_JSON");
	if (s && *s)
		cfg->stats_json = s;
	s = getenv("PEMS_QUIET");
	cfg->quiet = s && *s && strcmp(s, "0");
	s = getenv("PEMS_CHECKPOINT_DIR");
	if (s && *s)
		cfg->ckpt_dir = s;
	if ((rc = env_uint("PEMS_CHECKPOINT_EVERY", &cfg->ckpt_every)) ||
	    (rc = env_uint("PEMS_CHECKPOINT_SECS", &cfg->ckpt_secs)))
		return rc;
	s = getenv("PEMS_MSG_HOLD");
	cfg->no_hold = s && !strcmp(s, "0");
	s = getenv("PEMS_GLOBALS");
	cfg->shared_globals = s && !strcmp(s, "shared");
	return 0;
}

/* ---- the configuration of bsp_begin programs ---- */

static struct pems_config next_cfg;
static bool have_cfg;
static int env_err;	/* pems_config_init's result for next_cfg */

PEMS_API int pems_configure(const struct pems_config *cfg)
{
	if (pems_rt)
		return -EBUSY;
	if (pems_config_check(cfg))
		return -EINVAL;
	next_cfg = *cfg;
	have_cfg = true;
	env_err = 0;
	return 0;
}

static void config_load(void)
{
	if (!have_cfg) {
		env_err = pems_config_init(&next_cfg);
		have_cfg = true;
	}
}

PEMS_API const struct pems_config *pems_current_config(void)
{
	if (pems_rt)
		return &pems_rt->cfg;
	config_load();
	return &next_cfg;
}

int pems_config_default(struct pems_config *out)
{
	config_load();
	*out = next_cfg;
	return env_err;
}

int pems_config_check(const struct pems_config *cfg)
{
	return cfg->ntmp > PEMS_MAX_TMP || cfg->threads > 64 ? -EINVAL : 0;
}

PEMS_API const char *pems_strerror(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case PEMS_E_BUDGET:
		return "memory budget too small for the contexts";
	case PEMS_E_SCRATCH:
		return "not enough scratch space";
	case PEMS_E_CONFIG:
		return "invalid configuration";
	default:
		return strerror(err);
	}
}

static size_t ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	return pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : (size_t)4 << 30;
}

static size_t round_down(size_t x, size_t a) { return x / a * a; }

/* The memory the runtime takes off M before contexts: message buffers,
 * and fixed tables plus the delivery bounce buffers of every worker. */
static void derive_overhead(const struct pems_config *cfg, struct pems_derived *d,
			    unsigned nranks)
{
	d->msg_budget = cfg->msg_mem ? cfg->msg_mem : cfg->mem / 8;
	if (d->msg_budget < (4u << 20))
		d->msg_budget = 4u << 20;
	d->chunk = pems_msg_chunk_size(d->msg_budget, cfg->threads, cfg->procs);
	/* what pems_io_alloc really takes: whole huge pages from 1 MiB up */
	d->fixed = PEMS_FIXED_OVERHEAD +
		   (size_t)cfg->threads *
		   pems_io_alloc_size(pems_msg_bounce_size(cfg->threads, nranks, d->chunk));
	/* compression state and buffers of each worker (spill.c) */
	d->fixed += (size_t)cfg->threads *
		    pems_spill_mem(cfg->compress, cfg->compress_level, d->chunk,
				   cfg->threads * nranks);
}

/*
 * Derive what the user left at 0 and check that the budget can hold it:
 *   M >= fixed + msg_budget + k * mu
 * (k VPs computing at full size).  The default mu leaves room for
 * PEMS_SLOTS = 3 full contexts per worker (computing, prefetched, being
 * written back), so that I/O overlaps computation even when contexts are
 * full; with a larger mu prefetching happens only when there is room.
 * Returns 0 or -PEMS_E_BUDGET with a message printed.
 */
int pems_config_derive(struct pems_config *cfg, unsigned maxprocs,
		       struct pems_derived *d)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t need;

	/* bsp_begin passes the v it grants (bsp.c); pems_spmd passes 0 */
	if (maxprocs)
		cfg->procs = maxprocs;
	else if (!cfg->procs)
		cfg->procs = (unsigned)(cores > 0 ? cores : 1);
	if (!cfg->threads)
		cfg->threads = cores > 0 ? (unsigned)cores : 1;
	if (!cfg->mem)
		cfg->mem = round_down(ram_bytes() / 4, 1 << 20);
	if (cfg->stack < 64 << 10)
		cfg->stack = 64 << 10;
	cfg->stack = (cfg->stack + 4095) & ~(size_t)4095;
	if (!cfg->qdepth || cfg->qdepth > 4096)
		cfg->qdepth = 32;

	if (cfg->threads > cfg->procs)
		cfg->threads = cfg->procs;
	derive_overhead(cfg, d, pems_nranks());
	if (!cfg->mu) {
		size_t avail = cfg->mem > d->fixed + d->msg_budget ?
			       cfg->mem - d->fixed - d->msg_budget : 0;
		cfg->mu = round_down(avail / (PEMS_SLOTS * cfg->threads), 1 << 20);
		if (cfg->mu > ((size_t)1 << 30))
			cfg->mu = (size_t)1 << 30;
		/* many VPs: a derived mu shrinks so that v contexts fit the
		 * address space a rank reserves for them (context.c) */
		if (cfg->mu > PEMS_MAX_REGION / cfg->procs)
			cfg->mu = round_down(PEMS_MAX_REGION / cfg->procs, 1 << 20);
	}
	cfg->mu = (cfg->mu + 4095) & ~(size_t)4095;
	if (cfg->mu < cfg->stack + (64 << 10)) {
		fprintf(stderr, "pems: error: mu is %zu KiB but a VP needs at least %zu KiB (stack %zu KiB + heap); raise --mem or PEMS_MU\n",
			cfg->mu >> 10, (cfg->stack + (64 << 10)) >> 10, cfg->stack >> 10);
		return -PEMS_E_BUDGET;
	}
	need = d->fixed + d->msg_budget + (size_t)cfg->threads * cfg->mu;
	if (need > cfg->mem) {
		fprintf(stderr, "pems: error: memory budget %zu MiB is too small for k = %u threads x mu = %zu MiB (+ %zu MiB for messages and runtime); raise --mem to %zu MiB, or lower --threads or mu\n",
			cfg->mem >> 20, cfg->threads, cfg->mu >> 20,
			(d->fixed + d->msg_budget) >> 20, (need + (1 << 20) - 1) >> 20);
		return -PEMS_E_BUDGET;
	}
	d->ctx_budget = cfg->mem - d->fixed - d->msg_budget;
	return 0;
}

/* context.c (4): what may be held beside the run slots (the rest pool
 * @rest) is the rest less room to prefetch and write back 2k contexts of
 * @ctx bytes, but at least half of it (rt->cache_limit). */
size_t pems_hold_limit(size_t rest, unsigned k, size_t ctx)
{
	size_t swap = 2 * (size_t)k * ctx;
	size_t limit = rest > swap ? rest - swap : 0;

	return limit < rest / 2 ? rest / 2 : limit;
}

PEMS_API size_t pems_msg_mem(unsigned threads, unsigned procs, size_t chunk)
{
	return (2 * (size_t)threads * procs + 8 * (size_t)threads) * chunk;
}

PEMS_API int pems_budget(const struct pems_config *cfg, unsigned nranks, size_t ctx,
			 struct pems_budget *out)
{
	struct pems_config c;
	struct pems_derived d;
	size_t used;

	memset(&c, 0, sizeof(c));
	c.threads = cfg->threads ? cfg->threads : 1;
	c.procs = cfg->procs ? cfg->procs : 1;
	c.mem = cfg->mem;
	c.msg_mem = cfg->msg_mem;
	c.compress = cfg->compress;
	c.compress_level = cfg->compress_level;
	derive_overhead(&c, &d, nranks ? nranks : pems_nranks());
	out->overhead = d.fixed + d.msg_budget;
	out->msg = d.msg_budget;
	out->chunk = d.chunk;
	used = out->overhead + (size_t)c.threads * cfg->mu;
	out->hold = pems_hold_limit(cfg->mem > used ? cfg->mem - used : 0, c.threads, ctx);
	return 0;
}

/* "3 MiB" / "512 KiB" for messages: whole MiB from 1 MiB up, else KiB
 * (rounded up, so a need is never printed as 0). */
const char *pems_size_str(char buf[32], size_t bytes)
{
	if (bytes >= (1u << 20) || bytes == 0)
		snprintf(buf, 32, "%zu MiB", (bytes + (1u << 20) - 1) >> 20);
	else
		snprintf(buf, 32, "%zu KiB", (bytes + 1023) >> 10);
	return buf;
}
