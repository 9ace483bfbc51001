/* cli_sort.c - the option parser of cli/sort.c for fuzz_cli.c (its statics
 * are reached by including the file; it is not linked twice). */
#include "../../cli/sort.c"
#include "fuzz_cli.h"

int fuzz_cli_sort(int argc, char **argv)
{
	struct sort_args a = { 0 };

	cli_runtime_init(&a.rt);
	return sort_parse(argc, argv, &a);
}
