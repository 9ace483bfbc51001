/*
 * check_errors.c - every misuse of the BSPlib surface and every bad
 * configuration ends the program with an exact message and exit status 1:
 * never a crash (signal), never a hang, never a silent wrong result.
 *
 * Each scenario runs in a forked child (spmd_test.h: run_child) with
 * stdout and stderr captured and a deadline; the test compares stderr
 * with the expected message ({ptr}, {num}, {any} are wildcards, see
 * msg_match), the exit status, and, for pems_spmd start failures, its
 * return value (the child prints "rc=N" and exits 1 when N < 0).
 *
 * Scenarios that a known runtime bug breaks carry .known (file, cause);
 * they report "XFAIL" on stdout and pass unless PEMS_TEST_STRICT=1.
 */
#include "spmd_test.h"

#include <sched.h>
#include <sys/mount.h>

#include "bsp.h"
#include "pems.h"

#define DEADLINE 30	/* seconds per scenario */

static bool strict(void)
{
	const char *s = getenv("PEMS_TEST_STRICT");

	return s && *s && strcmp(s, "0");
}

/* ---- configurations used by the scenarios ---- */

static const struct spmd_cfg c2 = { "v2-k1", 2, 1, 1 * MiB, 64 * MiB, PEMS_IO_KIND_SYNC, false };
static const struct spmd_cfg c3 = { "v3-k2", 3, 2, 1 * MiB, 64 * MiB, PEMS_IO_KIND_URING, false };
static const struct spmd_cfg c4 = { "v4-k1", 4, 1, 1 * MiB, 64 * MiB, PEMS_IO_KIND_AIO, false };
static const struct spmd_cfg c4k2 = { "v4-k2", 4, 2, 1 * MiB, 64 * MiB, PEMS_IO_KIND_URING, false };
static const struct spmd_cfg c7 = { "v7-k2", 7, 2, 1 * MiB, 64 * MiB, PEMS_IO_KIND_URING, false };

/* ---- child bodies ---- */

struct scenario {
	const char *name;
	void (*child)(const struct scenario *s);	/* runs in the child */
	void (*fn)(void *);		/* SPMD function (library form) */
	void (*spmd)(void);		/* SPMD function (bsp_init form) */
	const struct spmd_cfg *cfg;
	const char *err;	/* expected stderr (msg_match pattern) */
	const char *out;	/* expected stdout pattern, or NULL */
	const char *known;	/* known bug (file: cause), or NULL */
};

/* library form: configure, pems_spmd, report its result */
static void run_lib(const struct scenario *s)
{
	int rc;

	if (spmd_configure(s->cfg))
		exit(125);
	rc = pems_spmd(NULL, s->fn, NULL);
	printf("rc=%d\n", rc);
	exit(rc < 0 ? 1 : 0);
}

/* bsp_init form, as BSPlib programs are written */
static void run_begin(const struct scenario *s)
{
	if (s->cfg && spmd_configure(s->cfg))
		exit(125);
	bsp_init(s->spmd, 0, NULL);
	s->spmd();
	exit(0);
}

/* plain call outside any SPMD section */
static void run_plain(const struct scenario *s)
{
	s->fn(NULL);
	exit(0);
}

static void child_main(void *arg)
{
	const struct scenario *s = arg;

	s->child(s);
}

