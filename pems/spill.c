/*
 * spill.c - checksums and compression of spilled blocks (spill.h).
 *
 * Invariants:
 *  (1) a stored block is never larger than the raw one: compressed form
 *      only when it saves at least one 4 KiB page after padding, so every
 *      buffer, request and file offset computed for raw data holds it;
 *  (2) every stored block has a CRC-32C in its descriptor (computed over
 *      the bytes written, so the cost is paid on the smaller form) and is
 *      checked before it is used; a compressed block's header repeats it,
 *      and the header's raw and frame sizes must match the descriptor;
 *  (3) compression runs on the worker that owns the data, one zstd
 *      context per worker, so k workers compress in parallel;
 *  (4) under --compress auto each kind (contexts, messages) starts in
 *      SAMPLING: every message chunk and every AUTO_STRIDE-th context
 *      block is compressed at the fast
 *      level and timed (thread CPU time, so that preemption does not count
 *      as cost), the others are stored raw; after AUTO_BLOCKS samples the
 *      kind is switched ON or OFF for the rest of the run (rule in
 *      decide()); after AUTO_EARLY samples none of which shrank below
 *      AUTO_FLAT (random data) it is switched OFF at once.  The stride
 *      spreads the sample of contexts over several structures: the first
 *      blocks of a context are often one array (sgd: the dense model)
 *      that says nothing of the rest (the sparse gradient sums).  Sampled blocks
 *      that shrank stay compressed: sampling costs only CPU.
 */
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_estimate*: memory for the budget */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "rt.h"
#include "spill.h"

#define AUTO_BLOCKS 16		/* blocks of a kind sampled under auto */
#define AUTO_STRIDE 7		/* one block in this many is a sample */
#define AUTO_EARLY 4		/* ... or this many, when none of them shrank: */
#define AUTO_FLAT 0.97		/* compressed/raw above this */
#define AUTO_MAX_RATIO 0.85	/* compressed/raw at most this to pay */
#define AUTO_UNPACK 0.35	/* decompression CPU per byte / compression's (zstd -1) */
#define AUTO_MARGIN 1.2		/* disk time saved / CPU time added at least */
#define AUTO_CTX_COST 2.0	/* contexts: cost x this (the staged 1 MiB block path;
				 * sgd measured 1.3 ms/MB added, sampled 0.64) */

enum zstate { Z_OFF = 0, Z_ON, Z_SAMPLING };

