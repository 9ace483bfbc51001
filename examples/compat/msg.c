/*
 * msg.c - bulk synchronous message passing with tags: a distributed
 * "group by key and sum".  Every process generates items (key, value)
 * and sends each one to the owner of its key (key mod p) with bsp_send,
 * the key as the tag.  Owners drain their queue with bsp_qsize,
 * bsp_get_tag and bsp_move and add up the values per key; then they send
 * one message per key to process 0 (tag = key, payload = sum), which
 * reads them with bsp_hpmove and checks every sum against a sequential
 * computation.  Only <bsp.h>, bsp_init + an SPMD function, plain malloc.
 *
 *   ./msg [items]       (default 50000 items over 1000 keys)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsp.h>

#define NKEYS 1000u

static long n_items = 50000;

static uint32_t item_key(long i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	return (uint32_t)(x % NKEYS);
}

static int64_t item_value(long i)
{
	return (int64_t)(i % 1000) - 300;
}

static void spmd(void)
{
	bsp_begin(bsp_nprocs());
	bsp_pid_t p = bsp_nprocs(), s = bsp_pid();
	bsp_size_t tagsize = sizeof(uint32_t), status;
	bsp_nprocs_t npackets;
	bsp_size_t nbytes;
	int64_t *sums = calloc(NKEYS, sizeof(int64_t)), value;
	uint32_t key;
	long i, received = 0;
	int ok = 1;

	if (!sums)
		bsp_abort("msg: out of memory\n");
	bsp_set_tagsize(&tagsize);
	bsp_sync();	/* the tag size takes effect here */

	/* items s, s+p, s+2p, ... go to the owner of their key */
	for (i = s; i < n_items; i += p) {
		key = item_key(i);
		value = item_value(i);
		bsp_send(key % p, &key, &value, sizeof(value));
	}
	bsp_sync();

	bsp_qsize(&npackets, &nbytes);
	if (nbytes != (bsp_size_t)npackets * sizeof(int64_t))
		ok = 0;
	for (;;) {
		bsp_get_tag(&status, &key);
		if (status == (bsp_size_t)-1)
			break;
		if (status != sizeof(int64_t) || key >= NKEYS || key % p != s)
			ok = 0;
		bsp_move(&value, sizeof(value));
		if (key < NKEYS)
			sums[key] += value;
		received++;
	}
	if (received != (long)npackets)
		ok = 0;

	/* the owners report to process 0: one message per owned key */
	for (key = s; key < NKEYS; key += p)
		bsp_send(0, &key, &sums[key], sizeof(int64_t));
	if (!ok)	/* tell process 0 */
		bsp_send(0, &(uint32_t){ UINT32_MAX }, NULL, 0);
	bsp_sync();

	if (s == 0) {
		int64_t *want = calloc(NKEYS, sizeof(int64_t));
		unsigned seen = 0;
		void *tagp, *payload;
		bsp_size_t len;

		if (!want)
			bsp_abort("msg: out of memory\n");
		for (i = 0; i < n_items; i++)
			want[item_key(i)] += item_value(i);
		bsp_qsize(&npackets, &nbytes);
		while ((len = bsp_hpmove(&tagp, &payload)) != (bsp_size_t)-1) {
			memcpy(&key, tagp, sizeof(key));
			if (key == UINT32_MAX || key >= NKEYS || len != sizeof(int64_t)) {
				ok = 0;
				continue;
			}
			memcpy(&value, payload, sizeof(value));
			if (value != want[key])
				ok = 0;
			seen++;
		}
		ok &= seen == NKEYS && npackets == NKEYS;
		printf("msg: p=%u items=%ld keys=%u messages=%u %s\n", p, n_items, NKEYS, npackets,
		       ok ? "ok" : "WRONG");
		free(want);
	}
	tagsize = 0;
	bsp_set_tagsize(&tagsize);
	bsp_sync();
	free(sums);
	bsp_end();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		n_items = atol(argv[1]);
	bsp_init(spmd, argc, argv);
	spmd();
	return 0;
}
