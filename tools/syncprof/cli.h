/*
 * cli.h - shared pieces of the syncprof command-line tool.
 *
 * Each subcommand lives in its own file (cmd_NAME.c) and has the signature
 * of cli_cmd_fn: it gets argv starting at its own name and returns the
 * process exit status: 0 success, 1 failure, 2 usage error.  Errors are
 * printed once, through cli_error(), as "syncprof NAME: message".
 */
#ifndef SYNCPROF_CLI_H
#define SYNCPROF_CLI_H

#include <stdio.h>

#include "syncprof.h"

typedef int (*cli_cmd_fn)(int argc, char **argv);

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_ctl(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_trace(int argc, char **argv);
/* cmd_trace_whatif.c, cmd_trace_chains.c: 'syncprof trace what-if', 'trace chains' */
int cmd_trace_whatif(int argc, char **argv);
int cmd_trace_chains(int argc, char **argv);
int cmd_attach(int argc, char **argv);

/* Print "syncprof CMD: " + printf-style message + newline to stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "cmd_run.c": the path of libsyncprof-preload.so ($SYNCPROF_PRELOAD, the
 * install's libdir, next to the tool, the build tree), or NULL. */
char *cli_find_preload(void);

/* ---- "ctl_client.c": the client end of the control socket ------------- */

#include <sys/types.h>

/* /proc/PID/comm of @pid into @buf ("" when unknown); 0 or a negative errno. */
int cli_read_comm(pid_t pid, char *buf, size_t size);
/*
 * cli_ctl_request() - send @line (a request, newline included) to @pid's
 * control socket and take its answer: on success the payload (malloc'd,
 * @plen bytes and a NUL after them) in *@payload.  Prints nothing.
 * Return: 0, or a negative errno with one message in @err: -ESRCH no such
 * process, -EPERM another user's, -ENOENT no control socket,
 * -ECONNREFUSED a stale socket, -EADDRINUSE answered by another process,
 * -EPROTO closed without a (whole) answer, -ETIMEDOUT no answer,
 * -EREMOTEIO the process answered "error ..." (its message in @err).
 */
int cli_ctl_request(pid_t pid, const char *line, char **payload, size_t *plen, char *err,
		    size_t esize);
/* Field @key of a "status" answer ("threads: 3" -> "3") into @buf; "?" when
 * absent (@payload as cli_ctl_request() gives it).  Returns @buf. */
const char *cli_ctl_field(const char *payload, const char *key, char *buf, size_t size);

/* ---- "render_opts.c": report options of report and ctl --------------- */

struct cli_render_opts {
	struct syncprof_report_options report;
	const char *output;      /* NULL or "-": stdout */
	const char *format_name; /* as given, NULL when not given */
	const char *sort_name;
	int coalesce_set;        /* --coalesce or --no-coalesce given */
	int merged_set;          /* --merged given */
	int top_set;             /* --top given */
};

void cli_render_opts_init(struct cli_render_opts *o);
/* argv[*i] is a report option: consume it (and its value), return 1; not
 * one: return 0; a bad value: print why and return -1. */
int cli_render_option(const char *cmd, int argc, char **argv, int *i,
		      struct cli_render_opts *o);
/* The report is rendered here from the process's JSON, not by the process:
 * pprof (the process need not link protobuf-c), --merged (a key the
 * control protocol does not carry). */
static inline int cli_render_here(const struct cli_render_opts *o)
{
	return o->report.format == SYNCPROF_FORMAT_PPROF || o->merged_set;
}
/*
 * The control protocol's "report" line for @o, without its newline (room
 * is left for one): only the options given, so that the process's own
 * SYNCPROF_OPTIONS (format, top, sort, ...) apply to the others; JSON
 * when the report is rendered here.  -1 when it does not fit, or when
 * --src-root holds a space (the line's separator).  'syncprof ctl PID
 * report' sends it; 'syncprof attach' hands it to the process it
 * attaches to.
 */
int cli_report_request(const struct cli_render_opts *o, char *buf, size_t size);
FILE *cli_open_output(const char *cmd, const struct cli_render_opts *o);
int cli_close_output(const char *cmd, const struct cli_render_opts *o, FILE *f);
extern const char cli_render_help[];
/* elf_symbols.c: the function containing file offset @file_off of the ELF
 * file at @path (absolute), and the offset into it; NULL when unknown. */
#include <stdint.h>
const char *cli_elf_symbol(const char *path, uint64_t file_off, uint64_t *sym_off);

#endif
