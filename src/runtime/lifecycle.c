/*
 * lifecycle.c - start-up, fork and exit, in one order, and the report at
 * exit.
 *
 * Design: a constructor reads SYNCPROF_OPTIONS once (options.c), switches
 * profiling on if asked (switch.c, below: the switch, the profiled time,
 * resets and reports), starts the helper thread (control.c) and registers
 * the report at exit.  Everything here is idempotent and safe to reach
 * before the constructor ran (a lock call from another library's
 * constructor simply goes unrecorded, as profiling is still off then).
 * This file is the top of src/runtime/: the files it starts call the
 * switch, never this file.
 *
 * The trace layer prints nothing; it tells its write errors to a handler
 * installed here (trace_write_error), from whichever thread met them, and
 * that prints each as one line in one write(2) (say()): no stdio lock and
 * no allocation in the trace writer or in a thread that is exiting.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/libdw.h"
#include "record/glibc_lock.h"
#include "record/lockorder.h"
#include "runtime/runtime.h"
#include "trace/trace.h"
#include "report/collect.h"

/*
 * Defined here, next to the constructor, on purpose: every instrumented
 * call site refers to it, so a static link always pulls in this object and
 * with it the constructor that reads SYNCPROF_OPTIONS.
 */
int syncprof__enabled;


/* Written once by the start-up (runtime_start()): 0 not begun, 1 under
 * way, 2 done. */
static struct {
	int state;
} start;

/*
 * The API's report: before start-up (a constructor of another library
 * that runs first), the options are read first.
 */
int syncprof_report(FILE *out, const struct syncprof_report_options *opts)
{
	if (!opts) {
		sp_runtime_init();
		opts = &sp_opts.report;
	}
	return sp_report_write(out, opts);
}

/*
 * The report at exit goes to stderr by default, but many programs close
 * stderr in an atexit handler of their own (gnulib's close_stdout: GNU
 * sort, xz, ...), and as they register it after our constructor did, it
 * runs first.  So a duplicate of fd 2 is kept from start-up, high and
 * close-on-exec, together with the identity (device, inode) of what it
 * refers to; at exit it is used only if it still refers to that file, so
 * that a program which closed it and reused the number never gets a
 * report written into one of its own files.
 */
static struct sp_kept_fd kept_err = { .fd = -1 }; /* written at start-up (stderr_keep()) */

static void stderr_keep(void)
{
	sp_kept_fd_take(&kept_err, 2);
}

/* A stream onto the stderr of start-up, or NULL when it is gone. */
static FILE *stderr_reopen(void)
{
	int fd;

	if (!sp_kept_fd_ours(&kept_err))
		return NULL;
	fd = fcntl(kept_err.fd, F_DUPFD_CLOEXEC, SP_KEPT_FD_MIN);
	return fd < 0 ? NULL : fdopen(fd, "w");
}

/* Write @n bytes to the stderr of start-up, or to fd 2 when it is gone;
 * a stderr that is a full file or a closed pipe does not kill. */
static void stderr_write(const char *p, size_t n)
{
	struct sp_sigguard g;
	int fd = 2;

	if (sp_kept_fd_ours(&kept_err))
		fd = kept_err.fd;
	sp_sigguard_enter(&g);
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		n -= (size_t)w;
	}
	sp_sigguard_leave(&g);
}

/*
 * One line to stderr in one write(2): no stdio lock, no allocation, so any
 * thread may say it (the trace writer, a thread in its exit), and lines of
 * several threads do not mix.
 */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char line[4096 + 512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	stderr_write(line, (size_t)n);
}

/*
 * Under 'syncprof run', the program is the first process to load the
 * library with SYNCPROF_RUN=root in its environment; it changes that to
 * "kids" for everything it starts.  A child that recorded no lock
 * activity prints no report at exit: wrappers and shell scripts start many
 * helper processes, and pages of empty reports would bury the one that
 * matters.  The program itself always reports.
 *
 * SYNCPROF_RUN=root:DEV:INO:DIR (internal, set by 'syncprof run' only):
 * the processes do not name their call sites themselves; at exit each
 * writes its profile unnamed into DIR, a private directory of run's, and
 * run names and renders them all once the program is gone
 * (report_hand_off()), reading each file's debug information once for
 * all of them (issue 25: 300 processes of one program paid 300 namings).
 * The program is told apart from what it starts - "root" becomes "kids"
 * in place before main() runs - and a child it forks (which keeps this
 * memory) by its pid.  DEV:INO is run's stderr: a process started by the
 * program whose report would go to another stderr (a script's 2>log)
 * names and writes its report itself, where it always went.
 *
 * A process may hold two copies of the library: a program built with
 * instrument.h (libsyncprof.so or libsyncprof.a) run under the preload.
 * Only the preload's starts (shadowed_by_preload()), so only it gets here.
 */
