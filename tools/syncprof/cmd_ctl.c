/*
 * cmd_ctl.c - 'syncprof ctl'.  Not implemented yet: says so and exits 1.
 */
#include "cli.h"

int cmd_ctl(int argc, char **argv)
{
	(void)argc, (void)argv;
	cli_error("ctl", "not implemented yet in this version");
	return 1;
}
