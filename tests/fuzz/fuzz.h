/*
 * fuzz.h - what the fuzz targets of tests/fuzz/ share.
 *
 * Every target defines LLVMFuzzerTestOneInput().  It is linked either
 * with libFuzzer (clang -fsanitize=fuzzer: `make fuzz`) or with
 * replay.c, a plain main() that feeds it every stored corpus file
 * (`make check`, any compiler).  Targets must not write files other
 * than memfds and must reset every global they touch per input.
 */
#ifndef PEMS_FUZZ_H
#define PEMS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_ARGS 64

/* Split @data at NUL bytes into at most FUZZ_MAX_ARGS - 1 arguments after
 * argv[0] = @prog; the strings live in *@storage (free it).  Returns argc. */
int fuzz_argv(const uint8_t *data, size_t size, const char *prog, char **argv,
	      char **storage);

/* An anonymous file (memfd) holding @data; *@path (>= 32 bytes) gets a
 * name that open(2) accepts.  Returns the fd (close it) or -1. */
int fuzz_memfd(const uint8_t *data, size_t size, char *path);

#endif
