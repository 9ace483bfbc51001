/* bench/cpu_probe.c - a fixed amount of single-threaded work, no I/O:
 * how fast this machine is at this moment (bench/variance.sh runs it
 * between pems runs; bench/results/variance/).
 *
 *   cpu_probe [compute|mem|fault|thp|warm|all]...   (default: all)
 *
 * compute  a multiply-xorshift hash over a 16 KiB array, 2^28 steps: the
 *          core's speed (frequency, an SMT sibling on the host), no
 *          memory traffic beyond L1
 * mem      an 8-bit LSD radix sort of the same 16M u64 keys (128 MiB, and
 *          128 MiB of scratch), both buffers touched before the clock
 *          starts: memory bandwidth, caches and the TLB over memory that
 *          is already mapped (MADV_HUGEPAGE, as pems's I/O buffers)
 * fault    first touch of a fresh 512 MiB anonymous mapping (4 KiB
 *          pages, MADV_NOHUGEPAGE), one write per page, unmapped, then the
 *          same again at once (the pages the first pass freed), then once
 *          more after a 3 s sleep: what a page fault plus the zeroing of
 *          a page costs, in the guest and on the host
 * thp      the same with MADV_HUGEPAGE: 2 MiB faults, each on a free 2 MiB
 *          block of the guest (the unit its free-page reporting hands
 *          back to the host)
 * warm     2 GiB in 2 MiB pages touched and unmapped (not part of all):
 *          the next process that faults huge pages gets these just-freed,
 *          still host-backed blocks
 *
 * One line of key=value pairs on stdout: wall seconds (_s) and this
 * thread's user and system CPU seconds (_usr, _sys) of each part;
 * mem_thp_kib is the AnonHugePages of the process after the mem part. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

struct mark {
	double wall, usr, sys;
};

static double tv(struct timeval t) { return (double)t.tv_sec + (double)t.tv_usec * 1e-6; }

static struct mark now(void)
{
	struct timespec ts;
	struct rusage ru;
	struct mark m;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	getrusage(RUSAGE_THREAD, &ru);
	m.wall = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
	m.usr = tv(ru.ru_utime);
	m.sys = tv(ru.ru_stime);
	return m;
}

static void report(const char *name, struct mark a, struct mark b)
{
	printf(" %s_s=%.4f %s_usr=%.4f %s_sys=%.4f", name, b.wall - a.wall, name, b.usr - a.usr,
	       name, b.sys - a.sys);
}

static uint64_t sink;

static void compute(void)
{
	static uint64_t a[2048];
	uint64_t h = 0x9e3779b97f4a7c15ull;
	struct mark t0, t1;
	unsigned i;

	for (i = 0; i < 2048; i++)
		a[i] = i * 0x2545f4914f6cdd1dull;
	t0 = now();
	for (uint64_t s = 0; s < (1ull << 28); s++) {
		uint64_t *x = &a[s & 2047];

		h ^= *x;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 29;
		*x = h;
	}
	t1 = now();
	sink += h;
	report("compute", t0, t1);
}

static void *map(size_t n, int advice)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("cpu_probe: mmap");
		exit(1);
	}
	madvise(p, n, advice);
	return p;
}

static long thp_kib(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "AnonHugePages: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static void mem(void)
{
	const size_t n = (size_t)16 << 20, bytes = n * sizeof(uint64_t);
	uint64_t *k = map(bytes, MADV_HUGEPAGE), *t = map(bytes, MADV_HUGEPAGE), x = 88172645463325252ull;
	struct mark t0, t1;
	size_t i;

	for (i = 0; i < n; i++) {	/* xorshift64: the same keys every run */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k[i] = x;
	}
	memset(t, 0, bytes);
	t0 = now();
	for (unsigned sh = 0; sh < 64; sh += 8) {
		size_t cnt[256] = { 0 }, pos = 0;

		for (i = 0; i < n; i++)
			cnt[(k[i] >> sh) & 255]++;
		for (unsigned d = 0; d < 256; d++) {
			size_t c = cnt[d];

			cnt[d] = pos;
			pos += c;
		}
		for (i = 0; i < n; i++)
			t[cnt[(k[i] >> sh) & 255]++] = k[i];
		uint64_t *s = k;

		k = t;
		t = s;
	}
	t1 = now();
	for (i = 1; i < n; i++)
		if (k[i - 1] > k[i]) {
			fprintf(stderr, "cpu_probe: radix sort failed\n");
			exit(1);
		}
	report("mem", t0, t1);
	printf(" mem_thp_kib=%ld", thp_kib());
	munmap(k, bytes);
	munmap(t, bytes);
}

static void touch_n(const char *name, int advice, size_t bytes)
{
	struct mark t0, t1;
	char *p;

	t0 = now();
	p = map(bytes, advice);
	for (size_t i = 0; i < bytes; i += 4096)
		p[i] = 1;
	munmap(p, bytes);
	t1 = now();
	report(name, t0, t1);
}

/* NAME1, NAME2, NAME3: 512 MiB first touched with @advice, again at
 * once (on the pages the first pass freed), again after 3 s idle.
 * MADV_NOHUGEPAGE ("fault"): a 4 KiB fault plus zeroing, in the guest
 * and on the host; MADV_HUGEPAGE ("thp", as pems's buffers and heaps):
 * each fault takes a free 2 MiB block, the unit the guest reports. */
static void touch3(const char *name, int advice)
{
	char n[16];

	for (int r = 1; r <= 3; r++) {
		if (r == 3) {
			fflush(stdout);
			sleep(3);
		}
		snprintf(n, sizeof(n), "%s%d", name, r);
		touch_n(n, advice, (size_t)512 << 20);
	}
}

int main(int argc, char **argv)
{
	int all = argc < 2;

	printf("probe");
	for (int i = 1; i <= argc - 1 || (all && i == 1); i++) {
		const char *w = all ? "all" : argv[i];

		if (!strcmp(w, "compute") || !strcmp(w, "all"))
			compute();
		if (!strcmp(w, "mem") || !strcmp(w, "all"))
			mem();
		if (!strcmp(w, "fault") || !strcmp(w, "all"))
			touch3("fault", MADV_NOHUGEPAGE);
		if (!strcmp(w, "thp") || !strcmp(w, "all"))
			touch3("thp", MADV_HUGEPAGE);
		if (!strcmp(w, "warm"))	/* not in all: 2 GiB in 2 MiB pages, freed */
			touch_n("warm", MADV_HUGEPAGE, (size_t)2 << 30);
	}
	printf(" sink=%llu\n", (unsigned long long)(sink & 1));
	return 0;
}