static void check_scenario(const struct scenario *s)
{
	struct child_result cr;
	bool ok;
	char why[CHILD_OUT_MAX * 2 + 512];

	run_child(child_main, (void *)s, DEADLINE, &cr);
	if (cr.timed_out)
		snprintf(why, sizeof(why), "%s: hung (killed after %d s); stderr: %s", s->name, DEADLINE, cr.err);
	else if (cr.signaled)
		snprintf(why, sizeof(why), "%s: crashed with signal %d (%s); stderr: %s", s->name, cr.sig,
			 strsignal(cr.sig), cr.err);
	else if (!cr.exited || cr.status != 1)
		snprintf(why, sizeof(why), "%s: exit status %d, expected 1; stdout: %s stderr: %s", s->name,
			 cr.status, cr.out, cr.err);
	else if (!msg_match(s->err, cr.err))
		snprintf(why, sizeof(why), "%s: stderr\n  %s\ndoes not match\n  %s", s->name, cr.err, s->err);
	else if (s->out && !msg_match(s->out, cr.out))
		snprintf(why, sizeof(why), "%s: stdout\n  %s\ndoes not match\n  %s", s->name, cr.out, s->out);
	else
		why[0] = '\0';
	ok = why[0] == '\0';
	if (s->known) {
		if (ok)
			printf("XPASS %s: fixed? remove the known-bug mark (%s)\n", s->name, s->known);
		else if (!strict())
			printf("XFAIL %s: known bug: %s\n  (%s)\n", s->name, s->known, why);
		else
			ck_abort_msg("%s [known bug: %s]", why, s->known);
		return;
	}
	ck_assert_msg(ok, "%s", why);
}

/* ================= outside the SPMD section ================= */

static void call_sync(void *arg)
{
	(void)arg;
	bsp_sync();
}

static void call_pid(void *arg)
{
	(void)arg;
	printf("%u\n", bsp_pid());
}

static void call_put(void *arg)
{
	uint64_t x = 0;

	(void)arg;
	bsp_put(0, &x, &x, 0, 8);
}

/* bsp_sync on VP 0 after bsp_end: the SPMD section is over */
static void sync_after_end_spmd(void)
{
	bsp_begin(bsp_nprocs());
	bsp_sync();
	bsp_end();
	bsp_sync();
	printf("bsp_sync after bsp_end returned\n");
}

/* ================= DRMA ================= */

static void put_unregistered(void *arg)
{
	uint64_t x = 1, y = 0;

	(void)arg;
	if (bsp_pid() == 0)
		bsp_put(1, &x, &y, 0, 8);
	bsp_sync();
}

static void get_unregistered(void *arg)
{
	uint64_t x = 1, y = 0;

	(void)arg;
	if (bsp_pid() == 0)
		bsp_get(1, &y, 0, &x, 8);
	bsp_sync();
}

static void put_beyond(void *arg)
{
	unsigned char a[16] = { 0 }, x[8] = { 0 };

	(void)arg;
	bsp_push_reg(a, 16);
	bsp_sync();
	if (bsp_pid() == 0)
		bsp_put(1, x, a, 12, 8);
	bsp_sync();
	bsp_sync();
}

static void get_beyond(void *arg)
{
	unsigned char a[16] = { 0 }, x[8] = { 0 };

	(void)arg;
	bsp_push_reg(a, 16);
	bsp_sync();
	if (bsp_pid() == 0)
		bsp_get(1, a, 16, x, 1);
	bsp_sync();
	bsp_sync();
}

static void put_beyond_remote(void *arg)
{
	unsigned char a[16] = { 0 }, x[16] = { 0 };

	(void)arg;
	bsp_push_reg(a, bsp_pid() == 1 ? 8 : 16);
	bsp_sync();
	if (bsp_pid() == 0)
		bsp_put(1, x, a, 0, 16);	/* fits the caller's 16, not VP 1's 8 */
	bsp_sync();
	bsp_sync();
}

static void put_pid_range(void *arg)
{
	uint64_t a = 0, x = 0;

	(void)arg;
	bsp_push_reg(&a, 8);
	bsp_sync();
	if (bsp_pid() == 3)
		bsp_put(7, &x, &a, 0, 8);
	bsp_sync();
}

static void get_pid_range(void *arg)
{
	uint64_t a = 0, x = 0;

	(void)arg;
	bsp_push_reg(&a, 8);
	bsp_sync();
	if (bsp_pid() == 3)
		bsp_get(4000000000u, &a, 0, &x, 8);
	bsp_sync();
}

