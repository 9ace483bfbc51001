/*
 * heap.c - the allocator inside a VP's context.
 *
 * The heap grows up from the start of the VP's slice; everything it needs
 * lives inside the slice (block headers and free-list links) or in the
 * VP's struct pems_heap, so it is swapped with the context and pointers
 * stay valid.  Invariants:
 *  (1) blocks tile [PEMS_HEAP_START, brk) exactly; each starts with a
 *      16-byte header {size | used bit, size of the previous block};
 *  (2) the block ending at brk is never free: freeing it lowers brk, so
 *      swap-out writes only [0, brk) and a freed buffer costs no I/O;
 *  (3) free blocks are on one doubly linked list (offsets; 0 = none);
 *  (4) payloads are 16-byte aligned, and page aligned from 64 KiB up so
 *      that they can take O_DIRECT transfers.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "rt.h"

#define HDR 16u
#define MIN_BLOCK 48u
#define USED 1u
#define PEMS_HEAP_START 64u
#define BIG (64u << 10)

struct blk {
	size_t size;	/* with USED in bit 0 */
	size_t prev;	/* size of the block before, 0 for the first */
	size_t next_free, prev_free;	/* only in free blocks */
};

static struct blk *at(const struct pems_heap *h, size_t off)
{
	return (struct blk *)(h->base + off);
}

static size_t bsize(const struct blk *b) { return b->size & ~(size_t)USED; }
static bool bused(const struct blk *b) { return b->size & USED; }

void pems_heap_init(struct pems_heap *h, char *base, size_t limit)
{
	h->base = base;
	h->limit = limit;
	h->brk = PEMS_HEAP_START;
	h->free_head = 0;
	h->touched = PEMS_HEAP_START;
	h->last = 0;
}

static void list_add(struct pems_heap *h, size_t off)
{
	struct blk *b = at(h, off);

	b->prev_free = 0;
	b->next_free = h->free_head;
	if (h->free_head)
		at(h, h->free_head)->prev_free = off;
	h->free_head = off;
}

static void list_del(struct pems_heap *h, size_t off)
{
	struct blk *b = at(h, off);

	if (b->prev_free)
		at(h, b->prev_free)->next_free = b->next_free;
	else
		h->free_head = b->next_free;
	if (b->next_free)
		at(h, b->next_free)->prev_free = b->prev_free;
}

/* Set the header of [off, off+size) and the back link of its successor. */
static void set_block(struct pems_heap *h, size_t off, size_t size, bool used,
		      size_t prev)
{
	struct blk *b = at(h, off);

	b->size = size | (used ? USED : 0);
	b->prev = prev;
	if (off + size < h->brk)
		at(h, off + size)->prev = size;
}

/* Bytes to skip at @off so that the payload is page aligned (0 if small). */
static size_t front_pad(size_t off, size_t need)
{
	size_t pad;

	if (need < BIG)
		return 0;
	pad = ((off + HDR + PEMS_PAGE - 1) & ~(size_t)(PEMS_PAGE - 1)) - HDR - off;
	if (pad && pad < MIN_BLOCK)
		pad += PEMS_PAGE;
	return pad;
}

/* Use @need bytes of free space [off, off+avail) (not on the list) that
 * starts after a block of size @prev; give back what is left over. */
static void *carve(struct pems_heap *h, size_t off, size_t avail, size_t need,
		   size_t prev)
{
	size_t pad = front_pad(off, need);

	if (pad) {
		set_block(h, off, pad, false, prev);
		list_add(h, off);
		prev = pad;
		off += pad;
		avail -= pad;
	}
	if (avail - need >= MIN_BLOCK) {
		set_block(h, off, need, true, prev);
		set_block(h, off + need, avail - need, false, need);
		list_add(h, off + need);
	} else {
		set_block(h, off, avail, true, prev);
	}
	return h->base + off + HDR;
}

void *pems_heap_alloc(struct pems_heap *h, size_t n)
{
	size_t need, off, pad, prev;
	struct blk *b;
	void *p;

	if (n > h->limit)
		return NULL;
	need = (n + HDR + 15) & ~(size_t)15;
	if (need < MIN_BLOCK)
		need = MIN_BLOCK;
	for (off = h->free_head; off; off = b->next_free) {
		b = at(h, off);
		if (front_pad(off, need) + need <= bsize(b)) {
			list_del(h, off);
			return carve(h, off, bsize(b), need, b->prev);
		}
	}
	/* grow at the top: the last block is used (invariant 2) */
	off = h->brk;
	pad = front_pad(off, need);
	if (off + pad + need > h->limit)
		return NULL;
	prev = h->last ? bsize(at(h, h->last)) : 0;
	h->brk = off + pad + need;
	if (h->brk > h->touched)
		h->touched = h->brk;
	p = carve(h, off, pad + need, need, prev);
	h->last = (size_t)((char *)p - HDR - h->base);
	return p;
}

