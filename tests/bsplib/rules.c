/*
 * rules.c - the rules of BSPlib, checked by a program that keeps its pid
 * and nprocs in file-scope globals and its registered areas in globals
 * too (as programs for process-based BSPlibs do).  Each rule is checked
 * by every processor in the supersteps it needs; processor 0 prints the
 * rules that failed anywhere.  Typed signatures: builds in both
 * dialects.  argv[2]: milliseconds to sleep per superstep (so that a
 * test can kill the run between checkpoints), repeated argv[3] times.
 *
 *   ./rules P [ms [rounds]]    "rules: p=P rounds=R ok" or the failures
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bsp.h>

#define MAXP 1024

enum {
	R_REG_NEXT_SYNC, R_GET_BEFORE_PUT, R_PUT_BUFFERED, R_SEND_BUFFERED, R_TAGSIZE_NEXT_SYNC,
	R_QSIZE_TAG_MOVE, R_POP_MIDDLE, R_HP, R_ALLTOALL, NRULES };
static const char *const rule_name[NRULES] = {
	"registration takes effect at the next sync", "gets are served before puts",
	"bsp_put copies at call time", "bsp_send copies at call time",
	"the tag size takes effect at the next sync", "bsp_qsize / bsp_get_tag / bsp_move",
	"bsp_pop_reg of a middle registration", "bsp_hpput / bsp_hpget",
	"all-to-all at full p",
};

static bsp_pid_t s, p;		/* this processor and their number */
static long fails[NRULES];
static long x, y, a[4], b[4], c[4], all[MAXP];
static long src;
static int ms;

static void fail(int rule, int ok)
{
	if (!ok)
		fails[rule]++;
}

static void sync_(void)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	if (ms)
		nanosleep(&ts, NULL);
	bsp_sync();
}

static bsp_pid_t next(void)
{
	return (s + 1) % p;
}

static bsp_pid_t prev(void)
{
	return (s + p - 1) % p;
}

static void registration_and_drma(void)
{
	long v;

	x = 100 + (long)s;
	bsp_push_reg(&x, sizeof(x));
	sync_();
	/* registered now; a get and a put to the same x in one superstep:
	 * the get sees the value before the put */
	v = 1000 + (long)s;
	bsp_put(next(), &v, &x, 0, sizeof(v));
	bsp_get(next(), &x, 0, &y, sizeof(y));
	v = -1;	/* buffered: the put took 1000 + s already */
	sync_();
	fail(R_REG_NEXT_SYNC, x == 1000 + (long)prev());
	fail(R_GET_BEFORE_PUT, y == 100 + (long)next());
	fail(R_PUT_BUFFERED, x == 1000 + (long)prev());
	/* hp variants: same semantics here */
	src = 5000 + (long)s;
	bsp_hpput(next(), &src, &x, 0, sizeof(src));
	sync_();
	fail(R_HP, x == 5000 + (long)prev());
	bsp_pop_reg(&x);
	sync_();
}

static void hpget_registered(void)
{
	bsp_push_reg(&src, sizeof(src));
	sync_();
	src = 7000 + (long)s;
	bsp_hpget(prev(), &src, 0, &y, sizeof(y));
	sync_();
	fail(R_HP, y == 7000 + (long)prev());
	bsp_pop_reg(&src);
	sync_();
}

static void pop_middle(void)
{
	long v = 42 + (long)s;

	bsp_push_reg(a, sizeof(a));
	bsp_push_reg(b, sizeof(b));
	bsp_push_reg(c, sizeof(c));
	sync_();
	bsp_pop_reg(b);
	sync_();
	/* a and c keep their places although b went */
	bsp_put(next(), &v, a, sizeof(long), sizeof(v));
	bsp_put(next(), &v, c, 2 * sizeof(long), sizeof(v));
	sync_();
	fail(R_POP_MIDDLE, a[1] == 42 + (long)prev() && c[2] == 42 + (long)prev() && b[1] == 0);
	bsp_pop_reg(a);
	bsp_pop_reg(c);
	sync_();
}

