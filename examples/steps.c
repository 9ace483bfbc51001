/* steps.c - a BSPlib program of many supersteps that uses every kind of
 * communication (bsp_put into a registered stack array, bsp_get, BSMP
 * messages, a reduction) and keeps state in locals across bsp_sync; VP 0
 * prints one digest at the end.  The resume tests kill it and continue it
 * from a checkpoint (tests/test_resume.sh):
 *
 *   PEMS_CHECKPOINT_DIR=ck PEMS_CHECKPOINT_EVERY=1 build/examples/steps 60
 *   ... kill -9 ...;  build/pems-run resume ck
 *
 * argv[1]: supersteps (default 40); argv[2]: milliseconds of "work" per
 * VP and superstep (default 5); argv[3]: KiB of bulk data each VP also
 * sends its right neighbour per superstep (default 0; full message
 * chunks, which a roomy budget keeps in memory across the barrier). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <bsp.h>
#include <pems.h>

static int steps = 40, work_ms = 5;
static size_t bulk;	/* bytes */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

static void work(void)
{
	struct timespec ts = { 0, (long)work_ms * 1000000 };

	nanosleep(&ts, NULL);
}

static void spmd(void)
{
	bsp_begin(bsp_nprocs());
	bsp_pid_t p = bsp_nprocs(), s = bsp_pid();
	uint64_t inbox[4] = { 0 }, fetched = 0, digest = mix(s + 1), total = 0;
	uint64_t *big = pems_malloc(64 << 10);	/* context memory that spills */
	uint64_t *blk = bulk ? pems_malloc(bulk) : NULL;
	int step;
	size_t i;

	for (i = 0; i < (64 << 10) / sizeof(*big); i++)
		big[i] = mix(s * 131 + i);
	bsp_push_reg(inbox, sizeof(inbox));
	bsp_push_reg(&digest, sizeof(digest));
	bsp_set_tagsize(&(bsp_size_t){ sizeof(uint32_t) });
	bsp_sync();
	for (step = 0; step < steps; step++) {
		bsp_pid_t right = (s + 1) % p, far = (s + (bsp_pid_t)step) % p;
		uint32_t tag = (uint32_t)step;
		uint64_t val = digest ^ big[step % 1024];
		bsp_nprocs_t n;
		bsp_size_t bytes;

		work();
		bsp_put(right, &val, inbox, (step % 4) * sizeof(uint64_t), sizeof(val));
		bsp_get(far, &digest, 0, &fetched, sizeof(fetched));
		bsp_send(far, &tag, &val, sizeof(val));
		if (bulk) {
			uint32_t btag = tag | 1u << 31;

			for (i = 0; i < bulk / sizeof(*blk); i++)
				blk[i] = mix(val + i);
			bsp_send(right, &btag, blk, bulk);
		}
		bsp_sync();
		bsp_qsize(&n, &bytes);
		while (n--) {
			uint32_t t;
			uint64_t m = 0;
			bsp_size_t len;

			bsp_get_tag(&len, &t);
			if (len == (bsp_size_t)bulk && (t >> 31)) {
				bsp_move(blk, bulk);
				for (i = 0; i < bulk / sizeof(*blk); i++)
					m ^= mix(blk[i] + i);
			} else {
				bsp_move(&m, sizeof(m));
			}
			digest = mix(digest ^ m ^ t);
		}
		digest = mix(digest + inbox[step % 4] + fetched);
		big[(step * 7) % 1024] ^= digest;
		if (step % 5 == 4) {
			uint64_t sum;

			pems_allreduce(&digest, &sum, 1, PEMS_UINT64, PEMS_SUM);
			digest = mix(digest ^ sum);
		}
	}
	pems_allreduce(&digest, &total, 1, PEMS_UINT64, PEMS_SUM);
	if (s == 0)
		printf("steps: %d supersteps on %u VPs, digest %016llx\n", steps, p,
		       (unsigned long long)total);
	pems_free(blk);
	pems_free(big);
	bsp_end();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		steps = atoi(argv[1]);
	if (argc > 2)
		work_ms = atoi(argv[2]);
	if (argc > 3)
		bulk = (size_t)atoi(argv[3]) << 10;
	bsp_init(spmd, argc, argv);
	spmd();
	return 0;
}