void pems_heap_free(struct pems_heap *h, void *p)
{
	size_t off = (size_t)((char *)p - HDR - h->base);
	struct blk *b = at(h, off);
	size_t size = bsize(b), prev = b->prev, next = off + size;

	if (next < h->brk && !bused(at(h, next))) {
		list_del(h, next);
		size += bsize(at(h, next));
	}
	if (prev && !bused(at(h, off - prev))) {
		off -= prev;
		list_del(h, off);
		size += bsize(at(h, off));
		prev = at(h, off)->prev;
	}
	if (off + size == h->brk) {
		/* invariant (2): the top shrinks instead of joining the list;
		 * the block before a free block is used, so it is the new last */
		h->brk = off;
		h->last = prev ? off - prev : 0;
		return;
	}
	set_block(h, off, size, false, prev);
	list_add(h, off);
}

/* Large buffers get transparent huge pages: a fresh context buffer is
 * otherwise faulted in 4 KiB at a time, which costs more than sorting it.
 * Only the 2 MiB-aligned interior, so small neighbours (the stack, heap
 * metadata) never pin a huge page each. */
void pems_heap_hint(void *p, size_t n)
{
	uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
	uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)((2u << 20) - 1);

	/* read once; workers race to fill it in with the same value */
	static atomic_int off = -1;
	int o = atomic_load_explicit(&off, memory_order_relaxed);

	if (o < 0) {
		o = getenv("PEMS_NO_THP") != NULL;
		atomic_store_explicit(&off, o, memory_order_relaxed);
	}
	if (!o && n >= (4u << 20) && b > a)
		madvise((void *)a, b - a, MADV_HUGEPAGE);
}

size_t pems_heap_usable(const struct pems_heap *h, const void *p)
{
	(void)h;
	return bsize((const struct blk *)((const char *)p - HDR)) - HDR;
}

bool pems_heap_owns(const struct pems_heap *h, const void *p)
{
	const char *c = p;

	return c >= h->base + PEMS_HEAP_START + HDR && c < h->base + h->brk;
}

/* ---- context memory (include/pems.h): the calling VP's heap ---- */

PEMS_API void *pems_malloc(size_t n)
{
	struct pems_vp *vp = pems_self();
	char a[32], b[32], c[32];
	void *p;

	if (!vp)
		return malloc(n);
	p = pems_heap_alloc(&vp->heap, n);
	if (!p)
		pems_fatal("VP %u needs %s more in superstep %llu but mu is %s (%s in use); raise mu (PEMS_MU / --mem) or --procs",
			   vp->pid, pems_size_str(a, n),
			   (unsigned long long)pems_rt->superstep, pems_size_str(b, pems_rt->mu),
			   pems_size_str(c, vp->heap.brk > 64 ? vp->heap.brk : 0));
	pems_heap_hint(p, n);
	return p;
}

PEMS_API void *pems_calloc(size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = pems_malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

static bool in_any_heap(const void *p, struct pems_vp **owner)
{
	struct pems_rt *rt = pems_rt;
	size_t i;

	if (!rt || (const char *)p < rt->region ||
	    (const char *)p >= rt->region + (size_t)rt->vlocal * rt->mu)
		return false;
	i = (size_t)((const char *)p - rt->region) / rt->mu;
	*owner = &rt->vps[i];
	return true;
}

PEMS_API void pems_free(void *p)
{
	struct pems_vp *owner;

	if (!p)
		return;
	if (!in_any_heap(p, &owner)) {
		free(p);
		return;
	}
	if (owner != pems_self() || !pems_heap_owns(&owner->heap, p))
		pems_fatal("pems_free: %p is not a live allocation of the calling VP", p);
	pems_heap_free(&owner->heap, p);
}

PEMS_API void *pems_realloc(void *p, size_t n)
{
	struct pems_vp *owner;
	void *q;
	size_t old;

	if (!p)
		return pems_malloc(n);
	if (!in_any_heap(p, &owner))
		return realloc(p, n);
	old = pems_heap_usable(&owner->heap, p);
	if (n <= old)
		return p;
	q = pems_malloc(n);
	memcpy(q, p, old);
	pems_free(p);
	return q;
}

PEMS_API size_t pems_context_used(void)
{
	struct pems_vp *vp = pems_self();

	return vp ? vp->heap.brk + pems_rt->stack : 0;
}

PEMS_API size_t pems_context_avail(void)
{
	struct pems_vp *vp = pems_self();

	return vp ? vp->heap.limit - vp->heap.brk : 0;
}
