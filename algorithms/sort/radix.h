/*
 * radix.h - in-memory local sort kernels used by the BSP sample sort.
 *
 * Single-threaded, libc only, safe to call from several threads at once
 * on disjoint buffers.  Neither function allocates: the caller passes the
 * scratch buffer, which is clobbered.
 */
#ifndef PEMS_RADIX_H
#define PEMS_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Sort @n keys at @a ascending (LSD radix); @tmp is scratch of n keys and
 * must not overlap @a.  The result is in @a.  Cannot fail. */
void pems_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

/* Stable sort of @n 100-byte records at @recs by their first 10 bytes,
 * compared as unsigned bytes (memcmp order); equal keys keep their input
 * order.  @tmp is scratch of n * 100 bytes, not overlapping @recs.  The
 * result is in @recs.  n must be below 2^32.  Cannot fail. */
void pems_radix_sort_rec100(uint8_t *recs, uint8_t *tmp, size_t n);

#endif
