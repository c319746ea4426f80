/*
 * cmd_ctl.c - 'syncprof ctl': control a running profiled process through
 * its control socket (src/runtime/control.c, docs/control.md).
 *
 *   syncprof ctl PID status|on|off|reset|report [report options]
 *   syncprof ctl --list
 *
 * Design: one connection per command, through ctl_client.c (which also
 * names each way of failing); this file is the command line and --list.
 *
 * "report -f pprof" asks the process for JSON (its rows with names
 * resolved there) and encodes pprof here: the process need not carry
 * protobuf-c and zlib (libsyncprof.a refers to them weakly, and the
 * preload library may not link them).  "report --merged" does the same
 * for every format: the control protocol carries no "merged" key (a
 * process of an older syncprof would refuse it), so the table or page is
 * rendered here from the process's JSON, shaped there as asked.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "base/control_wire.h"
#include "read/profile_load.h"

static const char help[] =
	"Usage: syncprof ctl PID status|on|off|reset|report [REPORT OPTIONS]\n"
	"       syncprof ctl --list\n"
	"\n"
	"Control a running process profiled with syncprof, through its control\n"
	"socket.  Which processes listen:\n"
	"  - started with 'syncprof run -- ./prog' (or LD_PRELOAD of\n"
	"    libsyncprof-preload.so): yes, by default.  run turns on profiling\n"
	"    (enabled=1) and, with it, the control socket (control=1) and the\n"
	"    report at exit; --no-control (control=0) turns the socket off;\n"
	"  - built with syncprof/instrument.h or linked with libsyncprof: only\n"
	"    with SYNCPROF_OPTIONS=control=1 (e.g. enabled=1,control=1 ./prog).\n"
	"Only the process's owner and root get an answer.\n"
	"\n"
	"Commands:\n"
	"  status   profiling on or off and since when, threads, sites tracked\n"
	"  on       start recording          off      stop recording (data kept)\n"
	"  reset    later reports show only what happens from now on\n"
	"  report   print the report of the running process\n"
	"  --list   list this user's processes that can be controlled\n"
	"\n"
	"%s"
	"Report options not given keep the process's own SYNCPROF_OPTIONS values.\n"
	"\n"
	"Sockets live in $SYNCPROF_CONTROL_DIR, by default /dev/shm/syncprof-UID\n"
	"(or /tmp/syncprof-UID where /dev/shm cannot hold it).\n"
	"Exit status: 0 done, 1 the process could not be reached or refused,\n"
	"2 bad usage.\n"
	"Example: syncprof ctl 4242 report -n 10 -s avg\n";

static const char *const verbs[] = { "status", "on", "off", "reset", "report" };

/*
 * Run @line on @pid; payload to *payload (malloc'd) on success.
 * Return 0, or 1 after printing why (unless @quiet).
 */
static int ctl_request(pid_t pid, const char *line, char **payload, size_t *plen, int quiet)
{
	char err[512];

	if (!cli_ctl_request(pid, line, payload, plen, err, sizeof(err)))
		return 0;
	if (!quiet)
		cli_error("ctl", "%s", err);
	return 1;
}

struct listed {
	int pid, dir; /* the candidate (sp_ctl_dir) its socket is in */
};

static int cmp_listed(const void *a, const void *b)
{
	const struct listed *x = a, *y = b;

	return x->pid != y->pid ? (x->pid > y->pid) - (x->pid < y->pid) : x->dir - y->dir;
}