static void bsmp(void)
{
	bsp_size_t tag = sizeof(long), status;
	bsp_nprocs_t n;
	bsp_size_t bytes;
	long t, payload[2];

	/* the tag size set here applies from the next superstep on */
	bsp_set_tagsize(&tag);
	fail(R_TAGSIZE_NEXT_SYNC, tag == 0);
	payload[0] = (long)s;
	payload[1] = 9;
	bsp_send(next(), NULL, payload, sizeof(payload));
	payload[1] = -9;	/* buffered */
	sync_();
	bsp_get_tag(&status, &t);
	fail(R_TAGSIZE_NEXT_SYNC, status == (bsp_size_t)sizeof(payload));
	bsp_move(payload, sizeof(payload));
	fail(R_SEND_BUFFERED, payload[0] == (long)prev() && payload[1] == 9);
	/* now with tags: p messages of growing size to the next one */
	for (t = 0; t < 3; t++) {
		payload[0] = t;
		bsp_send(next(), &t, payload, (bsp_size_t)((t + 1) % 3 * sizeof(long)));
	}
	sync_();
	bsp_qsize(&n, &bytes);
	fail(R_QSIZE_TAG_MOVE, n == 3 && bytes == (bsp_size_t)(3 * sizeof(long)));
	for (t = 0; t < 3; t++) {
		long tg = -1;

		bsp_get_tag(&status, &tg);
		fail(R_QSIZE_TAG_MOVE, tg == t && status == (bsp_size_t)((t + 1) % 3 * sizeof(long)));
		payload[0] = -1;
		bsp_move(payload, sizeof(payload));
		fail(R_QSIZE_TAG_MOVE, status == 0 || payload[0] == t);
	}
	bsp_get_tag(&status, &t);
	fail(R_QSIZE_TAG_MOVE, status == (bsp_size_t)-1);
	tag = 0;
	bsp_set_tagsize(&tag);
	sync_();
}

static void alltoall(void)
{
	bsp_pid_t t;
	long v = 1 + (long)s;

	bsp_push_reg(all, sizeof(all));
	sync_();
	for (t = 0; t < p; t++)
		bsp_put(t, &v, all, s * sizeof(long), sizeof(long));
	sync_();
	for (t = 0; t < p; t++)
		fail(R_ALLTOALL, all[t] == 1 + (long)t);
	bsp_pop_reg(all);
	sync_();
}

int main(int argc, char **argv)
{
	bsp_pid_t P = argc > 1 ? (bsp_pid_t)atoi(argv[1]) : bsp_nprocs(), t;
	int rounds = argc > 3 ? atoi(argv[3]) : 1, r, i, any = 0;
	long *res;

	ms = argc > 2 ? atoi(argv[2]) : 0;
	if (P > MAXP || P > bsp_nprocs()) {
		printf("Sorry, at most %d processors.\n", MAXP);
		return 1;
	}
	bsp_begin(P);
	s = bsp_pid();
	p = bsp_nprocs();
	for (r = 0; r < rounds; r++) {
		registration_and_drma();
		hpget_registered();
		pop_middle();
		bsmp();
		alltoall();
		if (s != bsp_pid() || p != bsp_nprocs())
			fails[R_REG_NEXT_SYNC]++;
	}
	res = calloc((size_t)p * NRULES, sizeof(long));
	bsp_push_reg(res, p * NRULES * sizeof(long));
	sync_();
	bsp_put(0, fails, res, s * NRULES * sizeof(long), sizeof(fails));
	sync_();
	if (s == 0) {
		for (i = 0; i < NRULES; i++) {
			long n = 0;

			for (t = 0; t < p; t++)
				n += res[t * NRULES + i];
			if (n) {
				printf("rules: p=%u FAILED %s (%ld)\n", (unsigned)p, rule_name[i], n);
				any = 1;
			}
		}
		if (!any)
			printf("rules: p=%u rounds=%d ok\n", (unsigned)p, rounds);
	}
	bsp_end();
	return 0;
}
