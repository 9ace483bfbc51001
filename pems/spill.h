/*
 * spill.h - what every block the runtime spills carries: a CRC-32C, and
 * optionally zstd compression (spill.c; on-disk format in docs/formats.md).
 *
 * A block is stored either raw (its bytes, nothing added) or compressed
 * (a 16-byte header then a zstd frame), whichever is smaller; it is
 * never larger than raw, so buffers and file offsets sized for raw data
 * hold it.  The caller keeps, per block, the descriptor below (in memory;
 * a checkpoint manifest stores it) and checks it when reading back.
 */
#ifndef PEMS_SPILL_H
#define PEMS_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crc32c.h"
#include "rt.h"

#define PEMS_ZMAGIC 0x315A4D50u	/* "PMZ1" little-endian: compressed block */
#define PEMS_ZHDR 16u
#define PEMS_CTX_BLOCK (1u << 20)	/* context heap bytes per block */
#define PEMS_ZSTAGES 4			/* context blocks in flight per worker */

enum pems_spill_kind { PEMS_SPILL_CTX = 0, PEMS_SPILL_MSG = 1 };

/* struct pems_blk (runtime.h): a stored block's descriptor. */

/* On-disk header of a compressed block (little-endian). */
struct pems_zhdr {
	uint32_t magic;		/* PEMS_ZMAGIC */
	uint32_t raw;		/* bytes after decompression */
	uint32_t size;		/* bytes of the zstd frame that follows */
	uint32_t crc;		/* CRC-32C of the frame */
};

struct pems_rt;
struct pems_worker;
struct pems_vp;

/* Per-worker compression state, created on first use (spill.c). */
struct pems_zstage {		/* one context block in flight (context.c) */
	struct pems_ioop op;
	char *buf;		/* PEMS_CTX_BLOCK + PEMS_PAGE bytes, O_DIRECT-aligned */
	struct pems_vp *vp;	/* NULL when free */
	unsigned blk;
};
struct pems_wspill {
	void *cc, *dc;		/* ZSTD_CCtx, ZSTD_DCtx */
	char *msgbuf;		/* msg.c: a spare chunk buffer to compress into */
	struct pems_zstage stage[PEMS_ZSTAGES];
	struct pems_vp **wait;	/* context.c: VPs with blocks left to transfer, FIFO */
	unsigned nwait, capwait;
};

/* Called at runtime setup: reads cfg.compress/compress_level and the
 * PEMS_CHECKSUM environment (0 turns checksums off, for measuring their
 * cost).  Returns 0. */
int pems_spill_setup(struct pems_rt *rt);
/* Free @w's compression state (NULL-safe). */
void pems_spill_worker_free(struct pems_worker *w);
/* True when blocks carry checksums. */
bool pems_spill_checksums(void);
/* True when blocks of @kind may be compressed (zstd, or auto not yet off). */
bool pems_spill_active(enum pems_spill_kind kind);
/* Describe @n bytes at @src stored raw: checksum only. */
void pems_spill_sum(enum pems_spill_kind kind, const void *src, size_t n, struct pems_blk *b);
/* The worker's compression state (created on first use; fatal when out
 * of memory). */
struct pems_wspill *pems_wspill(struct pems_worker *w);
/* Bytes of @kind packed (raw) and stored since the runtime started (kept
 * after it ends, for tests and --stats). */
void pems_spill_totals(enum pems_spill_kind kind, uint64_t *raw, uint64_t *stored);
/* --stats: bytes packed and stored per kind (nothing when off). */
void pems_spill_report(struct pems_rt *rt);
/* Bytes of M taken per worker by compression (contexts, buffers); 0 when off. */
size_t pems_spill_mem(int mode, int level, size_t chunk, unsigned norigins);

/* Store @n bytes at @src: compressed into @dst (capacity @cap) when
 * compression of @kind is on and pays, else raw.  Fills @b; returns the
 * buffer holding the stored bytes (@dst or @src).  Never fails. */
const void *pems_spill_pack(struct pems_worker *w, enum pems_spill_kind kind,
			    const void *src, size_t n, void *dst, size_t cap,
			    struct pems_blk *b);
/* Check @stored against @b and unpack it into @dst (@raw bytes; for a raw
 * block @dst may equal @stored, then nothing is copied).  Returns 0,
 * -EBADMSG on a checksum mismatch, -EPROTO when a compressed block's
 * header (magic, sizes, CRC) disagrees with @b, -EILSEQ when the frame
 * does not decompress to @raw bytes. */
int pems_spill_unpack(struct pems_worker *w, const void *stored, const struct pems_blk *b,
		      void *dst, size_t raw);
/* What an unpack error means, for messages ("checksum mismatch", ...). */
const char *pems_spill_strerror(int rc);

/* The path of open file @fd (from /proc; "(deleted)" when unlinked). */
const char *pems_fd_path(int fd, char *buf, size_t size);

#endif
