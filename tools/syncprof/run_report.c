/*
 * run_report.c - the report at exit of 'syncprof run''s program, named and
 * rendered by run once the program is gone (issue 14: at most 4 MB of RSS
 * added to the profiled process).
 *
 * Why: naming return addresses with libdw reads debug information into
 * the process that does it - tens of MB for a program whose libraries have
 * debug packages installed (pigz -p 4: 5.8 MB bare, 2 MB more profiled,
 * ~34 MB at its exit report).  Run is a process of its own that outlives
 * the program: it can pay that.
 *
 * How: before the fork, run_report_prepare() makes a private directory
 * (mkdtemp in $TMPDIR, else /dev/shm, else /tmp, mode 0700: tmp_root())
 * and tells the program through
 * SYNCPROF_RUN=root:DIR (see lifecycle.c: only the program itself acts on
 * it; what it execs and its children do not see DIR, a child it forks is
 * told apart by its pid).  At exit the program shapes its profile with the
 * report options as always, names nothing that needs the symbolizer
 * (instrumented sites keep file, line and function; interposed ones their
 * address) and writes it as profile JSON, with the mappings of every
 * address (file, offset, build ID), to DIR/profile.json, and the expanded,
 * absolute output=FILE to DIR/output.  run_report_finish() reads it back
 * (profile_load.c), shapes it again with the same options (the same rows:
 * shaping is idempotent), names each unnamed address from the file of its
 * mapping (sp_profile_name_files: the lookup the program would have made),
 * renders it in the user's format and writes it where the program would
 * have: stderr, or FILE whole or not at all (report_file.c), with the same
 * messages.  The report options are parsed from the SYNCPROF_OPTIONS the
 * program gets, by the program's own parser (src/read/options.c), so the
 * two cannot disagree.
 *
 * When it cannot: symbolize=inprocess (--symbolize inprocess) or no
 * report at exit asked for: nothing is prepared; no private directory:
 * one line says so, and the program reports itself as before; the
 * program fails to write there: it says so and reports itself.  A program
 * killed by a signal, or that leaves by _exit() or exec(), writes
 * nothing, as it reported nothing before.
 *
 * Alternatives considered: a SYNCPROF_OPTIONS key for DIR (every child
 * and exec'd program inherits SYNCPROF_OPTIONS unchanged: all would write
 * the same file); a pipe instead of a file (the program's exit would
 * block on run, and an fd of ours would be visible to the program all its
 * life); symbolizing in the program and unmapping the debug information
 * afterwards (the peak RSS is what counts, and it is reached during).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "read/options.h"
#include "read/profile_load.h"
#include "run_report.h"

/*
 * Where the private directory goes: $TMPDIR when set, else /dev/shm when
 * we may write there, else /tmp.  Every profiled process makes two files
 * in it at its exit; on tmpfs that costs ~30 us, on the ext4 /tmp of the
 * VM of docs/cost.md ("Per process") up to 1.5 ms, which ext4 spends
 * finding a free inode past the recently deleted ones.  The profiles are
 * small (a few KB to a few MB) and leave with run.
 */
static const char *tmp_root(void)
{
	const char *tmp = getenv("TMPDIR");
	struct stat st;

	if (tmp && *tmp)
		return tmp;
	if (!stat("/dev/shm", &st) && S_ISDIR(st.st_mode) && !access("/dev/shm", W_OK | X_OK))
		return "/dev/shm";
	return "/tmp";
}

