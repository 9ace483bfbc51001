/*
 * verify.c - `pems-run verify`: check that a file is sorted and, with
 * --against, that it holds the same records as the input (count and an
 * order-independent checksum: sum and xor of a 64-bit hash per record,
 * like valsort).  Streams in CLI_IO_BLOCK buffers; the input is scanned
 * by a second thread at the same time.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"

static const char verify_help[] =
	"Usage: pems-run verify --format FMT FILE [--against INPUT]\n"
	"Check that FILE's records are in non-decreasing key order; with\n"
	"--against, also that FILE holds exactly INPUT's records (same count and\n"
	"the same order-independent checksum).\n"
	"\n"
	"  --format FMT      u64, rec100 (key: first 10 bytes) or ascii100\n"
	"                    (key: the first 14 characters)\n"
	"  --against INPUT   the unsorted input FILE was made from\n"
	"  --quiet           no progress bar\n"
	"  -h, --help        show this help\n"
	"\n"
	"Prints 'verify: N records, sorted, checksum 0x...' on success.\n"
	"Exit status: 0 ok, 1 not sorted, not matching or unreadable, 2 usage error.\n";

enum { OPT_AGAINST = CLI_OPT_FIRST_LOCAL };

struct scan {
	const char *path;
	const struct pems_record_format *f;
	size_t rsz;
	struct cli_progress *prog;	/* NULL: no progress */
	atomic_bool *stop;		/* set: give up (the other scan failed) */
	struct pems_record_scan rs;	/* order, well-formedness, checksum */
	int err;		/* -errno of a read failure */
	const char *kind;	/* not a file pems reads: what it is */
	bool bad_size;
	uint64_t size;		/* file bytes */
};

