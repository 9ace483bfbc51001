/*
 * fuzz_manifest.c - fuzz target for the checkpoint manifest parser
 * (pems_manifest_parse, pems/manifest.c): any input is parsed without
 * a crash or a leak; an accepted manifest has the fields the resume path
 * relies on.  The corpus (tests/fuzz/corpus/manifest/) holds manifests
 * written by real runs.
 *
 * An input that starts with "pems-checkpoint " is a whole manifest, as
 * read from disk.  Any other input is the body between the first line
 * and the "crc32c XXXXXXXX" line, which the target adds with the right
 * checksum, so that mutations reach the field parsers instead of
 * stopping at the checksum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "checkpoint.h"
#include "crc32c.h"

/* the manifest text for @data (malloc'd, exactly *len bytes + room) */
static char *manifest_text(const uint8_t *data, size_t size, size_t *len)
{
	static const char head[] = "pems-checkpoint 1\n";
	size_t hl = sizeof(head) - 1;
	char *text;

	if (size >= 16 && !memcmp(data, "pems-checkpoint ", 16)) {
		text = malloc(size ? size : 1);	/* ASan sees any overread */
		if (text)
			memcpy(text, data, size);
		*len = size;
		return text;
	}
	text = malloc(hl + size + 17);
	if (!text)
		return NULL;
	memcpy(text, head, hl);
	memcpy(text + hl, data, size);
	*len = hl + size;
	*len += (size_t)snprintf(text + *len, 17, "crc32c %08x\n",
				 (unsigned)pems_crc32c(0, text, *len));
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pems_manifest m;
	char err[128], *text;
	size_t len;
	unsigned i;
	int rc;

	text = manifest_text(data, size, &len);
	if (!text)
		return 0;
	rc = pems_manifest_parse(text, len, &m, err, sizeof(err));
	free(text);
	if (rc)
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
