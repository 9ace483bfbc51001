/*
 * check_checkpoint.c - the checkpoint manifest parser (pems/checkpoint.c):
 * a well-formed manifest parses with every field, escapes decode, and
 * every kind of damage (checksum, truncation, unknown or repeated keys,
 * bad numbers and escapes, missing fields) is refused without a leak.
 * Killing and resuming real runs is tests/test_resume.sh.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "crc32c.h"

static const char body[] =
	"pems-checkpoint 1\n"
	"superstep 3 3\n"
	"run 0\n"
	"exe /usr/bin/pems-run\n"
	"cwd /home/a%20b\n"
	"dir /data/out.pems-ckpt\n"
	"arg pems-run\n"
	"arg sort\n"
	"arg %00\n"
	"arg 100%25\n"
	"env HOME=/root\n"
	"env PEMS_CKPT_EXEC=start_\n"
	"envsize 40 3000 0\n"
	"config 8 2 1 0 2 33554432 1073741824 262144 0 1048576 1\n"
	"tmp 0 /scratch/a\n"
	"tmp 1 /scratch/b\n"
	"layout 555555559000 7ffff7a00000 7ffe00000000 7fffffffd000 7fffffffe000\n"
	"file 0 0 12 11 1 33554432 1701000000123456789 0a0b0c0d deadbeef in.u64\n"
	"file 1 2 14 13 1 33554432 -5 00000000 00000000 out.pems-tmp\n"
	"map 123456 1700000000000000000 /usr/bin/pems-run\n"
	"cleanup out.pems-tmp\n"
	"state state.3 6744 1234abcd 2\n";

/* @text with its crc32c line appended (malloc'd) */
static char *sealed(const char *text, size_t *len)
{
	size_t n = strlen(text);
	char *s = malloc(n + 17);

	memcpy(s, text, n);
	snprintf(s + n, 17, "crc32c %08x\n", pems_crc32c(0, text, n));
	*len = n + 16;
	return s;
}

static int parse_text(const char *text, struct pems_manifest *m, char *err)
{
	size_t len;
	char *s = sealed(text, &len);
	int rc = pems_manifest_parse(s, len, m, err, 128);

	free(s);
	return rc;
}

/* @text with line @old replaced by @new */
static char *edit(const char *old, const char *new)
{
	const char *p = strstr(body, old);
	char *s;

	ck_assert_ptr_nonnull(p);
	s = malloc(sizeof(body) + strlen(new));
	memcpy(s, body, (size_t)(p - body));
	strcpy(s + (p - body), new);
	strcat(s, p + strlen(old));
	return s;
}

START_TEST(test_parses_every_field)
{
	struct pems_manifest m;
	char err[128] = "";

	ck_assert_int_eq(parse_text(body, &m, err), 0);
	ck_assert_uint_eq(m.superstep, 3);
	ck_assert_str_eq(m.cwd, "/home/a b");
	ck_assert_uint_eq(m.argc, 4);
	ck_assert_str_eq(m.argv[2], "");
	ck_assert_str_eq(m.argv[3], "100%");
	ck_assert_uint_eq(m.envc, 2);
	ck_assert_uint_eq(m.env_count, 40);
	ck_assert_uint_eq(m.env_bytes, 3000);
	ck_assert(!m.launched);
	ck_assert_uint_eq(m.v, 8);
	ck_assert_uint_eq(m.ndirs, 2);
	ck_assert_str_eq(m.tmp[1], "/scratch/b");
	ck_assert_uint_eq(m.mu, 33554432);
	ck_assert_uint_eq(m.wlog, 1);
	ck_assert_uint_eq(m.rlog, 2);
	ck_assert_uint_eq(m.layout[0], 0x555555559000ull);
	ck_assert_uint_eq(m.nfiles, 2);
	ck_assert_uint_eq(m.files[0].head_crc, 0x0a0b0c0d);
	ck_assert_uint_eq(m.files[0].tail_crc, 0xdeadbeef);
	ck_assert_int_eq(m.files[1].mtime_ns, -5);
	ck_assert_str_eq(m.files[1].path, "out.pems-tmp");
	ck_assert_uint_eq(m.nmaps, 1);
	ck_assert_uint_eq(m.ncleanup, 1);
	ck_assert_str_eq(m.state, "state.3");
	ck_assert_uint_eq(m.state_crc, 0x1234abcd);
	pems_manifest_free(&m);
}
END_TEST

START_TEST(test_checksum_and_truncation)
{
	struct pems_manifest m;
	char err[128] = "";
	size_t len;
	char *s = sealed(body, &len);

	s[40] ^= 1;	/* one flipped bit anywhere */
	ck_assert_int_eq(pems_manifest_parse(s, len, &m, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "checksum"));
	s[40] ^= 1;
	ck_assert_int_eq(pems_manifest_parse(s, len, &m, err, sizeof(err)), 0);
	pems_manifest_free(&m);
	ck_assert_int_eq(pems_manifest_parse(s, len - 1, &m, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(pems_manifest_parse(s, 100, &m, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(pems_manifest_parse(s, 0, &m, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(pems_manifest_parse("pems", 4, &m, NULL, 0), -EINVAL);
	free(s);
}
END_TEST

START_TEST(test_refuses_damaged_lines)
{
	static const char *const bad[][2] = {
		{ "run 0\n", "run 0\nrun x\n" },			/* bad number */
		{ "run 0\n", "run 0\nfrobnicate 1\n" },			/* unknown key */
		{ "exe /usr/bin/pems-run\n", "exe /a\nexe /b\n" },	/* repeated */
		{ "exe /usr/bin/pems-run\n", "" },			/* missing */
		{ "arg sort\n", "arg so%2\n" },				/* short escape */
		{ "arg sort\n", "arg so%zzrt\n" },			/* bad escape */
		{ "arg sort\n", "arg a%00b\n" },			/* NUL inside */
		{ "arg sort\n", "arg  sort\n" },			/* double space */
		{ "arg sort\n", "arg sort \n" },			/* trailing space */
		{ "tmp 1 /scratch/b\n", "tmp 2 /scratch/b\n" },		/* dir out of range */
		{ "tmp 1 /scratch/b\n", "" },				/* dir missing */
		{ "superstep 3 3\n", "superstep -3 3\n" },
		{ "superstep 3 3\n", "superstep 99999999999999999999 3\n" },
		{ "state state.3 6744 1234abcd 2\n", "state state.3 6744 1234abcd 7\n" },
		{ "file 0 0 12 11 1", "file 999 0 12 11 1" },
		{ "layout 555555559000", "layout 55555555900g" },
		{ "config 8 2 1 0 2", "config 8 2 1 0 0" },		/* no scratch dir */
		{ "envsize 40 3000 0\n", "" },				/* no layout */
		{ "envsize 40 3000 0\n", "envsize 0 3000 0\n" },
		{ "envsize 40 3000 0\n", "envsize 40 3000 2\n" },
	};
	struct pems_manifest m;
	char err[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *t = edit(bad[i][0], bad[i][1]);
		int rc = parse_text(t, &m, err);

		if (rc != -EINVAL)
			ck_abort_msg("case %zu (%s): rc %d, expected -EINVAL", i, bad[i][1], rc);
		ck_assert_uint_eq(m.argc, 0);	/* nothing left behind */
		free(t);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("checkpoint");
	TCase *tc = tcase_create("manifest");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parses_every_field);
	tcase_add_test(tc, test_checksum_and_truncation);
	tcase_add_test(tc, test_refuses_damaged_lines);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
