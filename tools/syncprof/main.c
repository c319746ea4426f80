/*
 * main.c - the syncprof command: dispatch to subcommands.
 *
 * Every subcommand maps its errors to one message on stderr and a non-zero
 * exit status; usage errors exit 2, failures 1.  The tool uses libsyncprof
 * like any other client.
 */
#include <stdio.h>
#include <string.h>

#include "syncprof.h"

static const char usage[] =
	"Usage: syncprof [--help] [--version] COMMAND [ARGS...]\n"
	"\n"
	"syncprof is a synchronization profiler for C and C++ programs on Linux.\n"
	"It reports the call sites where threads waited for mutexes, recursive\n"
	"mutexes, condition variables, reader-writer locks and spinlocks.\n"
	"\n"
	"Profiling with compile-time instrumentation (exact file:line sites):\n"
	"  cc -include syncprof/instrument.h prog.c $(pkg-config --cflags --libs syncprof)\n"
	"  SYNCPROF_OPTIONS=enabled=1 ./a.out        # report on stderr at exit\n"
	"\n"
	"SYNCPROF_OPTIONS keys: enabled, output, format, top, sort, coalesce,\n"
	"report_at_exit, src_root (see docs/options.md).\n"
	"\n"
	"Commands: none yet besides --help and --version; 'run', 'report', 'ctl'\n"
	"and 'trace' are planned.\n";

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("syncprof %s\n", SYNCPROF_VERSION_STRING);
		return 0;
	}
	fprintf(stderr, "syncprof: unknown command '%s' (try 'syncprof --help')\n", argv[1]);
	return 2;
}
