/*
 * match98.c - maximal weighted matching of a graph by locally dominant
 * edges, with BSMP (bsp_send / bsp_qsize / bsp_get_tag / bsp_move) in the
 * BSPlib-1998 int dialect.  Vertex u belongs to processor u % p; the
 * graph is the circulant graph on n vertices with offsets 1, D1 and D2,
 * edge weights distinct (a hash, ties broken by the endpoints).  Every
 * unmatched vertex proposes to its heaviest unmatched neighbour; mutual
 * proposals match; matched vertices tell their neighbours.  The result
 * equals the sequential greedy matching by decreasing weight.
 *
 *   ./match98 P n       prints "match: p=P n=n pairs=K sum=X"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <bsp.h>

#define D1 7
#define D2 31
#define PROPOSE 1
#define MATCHED 2

static uint64_t mix(uint64_t x)
{
	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 32);
}

/* weight of edge {u, v}: compare (w, min, max) lexicographically */
static int heavier(int n, int u, int v, int a, int b)
{
	int lu = u < v ? u : v, hu = u < v ? v : u, la = a < b ? a : b, ha = a < b ? b : a;
	uint64_t wu = mix((uint64_t)lu * n + hu), wa = mix((uint64_t)la * n + ha);

	if (wu != wa)
		return wu > wa;
	return lu != la ? lu > la : hu > ha;
}

static int neighbours(int n, int u, int *nb)
{
	static const int off[3] = { 1, D1, D2 };
	int i, j, k = 0;

	for (i = 0; i < 3; i++) {
		int c[2] = { (u + off[i]) % n, (u - off[i] % n + n) % n };

		for (j = 0; j < 2; j++) {
			int dup = c[j] == u, m;

			for (m = 0; m < k; m++)
				dup |= nb[m] == c[j];
			if (!dup)
				nb[k++] = c[j];
		}
	}
	return k;
}

int main(int argc, char **argv)
{
	int P = argc > 1 ? atoi(argv[1]) : 4, n = argc > 2 ? atoi(argv[2]) : 1000;
	int p, s, nl, i, j, k, tagsize, nmsg, nbytes, status, tag, msg[2], active, t;
	int *mate, *cand, *nb, *deg, *counts;
	uint64_t sum = 0, *sums;
	long pairs = 0;

	if (P > bsp_nprocs()) {
		printf("Sorry, only %d processors.\n", bsp_nprocs());
		exit(1);
	}
	bsp_begin(P);
	p = bsp_nprocs();
	s = bsp_pid();
	nl = (n + p - s - 1) / p;	/* vertices s, s + p, ... */
	mate = malloc((nl + 1) * sizeof(int));
	cand = malloc((nl + 1) * sizeof(int));
	deg = malloc((nl + 1) * sizeof(int));
	nb = malloc((nl + 1) * 6 * sizeof(int));
	counts = malloc(p * sizeof(int));
	sums = malloc(p * 2 * sizeof(uint64_t));
	for (i = 0; i < nl; i++) {
		mate[i] = -1;
		deg[i] = neighbours(n, i * p + s, nb + 6 * i);
	}
	bsp_push_reg(counts, p * sizeof(int));
	bsp_push_reg(sums, p * 2 * sizeof(uint64_t));
	tagsize = sizeof(int);
	bsp_set_tagsize(&tagsize);
	bsp_sync();

	for (;;) {
		/* propose to the heaviest neighbour not known to be matched */
		active = 0;
		for (i = 0; i < nl; i++) {
			int u = i * p + s, best = -1;

			cand[i] = -1;
			if (mate[i] >= 0)
				continue;
			for (j = 0; j < deg[i]; j++) {
				int v = nb[6 * i + j];

				if (v >= 0 && (best < 0 || heavier(n, u, v, u, best)))
					best = v;
			}
			if (best < 0)
				continue;
			active++;
			cand[i] = best;
			tag = PROPOSE;
			msg[0] = u;
			msg[1] = best;
			bsp_send(best % p, &tag, msg, sizeof(msg));
		}
		for (t = 0; t < p; t++)
			bsp_put(t, &active, counts, s * sizeof(int), sizeof(int));
		bsp_sync();
		for (t = 0, k = 0; t < p; t++)
			k += counts[t];
		if (k == 0)
			break;
		/* mutual proposals match; tell the neighbours */
		bsp_qsize(&nmsg, &nbytes);
		if (nbytes != nmsg * (int)sizeof(msg))
			bsp_abort("match: bsp_qsize says %d messages of %d bytes", nmsg, nbytes);
		for (k = 0; k < nmsg; k++) {
			bsp_get_tag(&status, &tag);
			if (status != (int)sizeof(msg) || tag != PROPOSE)
				bsp_abort("match: message of %d bytes, tag %d", status, tag);
			bsp_move(msg, sizeof(msg));
			i = msg[1] / p;
			if (cand[i] == msg[0])
				mate[i] = msg[0];
		}
		bsp_get_tag(&status, &tag);
		if (status != -1)
			bsp_abort("match: queue not empty after %d messages", nmsg);
		for (i = 0; i < nl; i++) {
			if (mate[i] < 0 || cand[i] < 0)
				continue;
			tag = MATCHED;
			msg[0] = i * p + s;
			for (j = 0; j < deg[i]; j++) {
				msg[1] = nb[6 * i + j];
				if (msg[1] >= 0)
					bsp_send(msg[1] % p, &tag, msg, sizeof(msg));
			}
			cand[i] = -1;
		}
		bsp_sync();
		while (bsp_qsize(&nmsg, &nbytes), nmsg > 0) {
			bsp_get_tag(&status, &tag);
			bsp_move(msg, sizeof(msg));
			i = msg[1] / p;
			for (j = 0; j < deg[i]; j++)
				if (nb[6 * i + j] == msg[0])
					nb[6 * i + j] = -1;
		}
	}
	for (i = 0; i < nl; i++) {
		int u = i * p + s;

		if (mate[i] > u) {
			pairs++;
			sum += mix((uint64_t)u * n + mate[i]);
		}
	}
	sums[2 * s] = (uint64_t)pairs;
	sums[2 * s + 1] = sum;
	bsp_put(0, sums + 2 * s, sums, 2 * s * sizeof(uint64_t), 2 * sizeof(uint64_t));
	bsp_sync();
	if (s == 0) {
		pairs = 0;
		sum = 0;
		for (t = 0; t < p; t++) {
			pairs += (long)sums[2 * t];
			sum += sums[2 * t + 1];
		}
		printf("match: p=%d n=%d pairs=%ld sum=%016llx\n", p, n, pairs,
		       (unsigned long long)sum);
	}
	bsp_end();
	return 0;
}
