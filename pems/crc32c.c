/*
 * crc32c.c - CRC-32C, with the SSE4.2 instruction or slice-by-8 tables.
 *
 * The CRC register update is linear: for blocks A, B,
 *     upd(c, A||B) = shift_|B|(upd(c, A)) ^ upd(0, B)
 * where shift_n advances a register over n zero bytes.  The hardware path
 * therefore runs three independent crc32 chains over three adjacent
 * blocks of L bytes (the instruction has a latency of 3 cycles but a
 * throughput of one per cycle) and joins them with shift_L, a linear map
 * applied with four 256-entry tables.  All work is on the raw register;
 * the standard pre/post inversion is done once per call.
 */
#include <pthread.h>
#include <string.h>

#include "crc32c.h"

#define POLY 0x82F63B78u	/* reflected Castagnoli polynomial */
#define LONG_L 4096u		/* bytes per chain, long blocks */
#define SHORT_L 256u		/* bytes per chain, short blocks */

static uint32_t tab[8][256];		/* slice-by-8 */
static uint32_t shift_long[4][256];	/* shift over LONG_L zero bytes */
static uint32_t shift_short[4][256];	/* shift over SHORT_L zero bytes */
static bool have_hw;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Advance raw register @c over @n zero bytes (init only: bytewise). */
static uint32_t zeros(uint32_t c, size_t n)
{
	while (n--)
		c = (c >> 8) ^ tab[0][c & 0xff];
	return c;
}

static void build_shift(uint32_t t[4][256], size_t n)
{
	uint32_t bit[32];
	unsigned j, x, b;

	for (b = 0; b < 32; b++)
		bit[b] = zeros(1u << b, n);
	for (j = 0; j < 4; j++)
		for (x = 0; x < 256; x++) {
			uint32_t v = 0;

			for (b = 0; b < 8; b++)
				if (x & (1u << b))
					v ^= bit[8 * j + b];
			t[j][x] = v;
		}
}

static void init(void)
{
	unsigned i, j;

	for (i = 0; i < 256; i++) {
		uint32_t c = i;

		for (j = 0; j < 8; j++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		tab[0][i] = c;
	}
	for (i = 0; i < 256; i++)
		for (j = 1; j < 8; j++)
			tab[j][i] = (tab[j - 1][i] >> 8) ^ tab[0][tab[j - 1][i] & 0xff];
	build_shift(shift_long, LONG_L);
	build_shift(shift_short, SHORT_L);
#if defined(__x86_64__)
	__builtin_cpu_init();
	have_hw = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t shift(uint32_t t[4][256], uint32_t c)
{
	return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^
	       t[3][c >> 24];
}

/* ---- slice-by-8 ---- */

static uint32_t sw_update(uint32_t c, const unsigned char *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		c = (c >> 8) ^ tab[0][(c ^ *p++) & 0xff];
		n--;
	}
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);	/* little-endian machines only (x86, arm64) */
		w ^= c;
		c = tab[7][w & 0xff] ^ tab[6][(w >> 8) & 0xff] ^
		    tab[5][(w >> 16) & 0xff] ^ tab[4][(w >> 24) & 0xff] ^
		    tab[3][(w >> 32) & 0xff] ^ tab[2][(w >> 40) & 0xff] ^
		    tab[1][(w >> 48) & 0xff] ^ tab[0][w >> 56];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ tab[0][(c ^ *p++) & 0xff];
	return c;
}

/* ---- SSE4.2 ---- */

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2")))
static uint32_t hw_chains(uint32_t c, const unsigned char **pp, size_t *np,
			  size_t L, uint32_t t[4][256])
{
	const unsigned char *p = *pp;
	size_t n = *np;

	while (n >= 3 * L) {
		uint64_t c0 = c, c1 = 0, c2 = 0;
		size_t i;

		for (i = 0; i < L; i += 8) {
			uint64_t a, b, d;

			memcpy(&a, p + i, 8);
			memcpy(&b, p + L + i, 8);
			memcpy(&d, p + 2 * L + i, 8);
			c0 = _mm_crc32_u64(c0, a);
			c1 = _mm_crc32_u64(c1, b);
			c2 = _mm_crc32_u64(c2, d);
		}
		c = shift(t, shift(t, (uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
		p += 3 * L;
		n -= 3 * L;
	}
	*pp = p;
	*np = n;
	return c;
}

__attribute__((target("sse4.2")))
static uint32_t hw_update(uint32_t c, const unsigned char *p, size_t n)
{
	while (n && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8(c, *p++);
		n--;
	}
	c = hw_chains(c, &p, &n, LONG_L, shift_long);
	c = hw_chains(c, &p, &n, SHORT_L, shift_short);
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = (uint32_t)_mm_crc32_u64(c, w);
		p += 8;
		n -= 8;
	}
	while (n--)
		c = _mm_crc32_u8(c, *p++);
	return c;
}
#endif

uint32_t pems_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&once, init);
	return ~sw_update(~crc, buf, len);
}

uint32_t pems_crc32c(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&once, init);
#if defined(__x86_64__)
	if (have_hw)
		return ~hw_update(~crc, buf, len);
#endif
	return ~sw_update(~crc, buf, len);
}

bool pems_crc32c_hw(void)
{
	pthread_once(&once, init);
	return have_hw;
}