static struct {
	int child;
	char dir[4096];
	pid_t root_pid;
	unsigned long long err_dev, err_ino;
} run_role SP_LARGE; /* written at start-up (run_role_init()) */

/*
 * The value is rewritten in place, not with setenv(): programs such as
 * bash build their children's environment from main()'s envp, which keeps
 * pointing at the original strings.
 */
static void run_role_init(void)
{
	extern char **environ;

	for (char **e = environ; e && *e; e++) {
		char *v = *e + 13;

		unsigned long long dev, ino;
		int root, at = 0;

		if (strncmp(*e, "SYNCPROF_RUN=", 13))
			continue;
		root = !strncmp(v, "root", 4) && (!v[4] || v[4] == ':');
		if ((root || !strncmp(v, "kids:", 5)) && v[4] == ':' &&
		    sscanf(v + 5, "%llu:%llu:%n", &dev, &ino, &at) == 2 && at &&
		    v[5 + at] == '/' && strlen(v + 5 + at) < sizeof(run_role.dir)) {
			strcpy(run_role.dir, v + 5 + at);
			run_role.err_dev = dev;
			run_role.err_ino = ino;
		}
		if (root) {
			run_role.root_pid = getpid();
			memcpy(v, "kids", 4); /* what this process starts */
		} else {
			run_role.child = 1;
		}
		return;
	}
}

static void count_entries(const struct sp_table *t, void *arg)
{
	*(size_t *)arg += sp_table_count(t);
}

static int nothing_recorded(void)
{
	size_t n = 0;

	sp_registry_foreach(count_entries, &n);
	return !n && !sp_lost_get();
}

/*
 * The report at exit into output=FILE: rendered into memory, then written
 * whole or not at all (report/report_file.c).  When writing fails, one
 * line says so and the report goes to stderr.
 */
static int report_render(char **data, size_t *len)
{
	FILE *m = open_memstream(data, len);
	int rc;

	if (!m)
		return -errno;
	rc = sp_report_write(m, &sp_opts.report);
	if (fclose(m) && !rc)
		rc = -ENOMEM;
	return rc;
}

static void report_failed_say(int rc)
{
	if (rc == -ENOTSUP)
		say("syncprof: the report at exit failed: this program has no pprof output "
		    "(linked with libsyncprof.a but not -lprotobuf-c -lz)\n");
	else
		say("syncprof: the report at exit failed: %s\n", strerror(-rc));
}

/* output=FILE.  Return 1 when done (in the file, or on stderr after the
 * line that says why), 0 when the report should go to stderr instead. */
static int report_to_file(void)
{
	char path[4096], *data = NULL;
	size_t len = 0;
	int rc, created;

	if (!sp_path_expand(sp_opts.output, path, sizeof(path))) {
		say("syncprof: cannot write the report to '%s' (name too long); writing it to "
		    "stderr\n",
		    sp_opts.output);
		return 0;
	}
	rc = report_render(&data, &len);
	if (rc) {
		report_failed_say(rc);
		free(data);
		return 1;
	}
	rc = sp_report_file_write(path, data, len, &created);
	if (rc) {
		if (created)
			say("syncprof: writing the report to '%s' failed: %s; the report follows on "
			    "stderr\n",
			    path, strerror(-rc));
		else
			say("syncprof: cannot write the report to '%s' (%s); writing it to stderr\n",
			    path, sp_report_file_error(path, rc));
		stderr_write(data, len);
	}
	free(data);
	return 1;
}

/*
 * A file of run's directory (ours alone) that run reads only once the
 * profile it belongs to is in place (renamed in after this one is
 * closed): written directly, without sp_report_file_write()'s checks and
 * temporary file (a statfs(), an lstat(), a second file and a rename:
 * 130-600 us of a process's exit on the VM of docs/cost.md).
 */
static int write_run_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), rc;

	if (fd < 0)
		return -errno;
	rc = sp_write_all(fd, data, len);
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

