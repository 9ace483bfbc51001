/*
 * resume.c - pems-run resume DIR: continue an interrupted run from the
 * checkpoint in DIR, with the command line and environment it recorded.
 */
#include <string.h>
#include "cli.h"

static const char resume_help[] =
	"Usage: pems-run resume DIR\n"
	"Continue a run of sort, aggregate or sgd (or of any pems program run\n"
	"with PEMS_CHECKPOINT_DIR) that was interrupted, from the last checkpoint\n"
	"in DIR (by default a run checkpoints into OUT.pems-ckpt). The run\n"
	"goes on with the command line, environment and directory it was\n"
	"started with and writes the same output it would have written.\n"
	"Refused, with the reason, when the input, the program or the\n"
	"configuration changed, or the checkpoint is damaged.\n"
	"Exit status: that of the resumed run; 1 when it cannot resume.\n";

int cli_resume_main(int argc, char **argv)
{
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(resume_help, stdout);
		return CLI_EXIT_OK;
	}
	if (argc != 2 || argv[1][0] == '-')
		return cli_usage("resume: expected DIR, the checkpoint directory; see 'pems-run resume --help'");
	rc = pems_checkpoint_resume(argv[1], NULL);
	(void)rc;	/* the reason is printed */
	return CLI_EXIT_FAIL;
}
