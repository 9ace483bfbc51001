/*
 * sort_io.h - input and output paths of `pems-run sort` (sort_io.c).
 */
#ifndef PEMS_CLI_SORT_IO_H
#define PEMS_CLI_SORT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include "pems.h"

struct sort_out {
	const char *arg;	/* OUT as given ("-": stdout) */
	char path[4096];	/* the regular file the sort writes */
	bool stream;		/* path is scratch, copied to arg at the end */
};

/* Copy stdin to a new scratch file @path (removed on abort).  Returns an
 * exit status (message printed). */
int sort_spool_stdin(const struct pems_config *cfg, char *path, size_t len);
/* Resolve and check OUT before any work (see sort_io.c).  Returns an
 * exit status (message printed). */
int sort_out_prepare(struct sort_out *o, const char *arg, const struct pems_config *cfg);
/* After the sort (@ok: it succeeded): stream the scratch output to OUT
 * and remove it.  Returns an exit status. */
int sort_out_finish(struct sort_out *o, int ok);
/* @path (a file the run will write, e.g. --stats-json) can be written:
 * not a directory, writable, or creatable.  Returns an exit status. */
int sort_check_writable(const char *cmd, const char *what, const char *path);

#endif
