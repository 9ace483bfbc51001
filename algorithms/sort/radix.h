/*
 * radix.h - in-memory local sort kernels used by the BSP sample sort.
 *
 * Single-threaded, libc only, safe to call from several threads at once
 * on disjoint buffers.  The caller passes the scratch buffer, which is
 * clobbered; the u64 sorts also take 64 KiB of counts from malloc for
 * the call (and sort without them if malloc fails).
 */
#ifndef PEMS_RADIX_H
#define PEMS_RADIX_H

#include <stddef.h>
#include <stdint.h>

/* Sort @n keys at @a ascending (MSD radix); @tmp is scratch of n keys and
 * must not overlap @a.  The result is in @a.  Cannot fail. */
void pems_radix_sort_u64(uint64_t *a, uint64_t *tmp, size_t n);

/* The same, but the result is in @dst (n keys, not overlapping @src);
 * @src is clobbered.  Saves the copy a caller would otherwise make. */
void pems_radix_sort_u64_to(uint64_t *src, uint64_t *dst, size_t n);

/* Stable sort of @n 100-byte records at @recs by their first 10 bytes,
 * compared as unsigned bytes (memcmp order); equal keys keep their input
 * order.  @tmp is scratch of n * 100 bytes, not overlapping @recs.  The
 * result is in @recs.  n must be below 2^32.  Cannot fail. */
void pems_radix_sort_rec100(uint8_t *recs, uint8_t *tmp, size_t n);

/* The same, but the result is in @dst (n * 100 bytes, not overlapping
 * @src); @src is left unchanged.  Saves the copy back to @src. */
void pems_radix_sort_rec100_to(const uint8_t *src, uint8_t *dst, size_t n);

/* Streaming rec100 sort, for a caller that writes the sorted records
 * out piece by piece instead of holding a second copy of them: the sort
 * order of the @n records at @recs (stable, as above), as their input
 * indices, in @scratch (n * 32 + 16 bytes, any alignment).  Returns a
 * pointer into @scratch, or NULL when the records are in order already
 * (or n < 2).  n must be below 2^32.  Cannot fail. */
const uint32_t *pems_rec100_order(const uint8_t *recs, size_t n, void *scratch);

/* Copy records order[from .. from+cnt) of @recs (in that order) to @out
 * back to back; order NULL: records from .. from+cnt as they are. */
void pems_rec100_gather(const uint8_t *recs, const uint32_t *order, size_t from,
			size_t cnt, uint8_t *out);

#endif