static int read_full(int fd, uint8_t *buf, size_t len, size_t *got)
{
	ssize_t n;

	*got = 0;
	while (*got < len) {
		n = read(fd, buf + *got, len - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		*got += (size_t)n;
	}
	return 0;
}

static int scan_fd(struct scan *s, int fd, uint8_t *buf)
{
	size_t per = CLI_IO_BLOCK / s->rsz, got;
	long taken;
	int rc;

	for (;;) {
		rc = read_full(fd, buf, per * s->rsz, &got);
		if (rc)
			return rc;
		if (got % s->rsz) {	/* the file grew or shrank meanwhile */
			s->bad_size = true;
			return 0;
		}
		taken = pems_record_scan(&s->rs, buf, got);
		if (taken == -ENOMEM)
			return -ENOMEM;
		if (taken < 0 || got < per * s->rsz)
			return 0;
		if (atomic_load(s->stop))
			return 0;
		if (s->prog)
			cli_progress_update(s->prog, "reading",
					    s->rs.records * s->rsz, s->size);
	}
}

/* Scan s->path; failures are recorded in *s, reported by report_scan. */
static void scan_file(struct scan *s)
{
	struct stat st;
	uint8_t *buf;
	int fd;

	fd = open(s->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);	/* a FIFO must not hang */
	if (fd < 0) {
		s->err = -errno;
		return;
	}
	if (fstat(fd, &st)) {
		s->err = -errno;
		goto out_close;
	}
	s->kind = pems_input_kind(st.st_mode);
	if (s->kind)
		goto out_close;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	s->size = (uint64_t)st.st_size;
	if (s->size % s->rsz) {
		s->bad_size = true;
		goto out_close;
	}
	buf = malloc(CLI_IO_BLOCK);
	if (!buf) {
		s->err = -ENOMEM;
		goto out_close;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	s->err = scan_fd(s, fd, buf);
	free(buf);
out_close:
	close(fd);
}

static void *scan_thread(void *arg)
{
	scan_file(arg);
	return NULL;
}

/* Message for a failed scan; returns true when there was one. */
static bool report_scan(const struct scan *s)
{
	if (s->kind)
		cli_error("verify: %s is %s; verify reads a regular file: save the data to a file first",
			  s->path, s->kind);
	else if (s->err)
		cli_error("verify: %s: %s", s->path, strerror(-s->err));
	else if (s->bad_size)
		cli_error("verify: %s: size %llu bytes is not a multiple of the %zu-byte %s record",
			  s->path, (unsigned long long)s->size, s->rsz, s->f->name);
	else if (s->rs.malformed)
		cli_error("verify: %s: record %llu is not a 100-byte line (byte 99 is not a newline)",
			  s->path, (unsigned long long)s->rs.bad);
	else if (s->rs.unsorted)
		cli_error("verify: %s: not sorted: record %llu is smaller than record %llu",
			  s->path, (unsigned long long)s->rs.bad,
			  (unsigned long long)s->rs.bad - 1);
	else
		return false;
	return true;
}

static void print_ok(const struct scan *f, bool against)
{
	printf("verify: %llu records, sorted, checksum 0x%016llx%016llx%s\n",
	       (unsigned long long)f->rs.records,
	       (unsigned long long)f->rs.sum, (unsigned long long)f->rs.xor,
	       against ? " matches input" : "");
}

/* Compare FILE's records with INPUT's; returns the exit status. */
static int compare(const struct scan *f, const struct scan *in)
{
	if (f->rs.records != in->rs.records) {
		cli_error("verify: %s: %llu records but input %s has %llu",
			  f->path, (unsigned long long)f->rs.records, in->path,
			  (unsigned long long)in->rs.records);
		return CLI_EXIT_FAIL;
	}
	if (f->rs.sum != in->rs.sum || f->rs.xor != in->rs.xor) {
		cli_error("verify: %s: checksum 0x%016llx%016llx differs from input %s's 0x%016llx%016llx (records lost, duplicated or changed)",
			  f->path, (unsigned long long)f->rs.sum,
			  (unsigned long long)f->rs.xor, in->path,
			  (unsigned long long)in->rs.sum,
			  (unsigned long long)in->rs.xor);
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int verify_run(struct scan *f, struct scan *in)
{
	pthread_t tid;
	bool threaded = false;
	int rc = CLI_EXIT_OK;

	if (in->path) {
		threaded = !pthread_create(&tid, NULL, scan_thread, in);
		if (!threaded)
			scan_file(in);
	}
	scan_file(f);
	if (f->prog)
		cli_progress_clear(f->prog);
	if (report_scan(f)) {
		atomic_store(f->stop, true);
		rc = CLI_EXIT_FAIL;
	}
	if (threaded)
		pthread_join(tid, NULL);
	if (rc)
		return rc;
	if (in->path && report_scan(in))
		return CLI_EXIT_FAIL;
	if (in->path)
		rc = compare(f, in);
	if (rc == CLI_EXIT_OK)
		print_ok(f, in->path != NULL);
	return rc;
}

static int verify_parse(int argc, char **argv, struct scan *f,
			struct scan *in, enum pems_format *fmt, bool *quiet)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, CLI_OPT_FORMAT },
		{ "against", required_argument, NULL, OPT_AGAINST },
		{ "quiet", no_argument, NULL, CLI_OPT_QUIET },
		{ "help", no_argument, NULL, CLI_OPT_HELP },
		{ NULL, 0, NULL, 0 }
	};
	bool have_format = false;
	int c;

	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case CLI_OPT_HELP:
			fputs(verify_help, stdout);
			return -1;
		case CLI_OPT_FORMAT:
			if (cli_parse_format("verify", optarg, fmt))
				return CLI_EXIT_USAGE;
			have_format = true;
			break;
		case OPT_AGAINST:
			in->path = optarg;
			break;
		case CLI_OPT_QUIET:
			*quiet = true;
			break;
		default:
			return cli_bad_option("verify", c, argv);
		}
	}
	if (!have_format)
		return cli_usage("verify: --format is required (u64, rec100 or ascii100)");
	if (optind != argc - 1)
		return cli_usage("verify: expected one FILE; see 'pems-run verify --help'");
	f->path = argv[optind];
	return 0;
}

int cli_verify_main(int argc, char **argv)
{
	struct scan f = { 0 }, in = { 0 };
	struct cli_progress prog;
	enum pems_format fmt = PEMS_FMT_U64;
	atomic_bool stop = false;
	bool quiet = false;
	int rc;

	rc = verify_parse(argc, argv, &f, &in, &fmt, &quiet);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	f.f = in.f = pems_format_get(fmt);
	f.rsz = in.rsz = f.f->size;
	pems_record_scan_init(&f.rs, f.f, true);
	pems_record_scan_init(&in.rs, in.f, false);
	f.stop = in.stop = &stop;
	cli_progress_init(&prog, "verify", quiet);
	f.prog = &prog;
	rc = verify_run(&f, &in);
	pems_record_scan_free(&f.rs);
	return rc;
}