int run_report_prepare(struct run_report *r, const char *options)
{
	const char *tmp = tmp_root();

	memset(r, 0, sizeof(*r));
	sp_options_defaults(&r->opts);
	r->opts.control = 1; /* the preload's default (sp_preload_enabled_default) */
	sp_options_parse(&r->opts, options, NULL); /* the program warns */
	r->parsed = 1;
	r->options = strdup(options);
	if (r->opts.symbolize_inprocess || r->opts.report_at_exit == 0)
		return 0;
	if ((size_t)snprintf(r->dir, sizeof(r->dir), "%s/syncprof-run.XXXXXX", tmp) >=
	    sizeof(r->dir) - 32) {
		cli_error("run", "cannot create a private directory in '%s' (name too long): the "
				 "program names its report's call sites itself",
			  tmp);
		r->dir[0] = '\0';
		return 0;
	}
	if (!mkdtemp(r->dir)) {
		cli_error("run", "cannot create a private directory in '%s' (%s): the program "
				 "names its report's call sites itself",
			  tmp, strerror(errno));
		r->dir[0] = '\0';
		return 0;
	}
	return 0;
}

/* DIR/@name */
static void dir_file(const struct run_report *r, const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", r->dir, name);
}

/* The directory and what the program left in it (a temporary file too,
 * when it was killed while writing): it is ours alone. */
static void remove_dir(struct run_report *r)
{
	char path[PATH_MAX + 300];
	DIR *d = opendir(r->dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			dir_file(r, e->d_name, path, sizeof(path));
			unlink(path);
		}
	if (d)
		closedir(d);
	if (rmdir(r->dir) && errno != ENOENT)
		cli_error("run", "cannot remove '%s': %s", r->dir, strerror(errno));
	r->dir[0] = '\0';
}