static void send_pid_range(void *arg)
{
	uint64_t x = 0;

	(void)arg;
	if (bsp_pid() == 3)
		bsp_send(7, NULL, &x, 8);
	bsp_sync();
}

static void reg_order_differs(void *arg)
{
	uint64_t a = 0, b = 0, x = 5;

	(void)arg;
	if (bsp_pid() == 0)
		bsp_push_reg(&a, 8);
	bsp_push_reg(&b, 8);	/* second registration on VP 0, first on VP 1 */
	bsp_sync();
	if (bsp_pid() == 0)
		bsp_put(1, &x, &b, 0, 8);
	bsp_sync();
	bsp_sync();
}

static void pop_unregistered(void *arg)
{
	uint64_t a = 0;

	(void)arg;
	if (bsp_pid() == 0)
		bsp_pop_reg(&a);
	bsp_sync();
}

/* ================= BSMP ================= */

static void move_empty(void *arg)
{
	uint32_t x;

	(void)arg;
	bsp_sync();
	if (bsp_pid() == 2)
		bsp_move(&x, 4);
	bsp_sync();
}

static void send_null(void *arg)
{
	(void)arg;
	if (bsp_pid() == 1)
		bsp_send(0, NULL, NULL, 8);
	bsp_sync();
}

static void hpmove_null(void *arg)
{
	void *t;

	(void)arg;
	if (bsp_pid() == 0)
		bsp_hpmove(&t, NULL);
	bsp_sync();
}

/* ================= context memory ================= */

static void malloc_beyond_mu(void *arg)
{
	(void)arg;
	bsp_sync();
	if (bsp_pid() == 3)
		pems_malloc(3 * MiB);
	bsp_sync();
}

static void malloc_beyond_small_mu(void *arg)
{
	(void)arg;
	if (bsp_pid() == 1)
		pems_malloc(300 * KiB);
	bsp_sync();
}

static void exchange_beyond_mu(void *arg)
{
	unsigned v = bsp_nprocs(), p = bsp_pid();
	size_t *sc = pems_calloc(v, sizeof(size_t)), n = 0;
	char *big = p == 1 ? calloc(1, 2 * MiB) : NULL;	/* libc heap */
	void *rb;

	(void)arg;
	if (p == 1)
		sc[0] = 2 * MiB;
	pems_exchange(big, sc, &rb, &n, NULL);
	bsp_sync();
	bsp_sync();
}

static char *shared_ptr;

static void free_foreign(void *arg)
{
	(void)arg;
	if (bsp_pid() == 0)
		shared_ptr = pems_malloc(64);
	bsp_sync();
	if (bsp_pid() == 1)
		pems_free(shared_ptr);
	bsp_sync();
}

static int deep(int n)
{
	volatile char buf[4096];

	buf[0] = (char)n;
	return n ? deep(n - 1) + buf[0] : 0;
}

static void stack_overflow(void *arg)
{
	(void)arg;
	if (bsp_pid() == 1)
		printf("%d\n", deep(200));	/* 800 KiB of stack, 256 KiB allowed */
	bsp_sync();
}

/* ================= supersteps and collectives ================= */

static void end_mismatch(void *arg)
{
	(void)arg;
	if (bsp_pid() % 2)
		bsp_sync();
}

static void end_mismatch_spmd(void)
{
	bsp_begin(4);
	bsp_sync();
	if (bsp_pid() >= 2)
		bsp_sync();
	bsp_end();
}

static void coll_partial(void *arg)
{
	int64_t x = 1, y;

	(void)arg;
	if (bsp_pid() % 2 == 0)
		pems_allreduce(&x, &y, 1, PEMS_INT64, PEMS_SUM);
	else
		bsp_sync();
	bsp_sync();
}

static void coll_mismatch(void *arg)
{
	int64_t x[2] = { 1, 2 }, y[2];

	(void)arg;
	pems_allreduce(x, y, bsp_pid() < 2 ? 1 : 2, PEMS_INT64, PEMS_SUM);
	bsp_sync();
}

