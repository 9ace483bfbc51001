/* cli_gen_kv.c - the option parser of cli/gen_kv.c for fuzz_cli.c (its statics
 * are reached by including the file; it is not linked twice). */
#include "../../cli/gen_kv.c"
#include "fuzz_cli.h"

int fuzz_cli_gen_kv(int argc, char **argv)
{
	struct pems_gen_kv g = { .groups = 1000, .seed = 1 };
	const char *out = NULL;
	bool quiet = false;

	return kv_parse(argc, argv, &g, &out, &quiet);
}
