/*
 * main.c - the syncprof command: dispatch to subcommands.
 *
 * Every subcommand maps its errors to one message on stderr and a non-zero
 * exit status; usage errors exit 2, failures 1.  The tool uses libsyncprof
 * like any other client.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "syncprof.h"

static const char usage[] =
	"Usage: syncprof [--help] [--version] COMMAND [ARGS...]\n"
	"\n"
	"syncprof is a synchronization profiler for C and C++ programs on Linux.\n"
	"It reports the call sites where threads waited for mutexes, recursive\n"
	"mutexes, condition variables, reader-writer locks, spinlocks, semaphores,\n"
	"barriers and joins (pthread and C11), for locks that wait through\n"
	"syscall(SYS_futex) (type futex: Rust std, parking_lot, Abseil; docs/futex.md)\n"
	"and for glibc's own locks (type glibc_lock: stdio FILE locks, malloc arenas;\n"
	"docs/glibc-locks.md).\n"
	"\n"
	"Commands:\n"
	"  run      profile a program:   syncprof run [OPTIONS] -- PROGRAM [ARGS...]\n"
	"  report   re-render a saved JSON profile\n"
	"  ctl      control a running profiled process\n"
	"  top      a live view of a running profiled process: syncprof top PID\n"
	"  attach   profile a running process for a while: syncprof attach PID [-d S]\n"
	"  trace    read a lock-event trace: dump, stats, export, what-if, chains\n"
	"'syncprof COMMAND --help' describes each.\n"
	"\n"
	"Profiling with compile-time instrumentation (exact file:line sites):\n"
	"  cc -include syncprof/instrument.h prog.c $(pkg-config --cflags --libs syncprof)\n"
	"  SYNCPROF_OPTIONS=enabled=1 ./a.out        # report on stderr at exit\n"
	"\n"
	"Profiling an unmodified program (interposed calls; docs/preload.md):\n"
	"  syncprof run --hold -n 10 -- ./a.out      # report on stderr at exit\n"
	"\n"
	"Profiling a process that is already running (ptrace; docs/attach.md):\n"
	"  syncprof attach PID -d 10 -n 10            # report after 10 s, then detach\n"
	"\n"
	"SYNCPROF_OPTIONS keys: enabled, output, format, top, sort, coalesce, merged,\n"
	"report_at_exit, account, src_root, frames, skip, skip_frames, hold,\n"
	"hold_sample, hold_clock, hold_states, hold_where, lock_order, columns,\n"
	"control, warn_wait, deadlock, report_signal, trace, trace_buffer,\n"
	"trace_events, trace_min_wait, glibc_locks, symbolize\n"
	"(docs/options.md has them all).\n";

static const struct {
	const char *name;
	cli_cmd_fn fn;
} commands[] = {
	{ "run", cmd_run },
	{ "report", cmd_report },
	{ "ctl", cmd_ctl },
	{ "top", cmd_top },
	{ "trace", cmd_trace },
	{ "attach", cmd_attach },
};

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "syncprof %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

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
	for (size_t i = 0; i < sizeof(commands) / sizeof(*commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "syncprof: unknown command '%s' (try 'syncprof --help')\n", argv[1]);
	return 2;
}