static void coll_different(void *arg)
{
	int64_t x = 1, y;

	(void)arg;
	if (bsp_pid() == 0)
		pems_allreduce(&x, &y, 1, PEMS_INT64, PEMS_SUM);
	else
		pems_broadcast(0, &x, 8);
	bsp_sync();
}

static void root_range(void *arg)
{
	int64_t x = 1;

	(void)arg;
	pems_broadcast(4, &x, 8);
}

static void alltoallv_twice(void *arg)
{
	unsigned v = bsp_nprocs();
	size_t *z = pems_calloc(v, sizeof(size_t));
	char buf[8];

	(void)arg;
	pems_alltoallv(buf, z, z, buf, z, z);
	pems_alltoallv(buf, z, z, buf, z, z);
	bsp_sync();
}

/* VP 1 sends 64 bytes where VP 0 said it expects 4 (recvcounts): the
 * extra bytes would land beyond VP 0's receive buffer. */
static void alltoallv_overflow(void *arg)
{
	unsigned v = bsp_nprocs(), p = bsp_pid();
	size_t sc[2] = { 0, 0 }, sd[2] = { 0, 0 }, rc[2] = { 4, 4 }, rd[2] = { 0, 4 };
	char send[64], *recv = pems_malloc(8), *guard = pems_malloc(64);

	(void)arg;
	memset(send, 7, sizeof(send));
	memset(guard, 0, 64);
	if (v != 2)
		exit(99);
	sc[0] = p == 1 ? 64 : 4;
	sc[1] = 4;
	pems_alltoallv(send, sc, sd, recv, rc, rd);
	bsp_sync();
	if (p == 0 && guard[0])
		printf("VP 0's neighbouring allocation was overwritten\n");
	bsp_sync();
}

static void begin_twice(void *arg)
{
	(void)arg;
	bsp_sync();
	bsp_begin(2);
}

/* ================= configuration ================= */

static struct spmd_cfg budget_cfg = { "v4-k2-20M", 4, 2, 1 * MiB, 20 * MiB, PEMS_IO_KIND_SYNC, false };
static char budget_msg[512];

static void noop(void *arg)
{
	(void)arg;
}

static void noop_spmd(void)
{
	bsp_begin(4);
	bsp_end();
}

/* The exact message pems_config_derive prints for budget_cfg, and the
 * budget it suggests (which must then be enough). */
static size_t budget_expect(void)
{
	struct pems_config pc;
	struct pems_derived d;
	size_t need, want_mib;

	spmd_fill_config(&pc, &budget_cfg);
	ck_assert(!spmd_budget_ok(&pc, &d));
	need = d.fixed + d.msg_budget + (size_t)budget_cfg.k * budget_cfg.mu;
	want_mib = (need + MiB - 1) >> 20;
	snprintf(budget_msg, sizeof(budget_msg),
		 "pems: error: memory budget 20 MiB is too small for k = 2 threads x mu = 1 MiB (+ %zu MiB for messages and runtime); raise --mem to %zu MiB, or lower --threads or mu\n",
		 (d.fixed + d.msg_budget) >> 20, want_mib);
	return want_mib;
}

static void run_budget_env(const struct scenario *s)
{
	setenv("PEMS_MEM", "20M", 1);
	setenv("PEMS_MU", "1M", 1);
	setenv("PEMS_THREADS", "2", 1);
	setenv("PEMS_PROCS", "4", 1);
	setenv("PEMS_IO", "sync", 1);
	setenv("PEMS_TMP", spmd_tmp(), 1);
	unsetenv("PEMS_STACK");
	unsetenv("PEMS_MSG_MEM");
	setenv("PEMS_QUIET", "1", 1);
	bsp_init(s->spmd, 0, NULL);
	s->spmd();
	exit(0);
}

