/*
 * fuzz_manifest.c - fuzz target for the checkpoint manifest parser
 * (pems_manifest_parse, pems/checkpoint.c): any input is parsed without
 * a crash or a leak; an accepted manifest has the fields the resume path
 * relies on.  The corpus (tests/fuzz/corpus/manifest/) holds manifests
 * written by real runs.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../../pems/checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pems_manifest m;
	char err[128];
	unsigned i;

	if (pems_manifest_parse((const char *)data, size, &m, err, sizeof(err)))
		return 0;
	/* what load_manifest's callers use without checking again */
	if (!m.argc || !m.exe || !m.cwd || !m.dir || !m.state || !m.ndirs ||
	    m.wlog >= 3 || m.rlog >= 3)
		abort();
	for (i = 0; i < m.ndirs; i++)
		if (!m.tmp[i])
			abort();
	for (i = 0; i < m.nfiles; i++)
		if (!m.files[i].path || m.files[i].h < 0 || m.files[i].h >= 256)
			abort();
	pems_manifest_free(&m);
	return 0;
}
