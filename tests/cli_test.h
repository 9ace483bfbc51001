/*
 * cli_test.h - the harness of the tests that run pems-run as a user does
 * (check_cli, check_aggregate, check_sgd): run the binary with arguments
 * in a forked child, capture its exit status, stdout and stderr; names in
 * the scratch directory; whole-file reads and writes.
 *
 * The binary is $PEMS_RUN (default ./build/pems-run); the scratch
 * directory is $PEMS_TEST_TMP, else a new /tmp/<program>.XXXXXX.
 *
 * Header-only: everything is static inline (unused helpers do not warn).
 */
#ifndef CLI_TEST_H
#define CLI_TEST_H

#include "sanitizer_noise.h"
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CLI_MAX_ARGS 64
#define OUT_MAX 65536

static const char *pems_run;	/* the binary under test */
static char scratch[4096];	/* the program's scratch directory */
static char dir[4096];		/* where file() names files: scratch, or a
				 * test's own subdirectory of it */

struct result {
	int status;		/* exit status, or 128 + signal */
	char out[OUT_MAX];	/* stdout */
	char err[OUT_MAX];	/* stderr, sanitizer reports stripped */
};

/* NAME inside dir; 16 results may be live at once (e.g. in one RUN). */
static inline char *file(const char *name)
{
	static char bufs[16][4200];
	static int next;
	char *b = bufs[next++ % 16];

	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

/* The first len - 1 bytes of PATH as a string ("" if it cannot be read). */
static inline void slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/* The whole of PATH, NUL-terminated, in a malloc'd buffer (free it). */
static inline void *read_file(const char *path, size_t *len)
{
	struct stat st;
	FILE *f = fopen(path, "rb");
	char *buf;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	*len = (size_t)st.st_size;
	buf = malloc(*len + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, *len, f), *len);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static inline void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

static inline bool same_bytes(const char *a, const char *b)
{
	size_t la, lb;
	void *x = read_file(a, &la), *y = read_file(b, &lb);
	bool same = la == lb && !memcmp(x, y, la);

	free(x);
	free(y);
	return same;
}

static inline void cli_child(char *const argv[], const char *out, const char *err)
{
	int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int in = open("/dev/null", O_RDONLY);

	if (o < 0 || e < 0 || in < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
	    dup2(in, 0) < 0)
		_exit(126);
	execv(pems_run, argv);
	_exit(127);
}

/* Run pems-run with the NULL-terminated arguments; fills *r. */
static inline void run_argv(struct result *r, const char *const *args)
{
	char *argv[CLI_MAX_ARGS + 2], out[4200], err[4200];
	int i, st;
	pid_t pid;

	argv[0] = (char *)pems_run;
	for (i = 0; args[i]; i++) {
		ck_assert_msg(i < CLI_MAX_ARGS, "more than %d arguments", CLI_MAX_ARGS);
		argv[i + 1] = (char *)args[i];
	}
	argv[i + 1] = NULL;
	snprintf(out, sizeof(out), "%s/.stdout", dir);
	snprintf(err, sizeof(err), "%s/.stderr", dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		cli_child(argv, out, err);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
	strip_sanitizer_noise(r->err);
}

#define RUN(r, ...) run_argv((r), (const char *const[]){ __VA_ARGS__, NULL })

/* Exit status, and exact stderr unless err is NULL. */
static inline void expect(const struct result *r, int status, const char *err)
{
	ck_assert_msg(r->status == status, "exit %d, wanted %d; stderr: %s",
		      r->status, status, r->err);
	if (err)
		ck_assert_str_eq(r->err, err);
}

static inline void ok(const struct result *r)
{
	expect(r, 0, NULL);
}

/* Exit status, and stderr containing needle. */
static inline void fails_with(const struct result *r, int status, const char *needle)
{
	expect(r, status, NULL);
	ck_assert_msg(strstr(r->err, needle), "stderr lacks '%s': %s", needle, r->err);
}

/*
 * Find the binary and make the scratch directory (also dir).  Returns 0,
 * or the exit status main should return: 77 (skip) when pems-run is not
 * built, 1 when no scratch directory can be made.
 */
static inline int cli_test_init(const char *program)
{
	const char *tmp = getenv("PEMS_TEST_TMP");

	pems_run = getenv("PEMS_RUN");
	if (!pems_run || !*pems_run)
		pems_run = "./build/pems-run";
	if (access(pems_run, X_OK)) {
		printf("skip: %s is not built (%s); set PEMS_RUN\n", pems_run,
		       strerror(errno));
		return 77;
	}
	if (tmp && *tmp) {
		snprintf(scratch, sizeof(scratch), "%s", tmp);
	} else {
		snprintf(scratch, sizeof(scratch), "/tmp/%s.XXXXXX", program);
		if (!mkdtemp(scratch))
			return 1;
	}
	memcpy(dir, scratch, sizeof(dir));
	return 0;
}

/* Run the suite; the exit status main should return. */
static inline int cli_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}

#endif
