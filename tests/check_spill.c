/*
 * check_spill.c - what the runtime spills comes back intact or not at all
 * (pems/spill.c, context.c invariant 5, msg.c invariant 6).
 *
 * A BSP program of V VPs with spilling forced (the least budget) keeps
 * 2 MiB of heap and a stack array per VP and sends 128 KiB per VP to the
 * last VP, so that contexts and full message chunks go to disk; every
 * byte is checked after each superstep.  Round trips run for every --io
 * backend with compression off, zstd and auto, on compressible and on
 * random data, and check what compression stored.  Corruption scenarios:
 * VP 0 flips a byte of VP V-1's context, or of the message log, between
 * supersteps (through the scratch file descriptors, found in /proc), or
 * truncates the file, or (compression on) changes the header of a
 * compressed block: the run must end with exit status 1 and a message
 * naming the block and what is wrong with it, never with wrong data.
 * With a budget that has room, full chunks are kept in memory instead
 * (msg.c invariant 7): the same bytes arrive, none of them via the disk.
 */
#include "spmd_test.h"

#include <dirent.h>

#include "bsp.h"
#include "pems.h"
#include "spill.h"

#define V 6
#define HEAP (2 * MiB + 64 * KiB)
#define MSG (16 * KiB)		/* bytes per bsp_send */
#define NMSG 8			/* sends per VP */
#define DEADLINE 60

enum corrupt { NONE = 0, CTX_BYTE, MSG_BYTE, CTX_TRUNC, MSG_TRUNC, CTX_HDR, MSG_HDR };

struct scen {
	const char *compress;	/* PEMS_COMPRESS */
	enum pems_io_kind io;
	unsigned k;
	bool random;		/* incompressible data */
	enum corrupt corrupt;
	size_t mem;		/* budget; 0: the least (spmd_test.h) */
	bool no_hold;		/* PEMS_MSG_HOLD=0 */
};

static const struct scen *cur;

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Word @i of stream @s: random, or sorted runs (compressible). */
static uint64_t word(uint64_t s, uint64_t i)
{
	return cur->random ? mix(s << 40 ^ i) : s << 40 | i / 4;
}

static void fill(uint64_t *p, size_t n, uint64_t s)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = word(s, i);
}

static bool same(const uint64_t *p, size_t n, uint64_t s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != word(s, i))
			return false;
	return true;
}

/* The scratch file of this process whose name ends with @name. */
static int scratch_fd(const char *name)
{
	char want[64], link[300], path[1024];
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int fd = -1;

	snprintf(want, sizeof(want), "/pems-%d-%s", (int)getpid(), name);
	while (d && (e = readdir(d))) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, path, sizeof(path) - 1);
		if (n <= 0)
			continue;
		path[n] = '\0';
		if (strstr(path, want) && (!strstr(path, want)[strlen(want)] ||
					   strstr(path, want)[strlen(want)] == ' ')) {
			fd = atoi(e->d_name);
			break;
		}
	}
	if (d)
		closedir(d);
	if (fd < 0)
		bsp_abort("test: no scratch file %s open\n", want);
	return fd;
}

/* Flip one byte at @off of @fd (4 KiB aligned I/O: the fd is O_DIRECT). */
static void flip(int fd, off_t off)
{
	void *b;

	if (posix_memalign(&b, 4096, 4096))
		bsp_abort("test: out of memory\n");
	if (pread(fd, b, 4096, off & ~(off_t)4095) != 4096)
		bsp_abort("test: cannot read the scratch file to corrupt it\n");
	((unsigned char *)b)[off & 4095] ^= 0x5a;
	if (pwrite(fd, b, 4096, off & ~(off_t)4095) != 4096)
		bsp_abort("test: cannot write the scratch file to corrupt it\n");
	free(b);
}

static void corrupt_now(void)
{
	size_t mu = pems_current_config()->mu;

	switch (cur->corrupt) {
	case CTX_BYTE: flip(scratch_fd("ctx"), (off_t)((V - 1) * mu + 100)); break;
	case MSG_BYTE: flip(scratch_fd("msg0.0"), 100); break;
	case CTX_TRUNC: (void)!ftruncate(scratch_fd("ctx"), (off_t)((V - 1) * mu)); break;
	case MSG_TRUNC: (void)!ftruncate(scratch_fd("msg0.0"), 0); break;
	/* byte 4 of a compressed block: its header's raw size (spill.h) */
	case CTX_HDR: flip(scratch_fd("ctx"), (off_t)((V - 1) * mu + 4)); break;
	case MSG_HDR: flip(scratch_fd("msg0.0"), 4); break;
	default: break;
	}
}

