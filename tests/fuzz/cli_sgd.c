/* cli_sgd.c - the option parser of cli/sgd.c for fuzz_cli.c (its statics
 * are reached by including the file; it is not linked twice). */
#include "../../cli/sgd.c"
#include "fuzz_cli.h"

int fuzz_cli_sgd(int argc, char **argv)
{
	struct sgd_args a = { 0 };

	a.job.epochs = 1;
	a.job.local_steps = 64;
	a.job.batch = 64;
	cli_runtime_init(&a.rt);
	return sgd_parse(argc, argv, &a);
}
