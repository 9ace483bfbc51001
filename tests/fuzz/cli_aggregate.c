/* cli_aggregate.c - the option parser of cli/aggregate.c for fuzz_cli.c (its statics
 * are reached by including the file; it is not linked twice). */
#include "../../cli/aggregate.c"
#include "fuzz_cli.h"

int fuzz_cli_aggregate(int argc, char **argv)
{
	static struct agg_args a;

	memset(&a, 0, sizeof(a));
	cli_runtime_init(&a.rt);
	return agg_parse(argc, argv, &a);
}