static struct {
	bool checks;
	int level;
	unsigned ncpu;			/* workers that compress in parallel */
	double disk_bw;			/* bytes/s assumed for one rank's disks */
	_Atomic int state[2];		/* enum zstate, by kind */
	pthread_mutex_t lock;		/* sampling totals */
	unsigned samples[2];
	atomic_uint seen[2];		/* blocks packed while sampling (contexts) */
	double s_raw[2], s_out[2], s_secs[2];
	atomic_uint_fast64_t raw[2], stored[2];	/* bytes packed, for --stats */
} g = { .checks = true, .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *kind_name[2] = { "contexts", "messages" };

int pems_spill_setup(struct pems_rt *rt)
{
	const char *s = getenv("PEMS_CHECKSUM"), *bw = getenv("PEMS_DISK_BW");
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int st = rt->cfg.compress == PEMS_COMPRESS_ZSTD ? Z_ON :
		 rt->cfg.compress == PEMS_COMPRESS_AUTO ? Z_SAMPLING : Z_OFF;
	size_t b;
	int i;

	g.checks = !(s && !strcmp(s, "0"));
	g.level = rt->cfg.compress_level ? rt->cfg.compress_level : 1;
	g.ncpu = rt->k;
	if (cores > 0 && (long)g.ncpu > cores)
		g.ncpu = (unsigned)cores;
	if (!g.ncpu)
		g.ncpu = 1;
	g.disk_bw = 1e9;
	if (bw && *bw && !pems_parse_size(bw, &b) && b)
		g.disk_bw = (double)b;
	for (i = 0; i < 2; i++) {
		atomic_store(&g.state[i], st);
		g.samples[i] = 0;
		atomic_store(&g.seen[i], 0);
		g.s_raw[i] = g.s_out[i] = g.s_secs[i] = 0;
		atomic_store(&g.raw[i], 0);
		atomic_store(&g.stored[i], 0);
	}
	return 0;
}

bool pems_spill_checksums(void)
{
	return g.checks;
}

size_t pems_spill_mem(int mode, int level, size_t chunk, unsigned norigins)
{
	if (mode == PEMS_COMPRESS_OFF)
		return 0;
	if (!level)
		level = 1;
	/* zstd contexts, the message staging chunk, one unpacked chunk per
	 * delivery reader (two reader sets), the context block stages */
	return ZSTD_estimateCCtxSize_usingCParams(ZSTD_getCParams(level, PEMS_CTX_BLOCK, 0)) +
	       ZSTD_estimateDCtxSize() + chunk + 2 * (size_t)norigins * chunk +
	       PEMS_ZSTAGES * (size_t)(PEMS_CTX_BLOCK + PEMS_PAGE);
}

bool pems_spill_active(enum pems_spill_kind kind)
{
	return atomic_load_explicit(&g.state[kind], memory_order_relaxed) != Z_OFF;
}

void pems_spill_sum(enum pems_spill_kind kind, const void *src, size_t n, struct pems_blk *b)
{
	b->z = false;
	b->stored = (uint32_t)n;
	b->crc = g.checks ? pems_crc32c(0, src, n) : 0;
	atomic_fetch_add_explicit(&g.raw[kind], n, memory_order_relaxed);
	atomic_fetch_add_explicit(&g.stored[kind], n, memory_order_relaxed);
}

struct pems_wspill *pems_wspill(struct pems_worker *w)
{
	struct pems_wspill *z = w->spill;

	if (z)
		return z;
	z = calloc(1, sizeof(*z));
	if (!z || !(z->cc = ZSTD_createCCtx()) || !(z->dc = ZSTD_createDCtx()))
		pems_fatal("out of memory for compression state");
	ZSTD_CCtx_setParameter((ZSTD_CCtx *)z->cc, ZSTD_c_checksumFlag, 0);	/* ours is CRC-32C */
	w->spill = z;
	return z;
}

void pems_spill_worker_free(struct pems_worker *w)
{
	struct pems_wspill *z = w ? w->spill : NULL;
	unsigned i;

	if (!z)
		return;
	ZSTD_freeCCtx((ZSTD_CCtx *)z->cc);
	ZSTD_freeDCtx((ZSTD_DCtx *)z->dc);
	pems_io_free(z->msgbuf, w->rt->chunk_size);
	for (i = 0; i < PEMS_ZSTAGES; i++)
		pems_io_free(z->stage[i].buf, PEMS_CTX_BLOCK + PEMS_PAGE);
	free(z->wait);
	free(z);
	w->spill = NULL;
}

static size_t pad(size_t n)
{
	return (n + PEMS_PAGE - 1) & ~(size_t)(PEMS_PAGE - 1);
}

/* Invariant (4): compression pays when it shrinks the data enough and
 * the disk time it saves exceeds the CPU time it adds.  Per raw byte a
 * spilled block is written once and read once, so the disk saves
 * 2 (1 - ratio) / disk_bw seconds; the CPU spends the sampled compression
 * time plus AUTO_UNPACK of it to decompress, spread over the workers
 * (at most one per core); for contexts twice that, since a compressed
 * context moves through the worker's four 1 MiB stages instead of one
 * request per extent (measured on sgd, 2026-12-03: docs/compression.md).
 * Comparing compression speed with the disk
 * alone (the block is compressed before the disk writes it, so
 * compression must not be slower) is not enough: on a machine whose cores
 * also run the program, every CPU second spent compressing delays it. */
static void decide(enum pems_spill_kind kind)
{
	double ratio = g.s_out[kind] / g.s_raw[kind];
	double cpb = (g.s_secs[kind] > 1e-9 ? g.s_secs[kind] : 1e-9) / g.s_raw[kind];
	double cpu = cpb * (1 + AUTO_UNPACK) / g.ncpu * (kind == PEMS_SPILL_CTX ? AUTO_CTX_COST : 1);
	double save = 2 * (1 - ratio) / g.disk_bw;
	bool on = ratio <= AUTO_MAX_RATIO && save >= AUTO_MARGIN * cpu;
	const char *env = getenv("PEMS_STATS");	/* pems-run --stats turns cfg.stats off */

	atomic_store(&g.state[kind], on ? Z_ON : Z_OFF);
	if (pems_rt && (pems_rt->cfg.stats || (env && *env && strcmp(env, "0"))))
		fprintf(stderr, "pems: compress auto: %s %s after %u blocks (ratio %.3f, %.0f MB/s per worker: saves %.2f ms of disk, costs %.2f ms of CPU per MB over %u workers; disk assumed %.0f MB/s)\n",
			kind_name[kind], on ? "on" : "off", g.samples[kind], ratio, 1e-6 / cpb,
			save * 1e9, cpu * 1e9, g.ncpu, g.disk_bw / 1e6);
}

/* CPU seconds of the calling thread. */
static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sample(enum pems_spill_kind kind, size_t raw, size_t out, double secs)
{
	pthread_mutex_lock(&g.lock);
	if (atomic_load(&g.state[kind]) == Z_SAMPLING) {
		g.s_raw[kind] += (double)raw;
		g.s_out[kind] += (double)out;
		g.s_secs[kind] += secs;
		++g.samples[kind];
		if (g.samples[kind] >= AUTO_BLOCKS ||
		    (g.samples[kind] >= AUTO_EARLY && g.s_out[kind] > AUTO_FLAT * g.s_raw[kind]))
			decide(kind);
	}
	pthread_mutex_unlock(&g.lock);
}

const void *pems_spill_pack(struct pems_worker *w, enum pems_spill_kind kind,
			    const void *src, size_t n, void *dst, size_t cap,
			    struct pems_blk *b)
{
	int st = atomic_load_explicit(&g.state[kind], memory_order_relaxed);

	atomic_fetch_add_explicit(&g.raw[kind], n, memory_order_relaxed);
	b->z = false;
	b->stored = (uint32_t)n;
	if (st == Z_SAMPLING && kind == PEMS_SPILL_CTX &&
	    atomic_fetch_add_explicit(&g.seen[kind], 1, memory_order_relaxed) % AUTO_STRIDE)
		st = Z_OFF;	/* invariant (4): not a sample */
	if (st != Z_OFF && n > PEMS_PAGE && cap > PEMS_ZHDR + PEMS_PAGE) {
		struct pems_wspill *z = pems_wspill(w);
		struct pems_zhdr *h = dst;
		double t0 = st == Z_SAMPLING ? thread_cpu() : 0;
		size_t r = ZSTD_compressCCtx((ZSTD_CCtx *)z->cc, (char *)dst + PEMS_ZHDR, cap - PEMS_ZHDR,
					     src, n, st == Z_SAMPLING ? 1 : g.level);
		bool ok = !ZSTD_isError(r) && pad(r + PEMS_ZHDR) < pad(n);	/* invariant (1) */

		if (st == Z_SAMPLING)
			sample(kind, n, ok ? r + PEMS_ZHDR : n, thread_cpu() - t0);
		if (ok) {
			h->magic = PEMS_ZMAGIC;
			h->raw = (uint32_t)n;
			h->size = (uint32_t)r;
			h->crc = pems_crc32c(0, (char *)dst + PEMS_ZHDR, r);
			b->crc = h->crc;
			b->z = true;
			b->stored = (uint32_t)(r + PEMS_ZHDR);
			atomic_fetch_add_explicit(&g.stored[kind], b->stored, memory_order_relaxed);
			return dst;
		}
	}
	b->crc = g.checks ? pems_crc32c(0, src, n) : 0;
	atomic_fetch_add_explicit(&g.stored[kind], n, memory_order_relaxed);
	return src;
}

int pems_spill_unpack(struct pems_worker *w, const void *stored, const struct pems_blk *b,
		      void *dst, size_t raw)
{
	const struct pems_zhdr *h = stored;
	size_t r;

	if (!b->z) {
		if (g.checks && pems_crc32c(0, stored, raw) != b->crc)
			return -EBADMSG;
		if (dst != stored)
			memcpy(dst, stored, raw);
		return 0;
	}
	if (h->magic != PEMS_ZMAGIC || h->raw != raw || h->size + PEMS_ZHDR != b->stored ||
	    h->crc != b->crc)
		return -EPROTO;
	if (g.checks && pems_crc32c(0, (const char *)stored + PEMS_ZHDR, h->size) != b->crc)
		return -EBADMSG;
	r = ZSTD_decompressDCtx((ZSTD_DCtx *)pems_wspill(w)->dc, dst, raw, (const char *)stored + PEMS_ZHDR, h->size);
	if (ZSTD_isError(r) || r != raw)
		return -EILSEQ;
	return 0;
}

const char *pems_spill_strerror(int rc)
{
	return rc == -EILSEQ ? "compressed block does not decompress" :
	       rc == -EPROTO ? "compressed block header does not match its descriptor" :
	       "checksum mismatch";
}

const char *pems_fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		snprintf(buf, size, "fd %d", fd);
	else
		buf[n] = '\0';
	return buf;
}

void pems_spill_totals(enum pems_spill_kind kind, uint64_t *raw, uint64_t *stored)
{
	*raw = atomic_load(&g.raw[kind]);
	*stored = atomic_load(&g.stored[kind]);
}

/* One line for --stats: what compression saved (nothing when off). */
void pems_spill_report(struct pems_rt *rt)
{
	int i;

	if (!rt->cfg.stats || rt->cfg.compress == PEMS_COMPRESS_OFF)
		return;
	for (i = 0; i < 2; i++) {
		uint64_t raw = atomic_load(&g.raw[i]), st = atomic_load(&g.stored[i]);

		if (raw)
			fprintf(stderr, "pems: compress: %s %llu MiB stored as %llu MiB (%.3f)\n",
				kind_name[i], (unsigned long long)(raw >> 20),
				(unsigned long long)(st >> 20), (double)st / (double)raw);
	}
}