/* The whole small file @path into @buf (NUL-terminated); 0 or -errno. */
static int read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return -errno;
	while (n + 1 < size) {
		ssize_t k = read(fd, buf + n, size - 1 - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	return n ? 0 : -EINVAL;
}

/*
 * Interrupted.  run got SIGINT, SIGTERM or SIGHUP: before passing it on,
 * it asks the program, alive still, for its profile over the control
 * socket, as 'syncprof ctl PID report format=json top=0' would, and keeps
 * it as DIR/interrupted.json.  Named by the program (it answers with its
 * names, as any ctl report), shaped and rendered here like the hand-off.
 * A program whose own handler makes it exit hands its profile over at exit
 * as always: that one, later and complete, is the report; one that dies of
 * the signal has this one.
 */
void run_report_interrupt(struct run_report *r, int pid, int sig)
{
	char path[PATH_MAX + 32], err[256];
	char *payload = NULL;
	size_t len = 0;
	int fd, rc;

	if (r->interrupted)
		return;
	r->interrupted = sig;
	if (!r->parsed || r->opts.report_at_exit == 0)
		return;
	if (!r->opts.control) {
		snprintf(r->why, sizeof(r->why), "its control socket is off (--no-control)");
		return;
	}
	if (!r->dir[0]) { /* symbolize=inprocess: no hand-off directory yet */
		snprintf(r->dir, sizeof(r->dir), "%s/syncprof-run.XXXXXX", tmp_root());
		if (!mkdtemp(r->dir)) {
			snprintf(r->why, sizeof(r->why), "no private directory: %s", strerror(errno));
			r->dir[0] = '\0';
			return;
		}
	}
	rc = cli_ctl_request(pid, "report format=json top=0\n", &payload, &len, err, sizeof(err));
	if (rc) {
		snprintf(r->why, sizeof(r->why), "%s", err);
		return;
	}
	dir_file(r, "interrupted.json", path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || sp_write_all(fd, payload, len))
		snprintf(r->why, sizeof(r->why), "cannot keep it: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	free(payload);
}

/* @tmpl with %p as @pid and %% as %, into @buf; NULL when it does not fit. */
static const char *expand_pid(const char *tmpl, int pid, char *buf, size_t size)
{
	size_t n = 0;

	for (; *tmpl; tmpl++) {
		int k;

		if (tmpl[0] == '%' && tmpl[1] == 'p') {
			k = snprintf(buf + n, size - n, "%d", pid);
			tmpl++;
		} else {
			if (tmpl[0] == '%' && tmpl[1] == '%')
				tmpl++;
			k = snprintf(buf + n, size - n, "%c", *tmpl);
		}
		if (k < 0 || (size_t)k >= size - n)
			return NULL;
		n += (size_t)k;
	}
	buf[n] = '\0';
	return buf;
}

/* The profile of @path named, shaped and rendered as the program would
 * have rendered it, into *@data: 0 or prints why and returns -1. */
static int render(struct run_report *r, const struct syncprof_report_options *ro,
		  const char *path, char **data, size_t *len)
{
	struct sp_profile p;
	char err[512];
	FILE *m;
	int rc;

	if (sp_profile_load(path, &p, err, sizeof(err))) {
		cli_error("run", "cannot read the profile the program left: %s", err);
		return -1;
	}
	if (r->interrupted && !p.interrupted) {
		const char *abbrev = sigabbrev_np(r->interrupted);
		char sn[32];

		if (abbrev)
			snprintf(sn, sizeof(sn), "SIG%s", abbrev);
		else
			snprintf(sn, sizeof(sn), "signal %d", r->interrupted);
		p.interrupted = sp_profile_intern(&p, sn);
	}
	rc = sp_profile_shape(&p, ro);
	if (!rc)
		rc = sp_profile_name_files(&p);
	m = rc ? NULL : open_memstream(data, len);
	if (!rc && !m)
		rc = -errno;
	if (m) {
		rc = sp_render(m, &p, ro);
		if (fclose(m) && !rc)
			rc = -ENOMEM;
	}
	sp_profile_free(&p);
	if (rc) {
		/* the words of the report at exit (lifecycle.c) */
		fprintf(stderr, "syncprof: the report at exit failed: %s\n", strerror(-rc));
		return -1;
	}
	return 0;
}

/*
 * The program died of a signal and left no profile: one line says so, and
 * an output=FILE from an earlier run, which would look like this run's
 * report, is removed.
 */
static void no_profile(struct run_report *r)
{
	char out[PATH_MAX];
	const char *file = NULL;
	struct stat st;

	if (!r->killed_by || !r->parsed || r->opts.report_at_exit == 0)
		return;
	/* A regular file only: -o /dev/null, a FIFO or a terminal is not a
	 * report to remove (as root, unlinking /dev/null breaks the machine). */
	if (r->opts.output && expand_pid(r->opts.output, r->pid, out, sizeof(out)) &&
	    !lstat(out, &st) && S_ISREG(st.st_mode) && !unlink(out))
		file = out;
	fprintf(stderr, "syncprof: no profile: the program was killed by signal %d (%s)%s%s%s%s%s\n",
		r->killed_by, strsignal(r->killed_by), r->why[0] ? " and " : " before it could "
		"hand its profile over", r->why, file ? "; removed '" : "", file ? file : "",
		file ? "', an earlier run's report" : "");
}

/*
 * Write a rendered report where its process would have: the file @out
 * (whole or not at all), or stderr when the process had no output=FILE
 * (@configured NULL) or did not say where (@out ""); the same messages as
 * the report at exit (lifecycle.c).  @tell: say on a terminal where the
 * report went.
 */
static void deliver(const char *configured, const char *out, const char *data, size_t len,
		    int tell)
{
	struct sp_sigguard g;
	int created, rc;

	/* A file beyond RLIMIT_FSIZE or a closed stderr pipe fails the write,
	 * rather than kill run before it has passed on the program's status. */
	sp_sigguard_enter(&g);
	if (!configured || !out[0]) {
		if (configured)
			fprintf(stderr, "syncprof: cannot write the report to '%s' (the program did "
					"not say where); writing it to stderr\n",
				configured);
		sp_write_all(2, data, len);
	} else if ((rc = sp_report_file_write(out, data, len, &created))) {
		/* the words of the report at exit (lifecycle.c) */
		if (created)
			fprintf(stderr, "syncprof: writing the report to '%s' failed: %s; the report "
					"follows on stderr\n",
				out, strerror(-rc));
		else
			fprintf(stderr, "syncprof: cannot write the report to '%s' (%s); writing it "
					"to stderr\n",
				out, sp_report_file_error(out, rc));
		sp_write_all(2, data, len);
	} else if (tell && isatty(STDERR_FILENO)) {
		/* said to a user who watches: the report is not on the screen */
		fprintf(stderr, "syncprof: the report is in %s\n", out);
	}
	sp_sigguard_leave(&g);
}

static int kid_profile(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return e->d_name[0] == 'k' && n > 5 && !strcmp(e->d_name + n - 5, ".json");
}

/*
 * The reports of the processes the program started (or forked), handed
 * over as DIR/k<exit time>-<pid>.json with a .meta (lifecycle.c's
 * report_hand_off): rendered in the order they exited, each with its own
 * SYNCPROF_OPTIONS and output=FILE, all named with the same libdw
 * sessions.  They come before the program's own report, as they did when
 * each process wrote its report at its exit.
 */
static void finish_kids(struct run_report *r)
{
	struct dirent **names = NULL;
	int n = scandir(r->dir, &names, kid_profile, alphasort);
	int tell = 1;

	for (int i = 0; i < n; i++) {
		char path[PATH_MAX + 300], meta[16384], *nl, *data = NULL;
		const char *options, *configured;
		struct sp_options own, *o = &r->opts;
		size_t len = 0, k = strlen(names[i]->d_name) - 5;

		snprintf(path, sizeof(path), "%s/%.*s.meta", r->dir, (int)k, names[i]->d_name);
		if (read_small(path, meta, sizeof(meta)) || !(nl = strchr(meta, '\n'))) {
			cli_error("run", "a process left its profile without its options (%s): "
					 "not rendered", names[i]->d_name);
			free(names[i]);
			continue;
		}
		*nl = '\0';
		options = nl + 1;
		if (strcmp(options, r->options ? r->options : "")) {
			sp_options_defaults(&own);
			own.control = 1;
			sp_options_parse(&own, options, NULL); /* the process warned */
			o = &own;
		}
		configured = o->output;
		dir_file(r, names[i]->d_name, path, sizeof(path));
		if (!render(r, &o->report, path, &data, &len)) {
			/* one "the report is in" line for them all, not one each */
			deliver(configured, meta, data, len, tell && configured);
			if (configured)
				tell = 0;
		}
		free(data);
		if (o == &own)
			sp_options_free(&own);
		free(names[i]);
	}
	free(names);
}

void run_report_finish(struct run_report *r)
{
	char path[PATH_MAX + 32], out[8192], *data = NULL;
	size_t len = 0;
	int interrupted_out = 0;

	if (!r->dir[0]) {
		no_profile(r);
		goto done;
	}
	finish_kids(r);
	dir_file(r, "profile.json", path, sizeof(path));
	if (access(path, F_OK)) {
		/* nothing handed off: the program reported itself, or not at
		 * all; killed, it has the profile fetched at the interrupt */
		dir_file(r, "interrupted.json", path, sizeof(path));
		if (!r->killed_by || access(path, F_OK)) {
			no_profile(r);
			goto done;
		}
		if (render(r, &r->opts.report, path, &data, &len))
			goto done;
		if (r->opts.output && !expand_pid(r->opts.output, r->pid, out, sizeof(out)))
			out[0] = '\0';
		interrupted_out = 1;
	} else if (render(r, &r->opts.report, path, &data, &len)) {
		goto done;
	}
	dir_file(r, "output", path, sizeof(path));
	if (r->opts.output && !interrupted_out && read_small(path, out, sizeof(out)))
		out[0] = '\0';
	deliver(r->opts.output, r->opts.output ? out : "", data, len, 1);
done:
	free(data);
	sp_symbolize_files_end();
	if (r->dir[0])
		remove_dir(r);
	if (r->parsed)
		sp_options_free(&r->opts);
	free(r->options);
	r->options = NULL;
	r->parsed = 0;
}