static struct spmd_cfg mu_cfg = { "v2-k1-mu256K", 2, 1, 256 * KiB, 64 * MiB, PEMS_IO_KIND_SYNC, false };

static const char *env_name, *env_value;

static void run_env(const struct scenario *s)
{
	struct pems_config pc;
	int rc;

	(void)s;
	setenv(env_name, env_value, 1);
	rc = pems_config_init(&pc);	/* reads the environment */
	printf("rc=%d\n", rc);
	exit(rc ? 1 : 0);
}

/* scratch dirs */
static char scratch_dir[4200];
static struct spmd_cfg scratch_cfg = { "v2-k1-scratch", 2, 1, 1 * MiB, 64 * MiB, PEMS_IO_KIND_SYNC, false };

static void run_scratch(const struct scenario *s)
{
	struct pems_config pc;
	int rc;

	spmd_fill_config(&pc, &scratch_cfg);
	pc.tmp[0] = scratch_dir;
	if (pems_configure(&pc))
		exit(125);
	errno = EACCES;	/* a stale errno, as any program may have */
	rc = pems_spmd(NULL, s->fn, NULL);
	printf("rc=%d\n", rc);
	exit(rc < 0 ? 1 : 0);
}

/* A private mount namespace with a tmpfs on scratch_dir (read-only or
 * 1 MiB); prints "skip: ..." and exits 77 when that is not possible. */
static void run_scratch_mount(const struct scenario *s, bool ro)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("pems-test", scratch_dir, "tmpfs", ro ? MS_RDONLY : 0, "size=1m")) {
		printf("skip: cannot mount a tmpfs in a private namespace: %s\n", strerror(errno));
		exit(77);
	}
	run_scratch(s);
}

static void run_scratch_ro(const struct scenario *s)
{
	if (geteuid() != 0) {	/* permissions are enough when not root */
		chmod(scratch_dir, 0500);
		run_scratch(s);
	}
	run_scratch_mount(s, true);
}

static void run_scratch_small(const struct scenario *s)
{
	run_scratch_mount(s, false);
}

/* ================= the table ================= */

#define RC_SCRATCH "rc=-1002\n"
#define RC_BUDGET "rc=-1001\n"

