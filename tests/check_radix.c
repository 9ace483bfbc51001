/*
 * check_radix.c - the local sort kernels against qsort.
 */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sort/radix.h"

#define REC 100

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

enum shape { RANDOM, EQUAL, SORTED, REVERSE, FEW, LOW_BITS, HIGH_BITS,
	     ALMOST_SORTED, ALMOST_REVERSE, NARROW, STRADDLE, NSHAPES };

static uint64_t key_of(enum shape sh, size_t i, size_t n, uint64_t *seed)
{
	switch (sh) {
	case RANDOM:
		return splitmix(seed);
	case EQUAL:
		return 0x0123456789abcdefULL;
	case SORTED:
		return (uint64_t)i * 0x10001ULL;
	case REVERSE:
		return (uint64_t)(n - i) * 0x10001ULL;
	case FEW:
		return (splitmix(seed) % 16) * 0x1111111111111111ULL;
	case LOW_BITS:
		return splitmix(seed) & 0xfff;
	case HIGH_BITS:
		return splitmix(seed) & 0xfff0000000000000ULL;
	case ALMOST_SORTED:	/* one key out of place near the end */
		return i == n - 2 ? 0 : (uint64_t)i * 0x10001ULL;
	case ALMOST_REVERSE:
		return i == n - 2 ? UINT64_MAX : (uint64_t)(n - i) * 0x10001ULL;
	case NARROW:		/* a sample sort bucket: 1/100 of the key space */
		return 0x3000000000000000ULL + splitmix(seed) % (UINT64_MAX / 100);
	case STRADDLE:		/* a narrow range across a power of two */
		return 0x7fffffffffff0000ULL + splitmix(seed) % 0x20000;
	default:
		return 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* @to: pems_radix_sort_u64_to (result in the second buffer) */
static void check_u64_as(enum shape sh, size_t n, bool to)
{
	uint64_t *a = malloc(n * 8 + 8), *t = malloc(n * 8 + 8);
	uint64_t *ref = malloc(n * 8 + 8), seed = n * 31 + sh, *res = to ? t : a;
	size_t i;

	ck_assert_ptr_nonnull(a);
	for (i = 0; i < n; i++)
		a[i] = ref[i] = key_of(sh, i, n, &seed);
	qsort(ref, n, 8, cmp_u64);
	if (to)
		pems_radix_sort_u64_to(a, t, n);
	else
		pems_radix_sort_u64(a, t, n);
	/* one assertion per array: Check logs every assertion it passes */
	for (i = 0; i < n && res[i] == ref[i]; i++)
		;
	ck_assert_msg(i == n, "shape %d n %zu%s: key %zu differs", sh, n,
		      to ? " (sort_to)" : "", i);
	free(a);
	free(t);
	free(ref);
}

static void check_u64(enum shape sh, size_t n)
{
	check_u64_as(sh, n, false);
	if (n <= 70000)		/* the same kernel: keep the test short */
		check_u64_as(sh, n, true);
}

static const size_t sizes[] = { 0, 1, 2, 3, 31, 32, 33, 100, 257, 4095,
				4097, 65536, 65537, 300000 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

START_TEST(u64_matches_qsort)
{
	size_t k;

	for (k = 0; k < NSIZES; k++)
		check_u64((enum shape)_i, sizes[k]);
}
END_TEST

START_TEST(u64_large_random)
{
	check_u64(RANDOM, 3000000);
	check_u64(FEW, 2000000);
}
END_TEST

/* ---- rec100: key from the shape, payload = input index (stability) ---- */

static void make_rec(uint8_t *r, enum shape sh, size_t i, size_t n,
		     uint64_t *seed)
{
	uint64_t k = key_of(sh, i, n, seed);
	uint64_t tail = sh == RANDOM ? splitmix(seed) : k * 7;
	uint32_t idx = (uint32_t)i;
	size_t b;

	for (b = 0; b < 8; b++)
		r[b] = (uint8_t)(k >> (56 - 8 * b));
	r[8] = (uint8_t)(tail >> 8);
	r[9] = (uint8_t)tail;
	if (sh == FEW)		/* equal prefixes, tails decide */
		r[9] = (uint8_t)(splitmix(seed) & 3);
	memset(r + 10, (int)(i & 0xff), REC - 10);
	memcpy(r + 10, &idx, sizeof(idx));
}

/* Reference order: key, then input index: what a stable sort gives. */
static int cmp_rec(const void *a, const void *b)
{
	uint32_t x, y;
	int c = memcmp(a, b, 10);

	if (c)
		return c;
	memcpy(&x, (const uint8_t *)a + 10, 4);
	memcpy(&y, (const uint8_t *)b + 10, 4);
	return x < y ? -1 : x > y;
}

static void ck_same_recs(const uint8_t *got, const uint8_t *ref, size_t n,
			 enum shape sh, const char *form)
{
	size_t i;

	for (i = 0; i < n && !memcmp(got + i * REC, ref + i * REC, REC); i++)
		;
	ck_assert_msg(i == n, "shape %d n %zu %s: record %zu differs", sh, n, form, i);
}

/* Every entry point on input @r (kept) against the stable reference. */
static void check_rec_forms(enum shape sh, const uint8_t *r, uint8_t *t,
			    const uint8_t *ref, size_t n)
{
	uint8_t *a = malloc(n * REC + 1), *items = malloc(n * 32 + 17);
	const uint32_t *order;
	size_t j, step = n / 3 + 1;

	ck_assert_ptr_nonnull(a);
	memcpy(a, r, n * REC);
	pems_radix_sort_rec100(a, t, n);
	ck_same_recs(a, ref, n, sh, "in place");
	if (n > 70000) {	/* the other forms share the kernel: keep it short */
		free(a);
		free(items);
		return;
	}
	memcpy(a, r, n * REC);
	pems_radix_sort_rec100_to(a, t, n);
	ck_same_recs(t, ref, n, sh, "sort_to");
	ck_assert_msg(!memcmp(a, r, n * REC), "sort_to changed its source");
	/* streaming: order on odd-aligned scratch, gathered in 3 pieces */
	order = pems_rec100_order(r, n, items + 1);
	memset(t, 0, n * REC);
	for (j = 0; j < n; j += step)
		pems_rec100_gather(r, order, j, n - j < step ? n - j : step, t + j * REC);
	ck_same_recs(t, ref, n, sh, "order+gather");
	free(a);
	free(items);
}

static void check_rec(enum shape sh, size_t n)
{
	uint8_t *r = malloc(n * REC + 1), *t = malloc(n * REC + 1);
	uint8_t *ref = malloc(n * REC + 1);
	uint64_t seed = n * 17 + sh;
	size_t i;

	ck_assert_ptr_nonnull(r);
	for (i = 0; i < n; i++)
		make_rec(r + i * REC, sh, i, n, &seed);
	memcpy(ref, r, n * REC);
	qsort(ref, n, REC, cmp_rec);
	check_rec_forms(sh, r, t, ref, n);
	free(r);
	free(t);
	free(ref);
}

START_TEST(rec100_matches_stable_reference)
{
	size_t k;

	for (k = 0; k < NSIZES; k++)
		check_rec((enum shape)_i, sizes[k]);
}
END_TEST

START_TEST(rec100_equal_keys_keep_input_order)
{
	size_t n = 5000, i;
	uint8_t *r = malloc(n * REC), *t = malloc(n * REC);
	uint32_t idx;

	for (i = 0; i < n; i++) {
		memset(r + i * REC, 0xab, 10);
		idx = (uint32_t)i;
		memset(r + i * REC + 10, 0, REC - 10);
		memcpy(r + i * REC + 10, &idx, 4);
	}
	pems_radix_sort_rec100(r, t, n);
	for (i = 0; i < n; i++) {
		memcpy(&idx, r + i * REC + 10, 4);
		if (idx != i)
			break;
	}
	ck_assert_msg(i == n, "record %zu moved past an equal key", i);
	free(r);
	free(t);
}
END_TEST

/* Unaligned buffers: the kernel must not assume malloc alignment. */
START_TEST(rec100_unaligned_buffers)
{
	size_t n = 1000, i;
	uint8_t *rb = malloc(n * REC + 3), *tb = malloc(n * REC + 5);
	uint8_t *r = rb + 3, *t = tb + 5, *ref = malloc(n * REC);
	uint64_t seed = 99;

	for (i = 0; i < n; i++)
		make_rec(r + i * REC, RANDOM, i, n, &seed);
	memcpy(ref, r, n * REC);
	qsort(ref, n, REC, cmp_rec);
	pems_radix_sort_rec100(r, t, n);
	ck_assert(memcmp(r, ref, n * REC) == 0);
	free(rb);
	free(tb);
	free(ref);
}
END_TEST

static Suite *radix_suite(void)
{
	Suite *s = suite_create("radix");
	TCase *u = tcase_create("u64_sorts_like_qsort");
	TCase *r = tcase_create("rec100_sorts_stably");

	tcase_set_timeout(u, 120);
	tcase_set_timeout(r, 120);
	tcase_add_loop_test(u, u64_matches_qsort, 0, NSHAPES);
	tcase_add_test(u, u64_large_random);
	tcase_add_loop_test(r, rec100_matches_stable_reference, 0, NSHAPES);
	tcase_add_test(r, rec100_equal_keys_keep_input_order);
	tcase_add_test(r, rec100_unaligned_buffers);
	suite_add_tcase(s, u);
	suite_add_tcase(s, r);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(radix_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
