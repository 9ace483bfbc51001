/*
 * pattern.h - deterministic test data for the BSP tests (check_bsp.c,
 * and check_mpi_bsp.c through mpi_test.h): byte patterns that any VP, or
 * a sequential reference, regenerates from their name (a, b), and the
 * 64-bit hashes in which a VP digests what it observed.
 *
 * Header-only: everything is static inline (unused helpers do not warn).
 */
#ifndef PATTERN_H
#define PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define H0 0xcbf29ce484222325ull	/* FNV-1a offset basis: hash(H0, ...) starts a digest */

static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
	return mix64(mix64(mix64(a) ^ b) ^ c);
}

/* FNV-1a, byte by byte: the digest of a byte sequence. */
static inline uint64_t hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline uint64_t hash_u64(uint64_t h, uint64_t x)
{
	return hash(h, &x, sizeof(x));
}

/* Bytes [off, off+n) of the pattern named (a, b) into @dst. */
static inline void pfill(void *dst, uint64_t a, uint64_t b, size_t off, size_t n)
{
	unsigned char *d = dst;
	uint64_t s = mix64(mix64(a) ^ (b * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
	size_t i = 0;

	while (i < n) {
		size_t j = off + i;
		uint64_t w = mix64(s + (j >> 3));

		do {
			d[i++] = (unsigned char)(w >> (8 * (j & 7)));
			j++;
		} while (i < n && (j & 7));
	}
}

/* Are the @n bytes at @p bytes [off, off+n) of the pattern (a, b)? */
static inline bool pequal(const void *p, uint64_t a, uint64_t b, size_t off, size_t n)
{
	unsigned char tmp[512];
	const unsigned char *c = p;
	size_t done = 0;

	while (done < n) {
		size_t m = n - done < sizeof(tmp) ? n - done : sizeof(tmp);

		pfill(tmp, a, b, off + done, m);
		if (memcmp(c + done, tmp, m))
			return false;
		done += m;
	}
	return true;
}

/* hash of the pattern (a, b) [0, n) without materialising it */
static inline uint64_t phash(uint64_t h, uint64_t a, uint64_t b, size_t n)
{
	unsigned char tmp[512];
	size_t done = 0;

	while (done < n) {
		size_t m = n - done < sizeof(tmp) ? n - done : sizeof(tmp);

		pfill(tmp, a, b, done, m);
		h = hash(h, tmp, m);
		done += m;
	}
	return h;
}

static inline bool all_bytes(const void *p, int c, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (unsigned char)c)
			return false;
	return true;
}

/* VP @pid's value as it enters a run's checksum (a sum of folds, so the
 * order in which VPs or ranks add them does not matter). */
static inline uint64_t fold(unsigned pid, uint64_t x)
{
	return mix64(x ^ mix64((uint64_t)pid + 1));
}

/* The checksum of the values of VPs [0, v). */
static inline uint64_t fold_all(const uint64_t *vals, unsigned v)
{
	uint64_t s = 0;
	unsigned i;

	for (i = 0; i < v; i++)
		s += fold(i, vals[i]);
	return s;
}

#endif
