/* cli_verify.c - the option parser of cli/verify.c for fuzz_cli.c (its statics
 * are reached by including the file; it is not linked twice). */
#include "../../cli/verify.c"
#include "fuzz_cli.h"

int fuzz_cli_verify(int argc, char **argv)
{
	struct pems_verify f = { 0 }, in = { 0 };
	enum pems_format fmt;
	bool quiet = false;

	return verify_parse(argc, argv, &f, &in, &fmt, &quiet);
}