static const struct scenario scenarios[] = {
	/* outside the SPMD section */
	{ "bsp_sync_outside_bsp_begin", run_plain, call_sync, NULL, NULL,
	  "bsp_sync: called outside the SPMD section (before bsp_begin or after bsp_end)\n", "", NULL },
	{ "bsp_pid_outside_bsp_begin", run_plain, call_pid, NULL, NULL,
	  "bsp_pid: called outside the SPMD section (before bsp_begin or after bsp_end)\n", "", NULL },
	{ "bsp_put_outside_bsp_begin", run_plain, call_put, NULL, NULL,
	  "bsp_put: called outside the SPMD section (before bsp_begin or after bsp_end)\n", "", NULL },
	{ "bsp_sync_after_bsp_end", run_begin, NULL, sync_after_end_spmd, &c2,
	  "bsp_sync: called outside the SPMD section (before bsp_begin or after bsp_end)\n", "", NULL },
	{ "bsp_begin_called_twice", run_lib, begin_twice, NULL, &c2, "bsp_begin: called twice\n", "", NULL },
	/* DRMA */
	{ "put_to_unregistered_area", run_lib, put_unregistered, NULL, &c2,
	  "bsp_put: address {ptr} is not registered on VP 0 (register it with bsp_push_reg and bsp_sync first)\n",
	  "", NULL },
	{ "get_from_unregistered_area", run_lib, get_unregistered, NULL, &c2,
	  "bsp_get: address {ptr} is not registered on VP 0 (register it with bsp_push_reg and bsp_sync first)\n",
	  "", NULL },
	{ "put_beyond_registered_size", run_lib, put_beyond, NULL, &c2,
	  "pems: error: bsp_put: VP 0 wrote bytes [12, 20) of an area VP 1 registered with 16 bytes\n", "", NULL },
	{ "get_beyond_registered_size", run_lib, get_beyond, NULL, &c2,
	  "pems: error: bsp_get: VP 0 reads bytes [16, 17) of an area VP 1 registered with 16 bytes\n", "", NULL },
	{ "put_beyond_destination_registration", run_lib, put_beyond_remote, NULL, &c2,
	  "pems: error: bsp_put: VP 0 wrote bytes [0, 16) of an area VP 1 registered with 8 bytes\n", "", NULL },
	{ "put_pid_out_of_range", run_lib, put_pid_range, NULL, &c7,
	  "bsp_put: pid 7 is out of range; there are 7 VPs (0..6)\n", "", NULL },
	{ "get_pid_out_of_range", run_lib, get_pid_range, NULL, &c7,
	  "bsp_get: pid 4000000000 is out of range; there are 7 VPs (0..6)\n", "", NULL },
	{ "send_pid_out_of_range", run_lib, send_pid_range, NULL, &c7,
	  "bsp_send: pid 7 is out of range; there are 7 VPs (0..6)\n", "", NULL },
	{ "registration_order_differs", run_lib, reg_order_differs, NULL, &c2,
	  "pems: error: bsp_put: VP 0 wrote to a registration VP 1 does not have (registration order differs between VPs?)\n",
	  "", NULL },
	{ "pop_of_unregistered_area", run_lib, pop_unregistered, NULL, &c2,
	  "bsp_pop_reg: address {ptr} is not registered on VP 0\n", "", NULL },
	/* BSMP */
	{ "bsp_move_on_empty_queue", run_lib, move_empty, NULL, &c3,
	  "bsp_move: the message queue of VP 2 is empty\n", "", NULL },
	{ "bsp_send_null_payload", run_lib, send_null, NULL, &c2,
	  "bsp_send: payload is NULL but payload_bytes is 8\n", "", NULL },
	{ "bsp_hpmove_null_pointer", run_lib, hpmove_null, NULL, &c2,
	  "bsp_hpmove: tag_ptr and payload_ptr must not be NULL\n", "", NULL },
	/* context memory */
	{ "pems_malloc_beyond_mu", run_lib, malloc_beyond_mu, NULL, &c4,
	  "pems: error: VP 3 needs 3 MiB more in superstep 1 but mu is 1 MiB (0 MiB in use); raise mu (PEMS_MU / --mem) or --procs\n",
	  "", NULL },
	{ "pems_malloc_beyond_mu_below_one_mib", run_lib, malloc_beyond_small_mu, NULL,
	  &(const struct spmd_cfg){ "v2-k1-mu512K", 2, 1, 512 * KiB, 64 * MiB, PEMS_IO_KIND_SYNC, false },
	  "pems: error: VP 1 needs {any} in superstep 0 but mu is 512 KiB{any}; raise mu (PEMS_MU / --mem) or --procs\n",
	  "", NULL },
	{ "exchange_delivery_beyond_mu", run_lib, exchange_beyond_mu, NULL, &c2,
	  "pems: error: VP 0 needs 2 MiB more for pems_exchange data in superstep 1 but its context (mu) is 1 MiB with 0 MiB in use; raise mu (--mem) or --procs\n",
	  "", NULL },
	{ "pems_free_of_another_vps_memory", run_lib, free_foreign, NULL, &c2,
	  "pems: error: pems_free: {ptr} is not a live allocation of the calling VP\n", "", NULL },
	{ "stack_overflow", run_lib, stack_overflow, NULL, &c2,
	  "pems: error: VP 1 {any}stack{any}\n", "", NULL },
	/* supersteps and collectives */
	{ "vps_end_in_different_supersteps", run_lib, end_mismatch, NULL, &c4k2,
	  "pems: error: bsp_end: VP 0 ended in superstep 0 while VP 1 called bsp_sync; every VP must reach bsp_end in the same superstep\n",
	  "", NULL },
	{ "bsp_end_in_different_supersteps", run_begin, NULL, end_mismatch_spmd, &c4k2,
	  "pems: error: bsp_end: VP 0 ended in superstep 1 while VP 2 called bsp_sync; every VP must reach bsp_end in the same superstep\n",
	  "", NULL },
	{ "collective_called_by_some_vps", run_lib, coll_partial, NULL, &c4k2,
	  "pems: error: pems_allreduce: only 2 of 4 VPs called it in superstep 0; every VP must\n", "", NULL },
	{ "collective_with_different_sizes", run_lib, coll_mismatch, NULL, &c4,
	  "pems: error: pems_allreduce: VP 2's call in superstep 0 does not match pems_allreduce of another VP (same function, sizes, type, op and root on every VP)\n",
	  "", NULL },
	{ "different_collectives_in_one_superstep", run_lib, coll_different, NULL, &c2,
	  "pems: error: pems_broadcast: VP 1's call in superstep 0 does not match pems_allreduce of another VP (same function, sizes, type, op and root on every VP)\n",
	  "", NULL },
	{ "collective_root_out_of_range", run_lib, root_range, NULL, &c4,
	  "pems_broadcast: root 4 is out of range; there are 4 VPs\n", "", NULL },
	{ "alltoallv_twice_in_one_superstep", run_lib, alltoallv_twice, NULL, &c2,
	  "pems_alltoallv: called twice in one superstep\n", "", NULL },
	{ "alltoallv_more_than_recvcounts", run_lib, alltoallv_overflow, NULL, &c2,
	  "pems: error: pems_alltoallv: {any}VP 1{any}\n", "", NULL },
	/* configuration */
	{ "budget_too_small_for_k_mu", run_lib, noop, NULL, &budget_cfg, budget_msg, RC_BUDGET, NULL },
	{ "budget_too_small_from_environment", run_budget_env, NULL, noop_spmd, NULL, budget_msg, "", NULL },
	{ "mu_too_small_for_the_stack", run_lib, noop, NULL, &mu_cfg,
	  "pems: error: mu is 256 KiB but a VP needs at least 320 KiB (stack 256 KiB + heap); raise --mem or PEMS_MU\n",
	  RC_BUDGET, NULL },
	{ "scratch_dir_missing", run_scratch, noop, NULL, NULL,
	  "pems: error: scratch dir {any}/missing: No such file or directory; create it or pass another --tmp\n",
	  RC_SCRATCH, NULL },
	{ "scratch_dir_is_a_file", run_scratch, noop, NULL, NULL,
	  "pems: error: scratch dir {any}/afile: not a directory; create it or pass another --tmp\n",
	  RC_SCRATCH, NULL },
	{ "scratch_dir_unwritable", run_scratch_ro, noop, NULL, NULL,
	  "pems: error: scratch dir {any}/ro: not writable; pass another --tmp\n", RC_SCRATCH, NULL },
	{ "scratch_dir_too_small", run_scratch_small, noop, NULL, NULL,
	  "pems: error: scratch dir {any}/small: only 1 MiB free, pems needs at least 64 MiB; free space or pass another --tmp\n",
	  RC_SCRATCH, NULL },
};
#define NSCEN (sizeof(scenarios) / sizeof(scenarios[0]))

