/*
 * run_report.h - 'syncprof run' names and renders its program's report at
 * exit (run_report.c).  Private to tools/syncprof.
 */
#ifndef SYNCPROF_RUN_REPORT_H
#define SYNCPROF_RUN_REPORT_H

#include <limits.h>

#include "read/options.h"

struct run_report {
	char dir[PATH_MAX];     /* the private directory; "" when none */
	struct sp_options opts; /* the program's SYNCPROF_OPTIONS, parsed */
	char *options;          /* ... and as given (a process that kept them is rendered with opts) */
	int parsed;
	/* how the program ended (set by run before run_report_finish()) */
	int pid;
	int interrupted;        /* the signal that stopped it (run_report_interrupt) */
	int killed_by;          /* it died of this signal; 0: it exited */
	char why[256];          /* why no profile could be had at the interrupt */
};

/*
 * run_report_interrupt() - run got @sig (SIGINT, SIGTERM, SIGHUP) while
 * the program @pid is alive: fetch its profile now, over its control
 * socket (a "report format=json top=0", saved in the private directory),
 * before @sig is passed on, so that a program that dies of @sig still has
 * its report.  Once per run; prints nothing (run_report_finish() says).
 */
void run_report_interrupt(struct run_report *r, int pid, int sig);

/*
 * run_report_prepare() - parse @options (the SYNCPROF_OPTIONS the program
 * will get) and, unless they say symbolize=inprocess or report_at_exit=0,
 * make the private directory the program hands its profile over in.
 * Prints one line when the directory cannot be made (the program then
 * reports itself).  Returns 0; r->dir is "" when nothing is handed over.
 */
int run_report_prepare(struct run_report *r, const char *options);

/*
 * run_report_finish() - after the program is reaped: when it left a
 * profile, name, render and write it as its report at exit would have
 * been (stderr or output=FILE; the same messages on failure); remove the
 * directory; free @r.  Call exactly once per prepare.
 */
void run_report_finish(struct run_report *r);

#endif
