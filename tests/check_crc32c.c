/*
 * check_crc32c.c - CRC-32C (pems/crc32c.c): known vectors (RFC 3720
 * appendix B.4 and the "123456789" check value), hardware and table
 * paths agree at every length and alignment, and incremental updates
 * equal one-shot ones.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

static uint32_t both(const void *p, size_t n)
{
	uint32_t hw = pems_crc32c(0, p, n), sw = pems_crc32c_sw(0, p, n);

	ck_assert_uint_eq(hw, sw);
	return hw;
}

START_TEST(test_known_vectors)
{
	unsigned char b[32];
	int i;

	ck_assert_uint_eq(both("123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(both("", 0), 0);
	memset(b, 0, sizeof(b));
	ck_assert_uint_eq(both(b, 32), 0x8A9136AAu);
	memset(b, 0xff, sizeof(b));
	ck_assert_uint_eq(both(b, 32), 0x62A8AB43u);
	for (i = 0; i < 32; i++)
		b[i] = (unsigned char)i;
	ck_assert_uint_eq(both(b, 32), 0x46DD794Eu);
	for (i = 0; i < 32; i++)
		b[i] = (unsigned char)(31 - i);
	ck_assert_uint_eq(both(b, 32), 0x113FDB5Cu);
	printf("crc32c: %s path\n", pems_crc32c_hw() ? "sse4.2" : "table");
}
END_TEST

/* Lengths around the chain sizes (3*256, 3*4096) and odd alignments:
 * the paths must agree, and split updates must equal one shot. */
START_TEST(test_paths_agree)
{
	size_t max = 3 * 4096 * 3 + 100, len, off, cut;
	unsigned char *b = malloc(max + 16);
	unsigned seed = 12345;

	ck_assert_ptr_nonnull(b);
	for (len = 0; len < max + 16; len++) {
		seed = seed * 1103515245u + 12345u;
		b[len] = (unsigned char)(seed >> 16);
	}
	for (len = 0; len <= max; len += len < 800 ? 1 : 997)
		for (off = 0; off < 8; off += 3) {
			uint32_t one = both(b + off, len);

			for (cut = 0; cut <= len; cut += len / 3 + 1) {
				uint32_t c = pems_crc32c(0, b + off, cut);

				c = pems_crc32c(c, b + off + cut, len - cut);
				ck_assert_uint_eq(c, one);
			}
		}
	free(b);
}
END_TEST

/* A flipped bit anywhere in a 1 MiB block changes the checksum. */
START_TEST(test_bit_flip_detected)
{
	size_t n = 1 << 20, i;
	unsigned char *b = calloc(1, n);
	uint32_t ref;

	ck_assert_ptr_nonnull(b);
	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 7);
	ref = pems_crc32c(0, b, n);
	for (i = 0; i < n; i += 4093) {
		b[i] ^= 0x10;
		ck_assert_uint_ne(pems_crc32c(0, b, n), ref);
		b[i] ^= 0x10;
	}
	ck_assert_uint_eq(pems_crc32c(0, b, n), ref);
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("crc32c");
	TCase *tc = tcase_create("crc32c");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_known_vectors);
	tcase_add_test(tc, test_paths_agree);
	tcase_add_test(tc, test_bit_flip_detected);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
