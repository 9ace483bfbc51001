/* stub_main.c - what cli/main.c defines for the rest of the CLI, for the
 * fuzz targets that link the CLI's files without its main(). */
#include "cli.h"

char **cli_argv;