/* output=FILE, %p expanded and made absolute against the directory the
 * program is in now, into @abs ("" without output=); 0, or -1 when the
 * program is to report itself (report_to_file() says why). */
static int hand_off_output(char *abs, size_t size)
{
	char out[4096];

	abs[0] = '\0';
	if (!sp_opts.output)
		return 0;
	if (!sp_path_expand(sp_opts.output, out, sizeof(out)))
		return -1;
	if (out[0] != '/') {
		char cwd[4096];

		if (!getcwd(cwd, sizeof(cwd)))
			return -1;
		snprintf(abs, size, "%s/%s", cwd, out);
	} else {
		snprintf(abs, size, "%s", out);
	}
	return 0;
}

/* What run reads before the profile, and the profile's name into @name:
 * run's program writes DIR/output (with output=FILE) and is "profile";
 * another process writes k<exit time>-<pid>.meta - output FILE (or an empty
 * line), then its SYNCPROF_OPTIONS (it may not be run's) - and is named so
 * that run renders them in the order they exited.  0, -errno, or 1 when
 * there was no memory to say it (the program reports itself, quietly). */
static int hand_off_meta(int root, const char *abs_out, char *name, size_t nsize)
{
	char file[4096 + 96];
	const char *o;
	char *meta = NULL;
	size_t len = 0;
	struct timespec now;
	FILE *m;
	int rc;

	if (root) {
		snprintf(name, nsize, "profile");
		if (!abs_out[0])
			return 0;
		snprintf(file, sizeof(file), "%s/output", run_role.dir);
		return write_run_file(file, abs_out, strlen(abs_out));
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	snprintf(name, nsize, "k%010lld%09ld-%d", (long long)now.tv_sec, now.tv_nsec,
		 (int)getpid());
	m = open_memstream(&meta, &len);
	if (!m)
		return 1;
	o = getenv("SYNCPROF_OPTIONS");
	fprintf(m, "%s\n%s", abs_out, o ? o : "");
	rc = fclose(m) ? -ENOMEM : 0;
	snprintf(file, sizeof(file), "%s/%s.meta", run_role.dir, name);
	if (!rc)
		rc = write_run_file(file, meta, len);
	free(meta);
	return rc;
}

/* The profile as JSON into DIR/@name.json: streamed into a file of its
 * own, renamed when whole, so that the JSON of a large profile is not held
 * in memory (DIR is ours alone).  0 or -errno. */
static int hand_off_profile(const char *name)
{
	char file[4096 + 96], tmp[4096 + 96];
	struct sp_thread *saved;
	struct sp_profile p;
	FILE *f;
	int rc;

	snprintf(tmp, sizeof(tmp), "%s/%s.json.tmp", run_role.dir, name);
	snprintf(file, sizeof(file), "%s/%s.json", run_role.dir, name);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	saved = sp_thread_enter();
	sp_report_lock();
	rc = sp_report_build_locked(&p, &sp_opts.report, 0);
	if (!rc) {
		rc = sp_render_json(f, &p, &sp_opts.report);
		sp_profile_free(&p);
	}
	sp_report_unlock();
	sp_thread_leave(saved);
	if (!rc && (fflush(f) || ferror(f)))
		rc = -(errno ? errno : EIO);
	if (fclose(f) && !rc)
		rc = -(errno ? errno : EIO);
	if (!rc && rename(tmp, file))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

/*
 * Under 'syncprof run' (SYNCPROF_RUN=root:DIR), the program's report is
 * named and rendered by run: write the profile, shaped by the report
 * options but with interposed sites unnamed (sp_profile_resolve_unnamed:
 * no symbolizer, no debug information read into this process), as profile
 * JSON to DIR/profile.json, and with output=FILE the name of FILE (%p
 * expanded, made absolute against the directory the program is in now)
 * to DIR/output, first (another process: DIR/k...meta, hand_off_meta()).
 * Both are written whole or not at all (a temporary file renamed).
 * Returns 1 when handed off; 0 when the report is to be made here as
 * before (symbolize=inprocess, not run's program, or a failure, said in
 * one line).
 */
static int report_hand_off(void)
{
	char abs_out[8192], name[64];
	int root = getpid() == run_role.root_pid;
	int rc;

	if (!run_role.dir[0] || sp_opts.symbolize_inprocess)
		return 0;
	/* Another process's report goes where run writes it: output=FILE, or
	 * run's stderr - so only when that is this process's stderr too. */
	if (!root && !sp_opts.output &&
	    (kept_err.fd < 0 || (unsigned long long)kept_err.dev != run_role.err_dev ||
	     (unsigned long long)kept_err.ino != run_role.err_ino))
		return 0;
	if (hand_off_output(abs_out, sizeof(abs_out)))
		return 0;
	rc = hand_off_meta(root, abs_out, name, sizeof(name));
	if (rc == 1)
		return 0;
	if (!rc)
		rc = hand_off_profile(name);
	if (!rc)
		return 1;
	say("syncprof: cannot hand the profile to syncprof run (%s: %s); the program reports "
	    "itself\n",
	    run_role.dir, strerror(-rc));
	return 0;
}

/*
 * A skip regex that matched no function moved no site: said once, by a
 * process that reports (so that a shell or make under 'syncprof run',
 * which never had the function and recorded nothing, stays quiet).
 */
static void say_unmatched_skips(void)
{
	const char *const *p;
	unsigned n = sp_stack_unmatched(&p);

	for (unsigned i = 0; i < n; i++)
		say("syncprof: warning: skip='%s' matched no function of %s or its libraries "
		    "at start-up (a stripped binary keeps only its exported names); it moved "
		    "no site\n",
		    p[i], program_invocation_short_name);
}

static void do_report_at_exit(void)
{
	FILE *f;
	int rc;

	if (sp_opts.report_at_exit == 0 ||
	    (sp_opts.report_at_exit < 0 && !sp_ever_enabled()))
		return;
	if (run_role.child && sp_opts.report_at_exit < 0 && nothing_recorded())
		return;
	say_unmatched_skips();
	if (report_hand_off())
		return;
	if (sp_opts.output && report_to_file())
		return;
	f = stderr_reopen();
	if (!f)
		f = stderr; /* the program's stderr, if it is still open */
	rc = sp_report_write(f, &sp_opts.report);
	if (rc == -ENOTSUP)
		fprintf(f, "syncprof: the report at exit failed: this program has no pprof output "
			   "(linked with libsyncprof.a but not -lprotobuf-c -lz)\n");
	else if (rc)
		fprintf(f, "syncprof: the report at exit failed: %s\n", strerror(-rc));
	if (f != stderr && fclose(f))
		fprintf(stderr, "syncprof: closing the report file failed: %s\n", strerror(errno));
}

/* A write past RLIMIT_FSIZE (into FILE or into a stderr that is a file)
 * fails rather than kill the program with SIGXFSZ; so does one into a
 * stderr pipe nobody reads any more (SIGPIPE). */
static void report_at_exit(void)
{
	struct sp_sigguard g;

	sp_sigguard_enter(&g);
	do_report_at_exit();
	sp_sigguard_leave(&g);
}

/*
 * A write error of the trace file, told by the trace layer from whichever
 * thread met it (trace/file.c): at once, and with the count of the events
 * it cost when the file is closed (at exit at the latest).
 */
static void trace_write_error(const struct sp_trace_write_error *e)
{
	const char *why = strerror(-e->error);

	if (!e->closed)
		say("syncprof: warning: writing the trace file '%s' failed: %s; events from now "
		    "on are counted as dropped\n",
		    e->path, why);
	else if (!e->lost)
		say("syncprof: warning: the trace file '%s' is incomplete (%s), but no events "
		    "were lost\n",
		    e->path, why);
	else
		say("syncprof: warning: %llu events were lost to the write error on the trace "
		    "file '%s' (%s), from %.3f s to %.3f s after the trace started%s\n",
		    (unsigned long long)e->lost, e->path, why, (double)e->first_ns / 1e9,
		    (double)e->last_ns / 1e9,
		    e->recorded ? "" : "; the file had no room to record this");
}

/* ---- the one order of start-up, fork and exit ------------------------- */

/*
 * Every subsystem's fork and exit work is called from here, in one order,
 * instead of each registering its own handlers (which ran in whatever
 * order the handlers happened to be registered).  Locks are taken in the
 * documented order (trace control, trace io, trace list; then registry;
 * then the lock-order graph's; then, in attach mode, the attach's patch
 * lock, a leaf: sp_attach_fork_hooks) before fork() and released in
 * reverse after it.
 */
const struct sp_fork_hooks *sp_attach_fork_hooks;

static void fork_prepare(void)
{
	const struct sp_fork_hooks *h = sp_load_acquire(&sp_attach_fork_hooks);

	sp_libdw_fork_prepare(); /* first: the loading thread may take our locks */
	sp_control_fork_prepare();
	sp_trace_fork_prepare();
	sp_registry_fork_prepare();
	sp_order_fork_prepare();
	if (h)
		h->prepare();
}

static void fork_parent(void)
{
	const struct sp_fork_hooks *h = sp_load_acquire(&sp_attach_fork_hooks);

	if (h)
		h->parent();
	sp_order_fork_parent();
	sp_registry_fork_parent();
	sp_trace_fork_parent();
	sp_libdw_fork_parent();
}

static void fork_child(void)
{
	const struct sp_fork_hooks *h = sp_load_acquire(&sp_attach_fork_hooks);

	if (h)
		h->child(); /* attached: the child puts the slots back, unprofiled */
	sp_libdw_fork_child();
	sp_order_fork_child();
	sp_registry_fork_child();
	sp_hold_fork_child();
	sp_holdstate_fork_child();
	sp_stack_fork_child();
	sp_lockname_fork_child();
	sp_trace_fork_child();
	sp_control_fork_child();
}

/* At exit: the helper thread's last words, then the trace (its file
 * complete before anything else is printed), then the report. */
static void at_exit(void)
{
	sp_control_exit();
	sp_trace_exit();
	report_at_exit();
}

/* SYNCPROF_OPTIONS trace=FILE, trace_buffer=BYTES, trace_events=,
 * trace_min_wait= (the mode, set before the file opens so that its
 * first LOCK_MODE record is the one the options asked for).  trace=FILE also
 * switches profiling on: lock events are emitted by the profiled calls. */
static void trace_start(void)
{
	int rc;

	if (sp_opts.trace_buffer && syncprof_trace_set_buffer_size(sp_opts.trace_buffer))
		fprintf(stderr, "syncprof: warning: trace_buffer=%zu is out of range (256 to %u "
				"bytes); using %zu\n",
			sp_opts.trace_buffer, SP_TRACE_BUF_MAX, sp_trace_buf_size);
	syncprof_trace_set_lock_events(sp_opts.trace_events, sp_opts.trace_min_wait_ns);
	if (!sp_opts.trace)
		return;
	rc = syncprof_trace_open(sp_opts.trace);
	if (rc)
		fprintf(stderr, "syncprof: warning: cannot open the trace file '%s': %s; not "
				"tracing\n",
			sp_opts.trace, strerror(-rc));
	else
		syncprof_enable();
}

/*
 * glibc_locks=1 (the default): glibc's own locks, timed on their slow path
 * (record/glibc_lock.c).  The wrapper ranges are made first (init), so
 * that a wait's site skips libc's frames; then the patch, which says in
 * one line why when it cannot be made, and the rest runs on.
 */
static void glibc_locks_start(void)
{
	char why[256];

	if (!sp_opts.glibc_locks)
		return;
	/* said only when profiling is on from the start: a program linked with
	 * libsyncprof that nobody profiles stays quiet */
	if (sp_glibc_locks_start(why, sizeof(why)) && sp_opts.enabled)
		fprintf(stderr, "syncprof: warning: glibc's own locks (stdio, malloc) are not "
				"profiled: %s\n",
			why);
}

/*
 * Start-up.  @attach_options is NULL at a normal start-up (options from
 * SYNCPROF_OPTIONS); under 'syncprof attach' it is the attach's options,
 * and the process's environment is not read: the program was not started
 * for syncprof, so no report at exit, no SYNCPROF_RUN role, no copy of its
 * stderr, profiling off until the attach has redirected the lock calls,
 * no control socket (the CLI reads the report through ptrace and leaves
 * no thread or socket of ours behind).
 */
static void runtime_start(const char *attach_options)
{
	int s = 0;

	if (!__atomic_compare_exchange_n(&start.state, &s, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		while (sp_load_acquire(&start.state) == 1)
			;
		return;
	}
	sp_options_defaults(&sp_opts);
	if (attach_options) {
		sp_options_parse(&sp_opts, attach_options, stderr);
		sp_opts.enabled = 0;
		sp_opts.report_at_exit = 0;
		sp_opts.control = 0;
	} else {
		sp_options_env(&sp_opts, stderr); /* warns once per process tree */
	}
	sp_command_read(!attach_options);
	if (!attach_options) {
		stderr_keep();
		run_role_init();
	}
	sp_state_started();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
	sp_trace_set_write_error_handler(trace_write_error);
	sp_trace_set_lock_names_source(sp_lockname_each_named);
	/* Lock order and the deadlock check need hold tracking's held lists;
	 * hold=1 adds the rest. */
	/* Hold states: in hold ticks of 500 us, at least 1 (hold.c). */
	sp_holdstate_long_ticks = sp_opts.hold_states_ms * 2;
	sp_holdstate_where = sp_opts.hold_where;
	sp_hold_set_tick_hook(sp_holdstate_tick);
	if ((sp_opts.hold || sp_opts.lock_order || sp_opts.deadlock) &&
	    (sp_blame_init() || sp_hold_init(sp_opts.hold_sample, sp_opts.hold,
					     sp_opts.hold_clock)))
		fputs("syncprof: warning: hold tracking could not start (out of memory)\n",
		      stderr);
	else if (sp_opts.lock_order && sp_order_init())
		fputs("syncprof: warning: lock-order checking could not start (out of memory)\n",
		      stderr);
	sp_store_release(&sp_registry_after_fork, sp_control_after_fork);
	/* The wrapper ranges, whatever the options: glibc's locks' waits and
	 * the compiled-in C++ sites (probe.h's _pc entry points) step over
	 * them, libstdc++'s out-of-line templates among them (cxx_headers.c).
	 * The preload and attach call it again later with the same options:
	 * a no-op then. */
	sp_stack_init((const char *const *)sp_opts.skip, sp_opts.n_skip, sp_opts.frames,
		      sp_opts.skip_frames);
	/* A new lock-order edge keeps two stacks: through learned rows once
	 * its return addresses are known (stack.c, walk_learned()). */
	if (sp_opts.lock_order && sp_opts.frames)
		sp_stack_learn();
	glibc_locks_start();
	sp_locklib_prepare();
	sp_store_relaxed(&sp_account_on, sp_opts.account);
	if (sp_opts.enabled)
		syncprof_enable();
	sp_store_release(&start.state, 2);
	trace_start();
	if (sp_opts.control || sp_watchdog_wanted() || sp_opts.report_signal)
		sp_control_start();
}

int sp_runtime_deferred;

/*
 * A program linked with libsyncprof.so (compiled-in instrumentation) and
 * run under the preload library ('syncprof run', LD_PRELOAD) has two
 * copies of this runtime.  The preload's, first in the global scope, is
 * the one the program's calls reach: its syncprof_NAME entry points and
 * flag word interpose on this copy's.  This copy then stands down - no
 * options, no report at exit, no threads - or the process printed two
 * reports, the second one empty.  A copy linked into the program
 * (libsyncprof.a) stands down too: its flag word stays 0, so its
 * instrumented calls go to the real functions from the program's code,
 * where the preload records them by return address.  Told by the first definition of
 * syncprof_enable() lying in another object than this one, while a
 * preload library (syncprof__attach_start, its own) is loaded.
 */
static int shadowed_by_preload(void)
{
	Dl_info mine, first;
	void *f;

	if (!dlsym(RTLD_DEFAULT, "syncprof__attach_start"))
		return 0;
	f = dlsym(RTLD_DEFAULT, "syncprof_enable");
	return f && dladdr((void *)shadowed_by_preload, &mine) && dladdr(f, &first) &&
	       mine.dli_fbase != first.dli_fbase;
}

void sp_runtime_init(void)
{
	if (sp_load_relaxed(&sp_runtime_deferred))
		return;
	if (shadowed_by_preload()) {
		sp_store_relaxed(&sp_runtime_deferred, 1);
		return;
	}
	runtime_start(NULL);
}

int sp_runtime_attach(const char *options)
{
	if (sp_load_acquire(&start.state) == 2) {
		/* Attached before: this session's report starts now. */
		return syncprof_reset();
	}
	runtime_start(options ? options : "");
	return 0;
}

/* glibc calls a constructor with the program's argc, argv and envp. */
__attribute__((constructor)) static void syncprof_constructor(int argc, char **argv, char **envp)
{
	(void)envp;
	sp_command_from_argv(argc, argv);
	sp_runtime_init();
}
