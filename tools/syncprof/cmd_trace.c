/*
 * cmd_trace.c - 'syncprof trace'.  Not implemented yet: says so and exits 1.
 */
#include "cli.h"

int cmd_trace(int argc, char **argv)
{
	(void)argc, (void)argv;
	cli_error("trace", "not implemented yet in this version");
	return 1;
}