START_TEST(scenario)
{
	const struct scenario *s = &scenarios[_i];

	/* per-scenario setup in the parent */
	if (!strcmp(s->name, "budget_too_small_for_k_mu") ||
	    !strcmp(s->name, "budget_too_small_from_environment"))
		budget_expect();
	if (!strncmp(s->name, "scratch_dir_", 12)) {
		const char *leaf = !strcmp(s->name, "scratch_dir_missing") ? "missing" :
				   !strcmp(s->name, "scratch_dir_is_a_file") ? "afile" :
				   !strcmp(s->name, "scratch_dir_unwritable") ? "ro" : "small";

		snprintf(scratch_dir, sizeof(scratch_dir), "%.4000s/%s", spmd_tmp(), leaf);
		if (!strcmp(leaf, "afile")) {
			FILE *f = fopen(scratch_dir, "w");

			ck_assert_ptr_nonnull(f);
			fclose(f);
		} else if (strcmp(leaf, "missing")) {
			mkdir(scratch_dir, 0700);
		}
	}
	if (!strcmp(s->name, "scratch_dir_unwritable") || !strcmp(s->name, "scratch_dir_too_small")) {
		struct child_result cr;

		run_child(child_main, (void *)s, DEADLINE, &cr);
		if (cr.exited && cr.status == 77) {
			printf("SKIP %s: %s", s->name, cr.out);
			return;
		}
	}
	check_scenario(s);
}
END_TEST

