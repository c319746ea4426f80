/*
 * cmd_report.c - 'syncprof report'.  Not implemented yet: says so and exits 1.
 */
#include "cli.h"

int cmd_report(int argc, char **argv)
{
	(void)argc, (void)argv;
	cli_error("report", "not implemented yet in this version");
	return 1;
}