static void check_inbox(unsigned step)
{
	unsigned seen[V] = { 0 }, n = 0, i;
	bsp_nprocs_t count;
	bsp_size_t bytes;
	uint64_t buf[MSG / 8];

	bsp_qsize(&count, &bytes);
	if (count != (bsp_nprocs_t)V * NMSG)
		bsp_abort("test: superstep %u: VP %d got %u messages, not %d\n", step,
			  V - 1, count, V * NMSG);
	for (i = 0; i < (unsigned)count; i++) {
		uint64_t src;

		bsp_move(buf, MSG);
		src = buf[0] >> 8;	/* the first word names the stream */
		if (src >= V || buf[0] != (src << 8 | step << 4 | seen[src]) ||
		    !same(buf + 1, MSG / 8 - 1, buf[0]))
			bsp_abort("test: superstep %u: message %u to VP %d is wrong\n", step, i, V - 1);
		seen[src]++;
		n++;
	}
}

static void spmd(void *arg)
{
	unsigned pid = (unsigned)bsp_pid(), s, j;
	uint64_t stackarr[1024];
	uint64_t *heap = pems_malloc(HEAP);
	uint64_t msg[MSG / 8];

	(void)arg;
	fill(heap, HEAP / 8, 1000 + pid);
	fill(stackarr, 1024, 2000 + pid);
	for (s = 0; s < 3; s++) {
		if (s == 1 && pid == 0)
			corrupt_now();
		if (s > 0 && pid == V - 1)
			check_inbox(s - 1);
		if (!same(heap, HEAP / 8, 1000 + pid) || !same(stackarr, 1024, 2000 + pid))
			bsp_abort("test: superstep %u: VP %u's context changed\n", s, pid);
		for (j = 0; j < NMSG && s < 2; j++) {
			msg[0] = (uint64_t)pid << 8 | s << 4 | j;
			fill(msg + 1, MSG / 8 - 1, msg[0]);
			bsp_send(V - 1, NULL, msg, MSG);
		}
		bsp_sync();
	}
}

static void child(void *arg)
{
	struct spmd_cfg c = { "spill", V, 0, 4 * MiB, 0, 0, true };
	struct pems_stats st;
	uint64_t craw, cst, mraw, mst;
	int rc;

	cur = arg;
	c.k = cur->k;
	c.io = cur->io;
	if (cur->mem) {
		c.mem = cur->mem;
		c.spill = false;
	}
	setenv("PEMS_MSG_HOLD", cur->no_hold ? "0" : "1", 1);
	setenv("PEMS_COMPRESS", cur->compress, 1);
	setenv("PEMS_CHECKSUM", "1", 1);
	/* auto weighs compression speed against the disk: with a 1 MiB/s
	 * disk any speed pays, so the sample's ratio alone decides, whatever
	 * the load of the machine */
	setenv("PEMS_DISK_BW", "1M", 1);
	ck_assert_int_eq(spmd_configure(&c), 0);
	rc = pems_spmd(NULL, spmd, NULL);
	if (rc) {
		printf("rc=%d\n", rc);
		exit(1);
	}
	pems_get_stats(&st);
	pems_spill_totals(PEMS_SPILL_CTX, &craw, &cst);
	pems_spill_totals(PEMS_SPILL_MSG, &mraw, &mst);
	printf("ctx_written=%llu msg_written=%llu ctx_raw=%llu ctx_stored=%llu msg_raw=%llu msg_stored=%llu msg_held=%llu msg_read=%llu\n",
	       (unsigned long long)st.ctx_written, (unsigned long long)st.msg_written,
	       (unsigned long long)craw, (unsigned long long)cst,
	       (unsigned long long)mraw, (unsigned long long)mst,
	       (unsigned long long)st.msg_held, (unsigned long long)st.msg_read);
}

static const char *io_name[] = { "uring", "aio", "sync" };

static void run(const struct scen *sc, struct child_result *r)
{
	run_child(child, (void *)sc, DEADLINE, r);
	printf("[%s io=%s k=%u %s corrupt=%d] exit %d\n%s%s", sc->compress, io_name[sc->io], sc->k,
	       sc->random ? "random" : "compressible", sc->corrupt, r->status, r->out, r->err);
}