/* The budget the message suggests is enough. */
START_TEST(budget_suggestion_is_enough)
{
	struct spmd_cfg c = budget_cfg;
	struct pems_config pc;
	struct pems_derived d;

	c.mem = budget_expect() * MiB;
	spmd_fill_config(&pc, &c);
	ck_assert_msg(spmd_budget_ok(&pc, &d), "the suggested --mem %zu MiB is refused", c.mem >> 20);
}
END_TEST

/* pems_config_init returns -PEMS_E_CONFIG for a bad environment value,
 * with a message naming it (it does not exit). */
static const char *const env_cases[][3] = {
	{ "PEMS_PROCS", "abc", "pems: error: PEMS_PROCS=abc is not a number; unset it or give e.g. PEMS_PROCS=4\n" },
	{ "PEMS_THREADS", "-2", "pems: error: PEMS_THREADS=-2 is not a number; unset it or give e.g. PEMS_THREADS=4\n" },
	{ "PEMS_MU", "12Q", "pems: error: PEMS_MU=12Q is not a size; use e.g. PEMS_MU=256M\n" },
	{ "PEMS_MEM", "-1G", "pems: error: PEMS_MEM=-1G is not a size; use e.g. PEMS_MEM=256M\n" },
	{ "PEMS_IO", "floppy", "pems: error: PEMS_IO=floppy: unknown backend; use uring, aio or sync\n" },
};

START_TEST(bad_environment_value)
{
	struct scenario s = { env_cases[_i][0], run_env, NULL, NULL, NULL, env_cases[_i][2],
			      "rc=-1003\n", NULL };

	env_name = env_cases[_i][0];
	env_value = env_cases[_i][1];
	check_scenario(&s);
}
END_TEST

/* pems_configure refuses what it cannot hold, without a message. */
START_TEST(pems_configure_rejects_invalid)
{
	struct pems_config pc;

	spmd_fill_config(&pc, &c2);
	pc.threads = 65;
	ck_assert_int_eq(pems_configure(&pc), -EINVAL);
	spmd_fill_config(&pc, &c2);
	pc.ntmp = PEMS_MAX_TMP + 1;
	ck_assert_int_eq(pems_configure(&pc), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("errors");
	SRunner *sr;
	TCase *tc;
	unsigned i;
	int failed;

	for (i = 0; i < NSCEN; i++) {
		tc = tcase_create(scenarios[i].name);
		tcase_set_timeout(tc, DEADLINE * 3);
		tcase_add_loop_test(tc, scenario, (int)i, (int)i + 1);
		suite_add_tcase(s, tc);
	}
	tc = tcase_create("budget_suggestion_is_enough");
	tcase_add_test(tc, budget_suggestion_is_enough);
	suite_add_tcase(s, tc);
	tc = tcase_create("bad_environment_value");
	tcase_set_timeout(tc, DEADLINE * 2);
	tcase_add_loop_test(tc, bad_environment_value, 0, (int)(sizeof(env_cases) / sizeof(env_cases[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("pems_configure_rejects_invalid");
	tcase_add_test(tc, pems_configure_rejects_invalid);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