static int do_list(void)
{
	char dirs[2][108], on[16], thr[16], sites[16], cmd[256];
	static struct listed pids[4096];
	int n = 0, ndirs = 0, seen = 0, rc;
	struct dirent *d;
	DIR *dp;

	/* Every candidate of the server's (control_wire.h). */
	while (ndirs < 2 && !(rc = sp_ctl_dir(geteuid(), ndirs, dirs[ndirs], sizeof(dirs[0]))))
		ndirs++;
	if (rc == -ENAMETOOLONG) {
		cli_error("ctl", "SYNCPROF_CONTROL_DIR is too long");
		return 1;
	}
	for (int k = 0; k < ndirs; k++) {
		dp = opendir(dirs[k]);
		if (!dp) {
			if (errno == ENOENT)
				continue;
			cli_error("ctl", "cannot read %s: %s", dirs[k], strerror(errno));
			return 1;
		}
		seen++;
		while ((d = readdir(dp)) && n < (int)(sizeof(pids) / sizeof(*pids))) {
			char *end;
			long pid = strtol(d->d_name, &end, 10);

			if (pid > 0 && !strcmp(end, ".sock"))
				pids[n++] = (struct listed){ (int)pid, k };
		}
		closedir(dp);
	}
	if (!seen) {
		fprintf(stderr, "syncprof ctl: no controllable process (%s%s%s does not exist)\n",
			dirs[0], ndirs > 1 ? " nor " : "", ndirs > 1 ? dirs[1] : "");
		return 0;
	}
	qsort(pids, (size_t)n, sizeof(*pids), cmp_listed);
	printf("%8s  %-9s  %7s  %7s  %s\n", "PID", "profiling", "threads", "sites", "command");
	for (int i = 0; i < n; i++) {
		char *payload = NULL;
		size_t plen;

		if (i && pids[i].pid == pids[i - 1].pid)
			continue; /* in both directories: asked once */
		if (ctl_request(pids[i].pid, "status\n", &payload, &plen, 1)) {
			char path[160];

			/* The process is gone: its socket files are litter. */
			if (kill(pids[i].pid, 0) && errno == ESRCH)
				for (int j = i; j < n && pids[j].pid == pids[i].pid; j++) {
					snprintf(path, sizeof(path), "%s/%d.sock",
						 dirs[pids[j].dir], pids[j].pid);
					unlink(path);
				}
			continue;
		}
		printf("%8d  %-9s  %7s  %7s  %s\n", pids[i].pid,
		       cli_ctl_field(payload, "profiling", on, sizeof(on)),
		       cli_ctl_field(payload, "threads", thr, sizeof(thr)),
		       cli_ctl_field(payload, "sites", sites, sizeof(sites)),
		       cli_ctl_field(payload, "command", cmd, sizeof(cmd)));
		free(payload);
	}
	return 0;
}


/* The process's JSON report, rendered (pprof: encoded) to @out. */
static int render_from_json(pid_t pid, const char *json, size_t len,
			    const struct cli_render_opts *o, FILE *out)
{
	struct sp_profile p;
	char name[64], err[512];
	int rc;

	snprintf(name, sizeof(name), "the report of process %d", (int)pid);
	if (sp_profile_parse(name, json, len, &p, err, sizeof(err))) {
		cli_error("ctl", "%s", err);
		return 1;
	}
	rc = sp_render(out, &p, &o->report);
	if (rc)
		cli_error("ctl", "rendering the report (%s) failed: %s",
			  sp_format_name(o->report.format), strerror(-rc));
	sp_profile_free(&p);
	return rc ? 1 : 0;
}

int cmd_ctl(int argc, char **argv)
{
	struct cli_render_opts o;
	char line[SP_CTL_LINE_MAX + 1], *end, *payload = NULL;
	const char *verb;
	size_t plen = 0;
	long pid;
	int v = -1;
	FILE *out;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf(help, cli_render_help);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--list"))
		return do_list();
	if (argc < 3) {
		cli_error("ctl", "usage: syncprof ctl PID status|on|off|reset|report [OPTIONS] "
				 "or syncprof ctl --list (see --help)");
		return 2;
	}
	pid = strtol(argv[1], &end, 10);
	if (!*argv[1] || *end || pid <= 0 || pid > 0x3fffffff) {
		cli_error("ctl", "'%s' is not a process id", argv[1]);
		return 2;
	}
	verb = argv[2];
	for (int i = 0; i < (int)(sizeof(verbs) / sizeof(*verbs)); i++)
		if (!strcmp(verb, verbs[i]))
			v = i;
	if (v < 0) {
		cli_error("ctl", "unknown command '%s' (valid: status, on, off, reset, report)", verb);
		return 2;
	}
	cli_render_opts_init(&o);
	for (int i = 3; i < argc; i++) {
		int r = v == 4 ? cli_render_option("ctl", argc, argv, &i, &o) : 0;

		if (r < 0)
			return 2;
		if (r == 0) {
			cli_error("ctl", "unexpected argument '%s' after '%s'", argv[i], verb);
			return 2;
		}
	}
	if (v == 4) {
		if (cli_report_request(&o, line, sizeof(line))) {
			cli_error("ctl", "report options too long (or --src-root with a space)");
			return 2;
		}
	} else {
		snprintf(line, sizeof(line), "%s", verb);
	}
	strcat(line, "\n");
	if (ctl_request((pid_t)pid, line, &payload, &plen, 0))
		return 1;
	out = cli_open_output("ctl", &o);
	if (!out) {
		free(payload);
		return 1;
	}
	if (v == 4 && cli_render_here(&o)) {
		int rc = render_from_json((pid_t)pid, payload, plen, &o, out);

		free(payload);
		if (cli_close_output("ctl", &o, out))
			rc = 1;
		return rc;
	}
	fwrite(payload, 1, plen, out);
	free(payload);
	return cli_close_output("ctl", &o, out) ? 1 : 0;
}
