/*
 * cmd_run.c - 'syncprof run'.  Not implemented yet: says so and exits 1.
 */
#include "cli.h"

int cmd_run(int argc, char **argv)
{
	(void)argc, (void)argv;
	cli_error("run", "not implemented yet in this version");
	return 1;
}