/* ---- round trips ---- */

static void roundtrip(const char *compress, bool random, int io)
{
	struct scen sc = { compress, io, 2, random, NONE, 0, false };
	struct child_result r;
	unsigned long long cw, mw, craw, cst, mraw, mst;

	run(&sc, &r);
	ck_assert_msg(r.exited && r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(sscanf(r.out, "ctx_written=%llu msg_written=%llu ctx_raw=%llu ctx_stored=%llu msg_raw=%llu msg_stored=%llu",
				&cw, &mw, &craw, &cst, &mraw, &mst), 6);
	/* spilling happened: every VP's context twice, messages twice */
	ck_assert_msg(craw >= 2ull * V * HEAP && mraw >= 2ull * V * NMSG * MSG / 2,
		      "too little spilled: contexts %llu, messages %llu", craw, mraw);
	if (!strcmp(compress, "off") || random) {
		/* nothing compressed: stored as raw, written as stored */
		ck_assert_uint_eq(cst, craw);
		ck_assert_uint_eq(mst, mraw);
		ck_assert_uint_ge(cw, craw);
	} else if (!strcmp(compress, "auto")) {
		/* messages: sampled, then compressed; contexts: one block in
		 * AUTO_STRIDE (7) sampled, too few here to decide: only those
		 * are compressed */
		ck_assert_msg(cst < craw - craw / 16 && mst * 4 < mraw && mw < mraw / 2,
			      "compressible data stored as contexts %llu/%llu, messages %llu/%llu",
			      cst, craw, mst, mraw);
	} else {
		/* sorted runs compress well; the disk sees the stored bytes */
		ck_assert_msg(cst * 4 < craw && mst * 4 < mraw,
			      "compressible data stored as contexts %llu/%llu, messages %llu/%llu",
			      cst, craw, mst, mraw);
		ck_assert_msg(cw < craw / 2 && mw < mraw / 2,
			      "written %llu/%llu bytes of contexts, %llu/%llu of messages",
			      cw, craw, mw, mraw);
	}
}

START_TEST(roundtrip_zstd_compressible) { roundtrip("zstd", false, _i); }
END_TEST
START_TEST(roundtrip_zstd_random) { roundtrip("zstd:3", true, _i); }
END_TEST
START_TEST(roundtrip_auto_compressible) { roundtrip("auto", false, _i); }
END_TEST
START_TEST(roundtrip_auto_random) { roundtrip("auto", true, _i); }
END_TEST
START_TEST(roundtrip_off) { roundtrip("off", false, _i); }
END_TEST

/* ---- full chunks kept in memory (msg.c invariant 7) ---- */

/* Every message byte the program checks is one of these, sent twice. */
#define MSG_BYTES (2ull * V * NMSG * MSG)

START_TEST(full_chunks_kept_in_memory)
{
	/* 0: room for every chunk; 1: the same budget, holding off; 2: room
	 * for some (2 MiB above the least budget) */
	static const size_t mem[] = { 64 * MiB, 64 * MiB, 2 * MiB };
	struct scen sc = { "off", PEMS_IO_KIND_URING, 2, true, NONE, mem[_i], _i == 1 };
	struct child_result r;
	unsigned long long cw, mw, craw, cst, mraw, mst, held, mr;

	run(&sc, &r);
	ck_assert_msg(r.exited && r.status == 0, "exit %d: %s", r.status, r.err);
	ck_assert_int_eq(sscanf(r.out, "ctx_written=%llu msg_written=%llu ctx_raw=%llu ctx_stored=%llu msg_raw=%llu msg_stored=%llu msg_held=%llu msg_read=%llu",
				&cw, &mw, &craw, &cst, &mraw, &mst, &held, &mr), 8);
	ck_assert_uint_eq(mr, mw);	/* what went to the disk came back */
	if (_i == 0) {
		ck_assert_msg(mw == 0 && held >= MSG_BYTES / 2,
			      "with room: %llu message bytes written, %llu held", mw, held);
	} else if (_i == 1) {
		ck_assert_msg(held == 0 && mw >= MSG_BYTES / 2,
			      "holding off: %llu message bytes written, %llu held", mw, held);
	} else {
		ck_assert_msg(held > 0 && mw > 0, "some room: %llu bytes written, %llu held",
			      mw, held);
	}
}
END_TEST

/* ---- corruption ---- */

static const char *ctx_msg =
	"pems: error: VP 5's context is corrupt: checksum mismatch in its heap bytes [0, 1048576), at offset {num} of {any}/pems-{num}-ctx{any} (written in superstep 0); the scratch disk or memory is failing, or something else wrote into the file\n";
static const char *msg_msg =
	"pems: error: the message chunk of superstep 0 from worker 0 to VP 5 is corrupt: checksum mismatch in {num} bytes at offset 0 of {any}/pems-{num}-msg0.0{any}; the scratch disk or memory is failing, or something else wrote into the file\n";

static void corrupted(enum corrupt what, const char *compress, const char *pat)
{
	struct scen sc = { compress, PEMS_IO_KIND_URING, 1, false, what, 0, false };
	struct child_result r;

	run(&sc, &r);
	ck_assert_msg(r.exited && r.status == 1, "exit %d (signal %d), want 1: %s", r.status,
		      r.sig, r.err);
	ck_assert_msg(msg_match(pat, r.err), "unexpected message: %s", r.err);
	ck_assert_msg(!strstr(r.err, "test:"), "wrong data reached the program: %s", r.err);
}

START_TEST(flipped_context_byte_detected)
{
	corrupted(CTX_BYTE, _i ? "zstd" : "off", ctx_msg);
}
END_TEST

START_TEST(flipped_message_byte_detected)
{
	corrupted(MSG_BYTE, _i ? "zstd" : "off", msg_msg);
}
END_TEST

/* The frame's CRC still matches: only the header check catches it. */
START_TEST(compressed_header_mismatch_detected)
{
	char ctx[1024], msg[1024];

	snprintf(ctx, sizeof(ctx), "%.*s", (int)(strstr(ctx_msg, "checksum mismatch") - ctx_msg), ctx_msg);
	strcat(ctx, "compressed block header does not match its descriptor");
	strcat(ctx, strstr(ctx_msg, " in its heap"));
	snprintf(msg, sizeof(msg), "%.*s", (int)(strstr(msg_msg, "checksum mismatch") - msg_msg), msg_msg);
	strcat(msg, "compressed block header does not match its descriptor");
	strcat(msg, strstr(msg_msg, " in {num} bytes"));
	corrupted(_i ? MSG_HDR : CTX_HDR, "zstd", _i ? msg : ctx);
}
END_TEST

START_TEST(truncated_files_detected)
{
	corrupted(_i & 1 ? MSG_TRUNC : CTX_TRUNC, _i & 2 ? "zstd" : "off",
		  _i & 1 ? "pems: error: reading the message chunk of superstep 0 from worker 0 ({num} bytes at offset 0 of {any}/pems-{num}-msg0.0{any}): short read (scratch file truncated?)\n"
			 : "pems: error: reading the context of VP 5 ({num} bytes at offset {num} of {any}/pems-{num}-ctx{any}): short read (scratch file truncated?)\n");
}
END_TEST

static TCase *tc(const char *name, const TTest *t, int n)
{
	TCase *c = tcase_create(name);

	tcase_add_loop_test(c, t, 0, n);
	tcase_set_timeout(c, 4 * DEADLINE);
	return c;
}

int main(void)
{
	Suite *s = suite_create("spill");
	SRunner *sr;
	int failed;

	/* loops over PEMS_IO_KIND_URING, _AIO, _SYNC */
	suite_add_tcase(s, tc("zstd_roundtrip_every_backend", roundtrip_zstd_compressible, 3));
	suite_add_tcase(s, tc("zstd_random_stored_raw", roundtrip_zstd_random, 3));
	suite_add_tcase(s, tc("auto_compresses_compressible_data", roundtrip_auto_compressible, 3));
	suite_add_tcase(s, tc("auto_leaves_random_data_raw", roundtrip_auto_random, 3));
	suite_add_tcase(s, tc("off_roundtrip_checksummed", roundtrip_off, 3));
	suite_add_tcase(s, tc("full_chunks_kept_in_memory", full_chunks_kept_in_memory, 3));
	suite_add_tcase(s, tc("flipped_context_byte_detected", flipped_context_byte_detected, 2));
	suite_add_tcase(s, tc("flipped_message_byte_detected", flipped_message_byte_detected, 2));
	suite_add_tcase(s, tc("truncated_files_detected", truncated_files_detected, 4));
	suite_add_tcase(s, tc("compressed_header_mismatch_detected",
			      compressed_header_mismatch_detected, 2));
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
