/*
 * lifecycle.c - start-up, the control API and the report at exit.
 *
 * Design: a constructor reads SYNCPROF_OPTIONS once (options.c), switches
 * profiling on if asked and registers the report at exit.  Everything here
 * is idempotent and safe to reach before the constructor ran (a lock call
 * from another library's constructor simply goes unrecorded, as profiling
 * is still off then).
 *
 * Enabling sets a bit of syncprof__enabled (one atomic or, under
 * state_lock, which serialises the switches and their dates), read
 * relaxed by every probe; the flag's cache line is written only here, so
 * it stays shared-clean in every core's cache (QSP swaps function
 * pointers for the same effect).
 *
 * A reset takes a snapshot of everything collected so far and bumps the
 * reset epoch (which retires the maxima, see probe.c); reports subtract the
 * snapshot.  report_lock serialises reports and resets; it is taken before
 * the registry lock.  The reporting thread is marked busy, so lock calls it
 * makes while reporting (stdio, malloc) are not recorded.
 *
 * The threads' time account (report/collect.c) is collected with each
 * report; while profiling is off, reports show the account as it stood
 * when profiling went off (frozen), as they show the profiled time.
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
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

struct sp_options sp_opts;

/* Every skip= pattern the options accept reaches record/stack.c. */
_Static_assert(SP_MAX_SKIP <= SP_STACK_MAX_SKIP, "stack.c keeps fewer skip patterns");

static sp_lock_t report_lock = SP_LOCK_INIT;
static struct sp_rows snapshot; /* under report_lock */
/*
 * The threads' time account as it stood when profiling went off (a
 * profile of its own, for the arena its names live in): reports made
 * while profiling is off show it, so that, as elapsed_ns, the profile
 * does not change from one report to the next (tests/preload/rerender.sh
 * compares live reports with saved ones).  Under report_lock; valid while
 * frozen_on is 1, cleared by syncprof_enable().
 */
static struct sp_profile frozen;
static int frozen_on;
/*
 * Profiled time: how long profiling was on since start-up or the last
 * reset (on_ns, plus the current stretch since on_since_ns while on), the
 * "elapsed_ns" of a profile.  A profile taken while profiling is off
 * therefore does not change from one report to the next.  Written under
 * state_lock by the switches and the reset.
 */
static sp_lock_t state_lock = SP_LOCK_INIT;
static uint64_t on_ns, on_since_ns;
static int ever_enabled;
static uint64_t state_since_ns; /* CLOCK_REALTIME of the last on/off switch */
static int init_state;
static char command[4096];

uint64_t sp_profiled_ns(void)
{
	uint64_t ns;

	sp_lock(&state_lock);
	ns = on_ns;
	if (syncprof_is_enabled())
		ns += sp_now_ns() - on_since_ns;
	sp_unlock(&state_lock);
	return ns;
}

const char *sp_command(void)
{
	return command;
}

static void read_command(void)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return;
	n = read(fd, command, sizeof(command) - 1);
	close(fd);
	if (n <= 0)
		return;
	for (ssize_t i = 0; i < n; i++)
		if (!command[i])
			command[i] = ' ';
	while (n > 0 && command[n - 1] == ' ')
		n--;
	command[n] = '\0';
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t sp_state_since_ns(void)
{
	return sp_load_relaxed(&state_since_ns);
}

void syncprof_enable(void)
{
	sp_store_relaxed(&ever_enabled, 1);
	sp_store_relaxed(&frozen_on, 0); /* the account runs on */
	sp_lock(&state_lock);
	/* Remember when the state changed, for 'syncprof ctl PID status'. */
	if (!(__atomic_fetch_or(&syncprof__enabled, SYNCPROF__PROFILING, __ATOMIC_RELAXED) &
	      SYNCPROF__PROFILING)) {
		sp_store_relaxed(&state_since_ns, realtime_ns());
		on_since_ns = sp_now_ns();
	}
	sp_unlock(&state_lock);
}

/* The account now, kept for the reports made while profiling is off. */
static void account_freeze(void)
{
	struct sp_thread *saved;

	if (!sp_load_relaxed(&sp_account_on))
		return;
	saved = sp_thread_enter();
	sp_lock(&report_lock);
	if (frozen.arena)
		sp_profile_free(&frozen);
	memset(&frozen, 0, sizeof(frozen));
	if (!sp_profile_init(&frozen) && !sp_collect_account(&frozen))
		sp_store_relaxed(&frozen_on, 1);
	sp_unlock(&report_lock);
	sp_thread_leave(saved);
}

/* @p's account: the frozen one while profiling is off, else collected. */
static int account_locked(struct sp_profile *p)
{
	struct sp_account *a = &p->account;

	if (!sp_load_relaxed(&sp_account_on))
		return 0; /* account=0: none, and the reports say nothing of it */
	if (syncprof_is_enabled() || !sp_load_relaxed(&frozen_on))
		return sp_collect_account(p);
	*a = frozen.account;
	a->unavailable = sp_profile_intern(p, frozen.account.unavailable);
	a->reset = sp_load_relaxed(&sp_reset_epoch) != 0;
	if (a->n) {
		a->v = sp_profile_alloc(p, a->n * sizeof(*a->v));
		if (!a->v)
			return -ENOMEM;
		for (size_t i = 0; i < a->n; i++) {
			a->v[i] = frozen.account.v[i];
			a->v[i].name = sp_profile_intern(p, frozen.account.v[i].name);
		}
	}
	return sp_profile_error(p);
}

void syncprof_disable(void)
{
	int was_on;

	sp_lock(&state_lock);
	was_on = !!(__atomic_fetch_and(&syncprof__enabled, ~SYNCPROF__PROFILING,
				       __ATOMIC_RELAXED) & SYNCPROF__PROFILING);
	if (was_on) {
		sp_store_relaxed(&state_since_ns, realtime_ns());
		on_ns += sp_now_ns() - on_since_ns;
	}
	sp_unlock(&state_lock);
	if (was_on)
		account_freeze();
}

int syncprof_is_enabled(void)
{
	return !!(sp_load_relaxed(&syncprof__enabled) & SYNCPROF__PROFILING);
}

unsigned long long syncprof_lost_events(void)
{
	return sp_lost_get();
}

int sp_report_snapshot(void)
{
	struct sp_rows now;
	int rc;

	rc = sp_collect(&now, 0);
	if (rc)
		return rc;
	sp_rows_free(&snapshot);
	snapshot = now;
	sp_hold_snapshot();
	sp_order_snapshot();
	/* After the snapshot: an event between the two is in the snapshot's
	 * counts; only its maximum is forgotten. */
	sp_add_relaxed(&sp_reset_epoch, 1);
	sp_lock(&state_lock);
	on_ns = 0;
	on_since_ns = sp_now_ns();
	sp_unlock(&state_lock);
	return 0;
}

int syncprof_reset(void)
{
	struct sp_thread *saved = sp_thread_enter();
	int rc;

	sp_lock(&report_lock);
	rc = sp_report_snapshot();
	sp_unlock(&report_lock);
	sp_thread_leave(saved);
	return rc;
}

void sp_report_lock(void)
{
	sp_lock(&report_lock);
}

void sp_report_unlock(void)
{
	sp_unlock(&report_lock);
}

/*
 * The profile of this process, as @o shapes it: collect, subtract the
 * reset's snapshot, coalesce, sort, cut, name (with @named 0, interposed
 * sites keep their addresses: sp_profile_resolve_unnamed()).  Caller
 * holds report_lock.
 */
static int profile_build_locked(struct sp_profile *p, const struct syncprof_report_options *o,
				int named)
{
	int rc = sp_profile_init(p);

	if (rc)
		return rc;
	p->pid = (int)getpid();
	p->command = sp_profile_intern(p, command);
	p->clock = sp_clock_name();
	p->elapsed_ns = sp_profiled_ns();
	p->lost = sp_lost_get();
	p->hold = sp_hold_times_are_on();
	p->hold_sample = sp_opts.hold_sample ? sp_opts.hold_sample : 1;
	if (p->hold) {
		sp_hold_losses(&p->hold_untracked, &p->blame_lost);
		sp_hold_ticker_lateness(&p->hold_late_ticks, &p->hold_gap_max_ns);
		{
			int err;

			sp_holdstate_cost(&p->hold_state_samples, &p->hold_state_cpu_ns,
					  &p->hold_state_unread, &err);
			sp_holdstate_where_cost(&p->hold_where_points, &p->hold_where_lost);
		}
	}
	rc = sp_collect(&p->rows, p->hold);
	if (!rc)
		rc = sp_collect_order(p);
	if (!rc)
		rc = account_locked(p);
	if (!rc)
		rc = sp_report_subtract(&p->rows, &snapshot);
	if (!rc)
		rc = sp_profile_shape(p, o);
	if (!rc) {
		sp_collect_names(p);
		rc = named ? sp_profile_resolve(p) : sp_profile_resolve_unnamed(p);
	}
	if (rc)
		sp_profile_free(p);
	return rc;
}

int sp_report_profile(struct sp_profile *p, const struct syncprof_report_options *o)
{
	struct sp_thread *saved = sp_thread_enter();
	int rc;

	sp_lock(&report_lock);
	rc = profile_build_locked(p, o, 1);
	sp_unlock(&report_lock);
	sp_thread_leave(saved);
	return rc;
}

int syncprof_report(FILE *out, const struct syncprof_report_options *opts)
{
	struct sp_thread *saved;
	struct sp_profile p;
	int rc;

	if (!opts) {
		sp_runtime_init();
		opts = &sp_opts.report;
	}
	if (!out || sp_report_options_check(opts))
		return -EINVAL;
	saved = sp_thread_enter();
	sp_lock(&report_lock);
	rc = profile_build_locked(&p, opts, 1);
	if (!rc) {
		rc = sp_render(out, &p, opts);
		sp_profile_free(&p);
		if (!rc && (fflush(out) || ferror(out)))
			rc = -EIO;
	}
	sp_unlock(&report_lock);
	sp_thread_leave(saved);
	return rc;
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
static int stderr_dup = -1;
static dev_t stderr_dev;
static ino_t stderr_ino;

static void stderr_keep(void)
{
	struct stat st;

	if (fstat(2, &st))
		return;
	stderr_dup = fcntl(2, F_DUPFD_CLOEXEC, 100);
	stderr_dev = st.st_dev;
	stderr_ino = st.st_ino;
}

/* A stream onto the stderr of start-up, or NULL when it is gone. */
static FILE *stderr_reopen(void)
{
	struct stat st;
	int fd;

	if (stderr_dup < 0 || fstat(stderr_dup, &st) || st.st_dev != stderr_dev ||
	    st.st_ino != stderr_ino)
		return NULL;
	fd = fcntl(stderr_dup, F_DUPFD_CLOEXEC, 100);
	return fd < 0 ? NULL : fdopen(fd, "w");
}

/* Write @n bytes to the stderr of start-up, or to fd 2 when it is gone;
 * a stderr that is a full file or a closed pipe does not kill. */
static void stderr_write(const char *p, size_t n)
{
	struct sp_sigguard g;
	struct stat st;
	int fd = 2;

	if (stderr_dup >= 0 && !fstat(stderr_dup, &st) && st.st_dev == stderr_dev &&
	    st.st_ino == stderr_ino)
		fd = stderr_dup;
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
static int run_child;
static char run_dir[4096];
static pid_t run_root_pid;
static unsigned long long run_err_dev, run_err_ino;

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
		    v[5 + at] == '/' && strlen(v + 5 + at) < sizeof(run_dir)) {
			strcpy(run_dir, v + 5 + at);
			run_err_dev = dev;
			run_err_ino = ino;
		}
		if (root) {
			run_root_pid = getpid();
			memcpy(v, "kids", 4); /* what this process starts */
		} else {
			run_child = 1;
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
	rc = syncprof_report(m, &sp_opts.report);
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
 * Under 'syncprof run' (SYNCPROF_RUN=root:DIR), the program's report is
 * named and rendered by run: write the profile, shaped by the report
 * options but with interposed sites unnamed (sp_profile_resolve_unnamed:
 * no symbolizer, no debug information read into this process), as profile
 * JSON to DIR/profile.json, and with output=FILE the name of FILE (%p
 * expanded, made absolute against the directory the program is in now)
 * to DIR/output, first.  Both are written whole or not at all (a
 * temporary file renamed).  Returns
 * 1 when handed off; 0 when the report is to be made here as before
 * (symbolize=inprocess, not run's program, or a failure, said in one line).
 */
static int report_hand_off(void)
{
	struct sp_thread *saved;
	struct sp_profile p;
	char file[4096 + 96], tmp[4096 + 96], out[4096], abs_out[8192], name[64];
	int root = getpid() == run_root_pid;
	FILE *f;
	int rc, created;

	if (!run_dir[0] || sp_opts.symbolize_inprocess)
		return 0;
	/* Another process's report goes where run writes it: output=FILE, or
	 * run's stderr - so only when that is this process's stderr too. */
	if (!root && !sp_opts.output &&
	    (stderr_dup < 0 || (unsigned long long)stderr_dev != run_err_dev ||
	     (unsigned long long)stderr_ino != run_err_ino))
		return 0;
	abs_out[0] = '\0';
	if (sp_opts.output) {
		if (!sp_path_expand(sp_opts.output, out, sizeof(out)))
			return 0; /* report_to_file() says it */
		if (out[0] != '/') {
			char cwd[4096];

			if (!getcwd(cwd, sizeof(cwd)))
				return 0;
			snprintf(abs_out, sizeof(abs_out), "%s/%s", cwd, out);
		} else {
			snprintf(abs_out, sizeof(abs_out), "%s", out);
		}
	}
	if (root) {
		snprintf(name, sizeof(name), "profile");
		if (abs_out[0]) {
			snprintf(file, sizeof(file), "%s/output", run_dir);
			rc = sp_report_file_write(file, abs_out, strlen(abs_out), &created);
			if (rc)
				goto failed;
		}
	} else {
		/* k<exit time>-<pid>: run renders them in the order they exited.
		 * Its .meta first: output FILE (or an empty line), then the
		 * process's SYNCPROF_OPTIONS (it may not be run's). */
		const char *o = getenv("SYNCPROF_OPTIONS");
		char *meta = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&meta, &len);

		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		snprintf(name, sizeof(name), "k%010lld%09ld-%d", (long long)now.tv_sec, now.tv_nsec,
			 (int)getpid());
		if (!m)
			return 0;
		fprintf(m, "%s\n%s", abs_out, o ? o : "");
		rc = fclose(m) ? -ENOMEM : 0;
		snprintf(file, sizeof(file), "%s/%s.meta", run_dir, name);
		if (!rc)
			rc = sp_report_file_write(file, meta, len, &created);
		free(meta);
		if (rc)
			goto failed;
	}
	/* Streamed into a file of its own, renamed when whole: the JSON of a
	 * large profile is not held in memory (DIR is ours alone). */
	snprintf(tmp, sizeof(tmp), "%s/%s.json.tmp", run_dir, name);
	snprintf(file, sizeof(file), "%s/%s.json", run_dir, name);
	f = fopen(tmp, "we");
	if (!f) {
		rc = -errno;
		goto failed;
	}
	saved = sp_thread_enter();
	sp_lock(&report_lock);
	rc = profile_build_locked(&p, &sp_opts.report, 0);
	if (!rc) {
		rc = sp_render_json(f, &p, &sp_opts.report);
		sp_profile_free(&p);
	}
	sp_unlock(&report_lock);
	sp_thread_leave(saved);
	if (!rc && (fflush(f) || ferror(f)))
		rc = -(errno ? errno : EIO);
	if (fclose(f) && !rc)
		rc = -(errno ? errno : EIO);
	if (!rc && rename(tmp, file))
		rc = -errno;
	if (!rc)
		return 1;
	unlink(tmp);
failed:
	say("syncprof: cannot hand the profile to syncprof run (%s: %s); the program reports "
	    "itself\n",
	    run_dir, strerror(-rc));
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
	    (sp_opts.report_at_exit < 0 && !sp_load_relaxed(&ever_enabled)))
		return;
	if (run_child && sp_opts.report_at_exit < 0 && nothing_recorded())
		return;
	say_unmatched_skips();
	if (report_hand_off())
		return;
	if (sp_opts.output && report_to_file())
		return;
	f = stderr_reopen();
	if (!f)
		f = stderr; /* the program's stderr, if it is still open */
	rc = syncprof_report(f, &sp_opts.report);
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
}

static void fork_child(void)
{
	const struct sp_fork_hooks *h = sp_load_acquire(&sp_attach_fork_hooks);

	if (h)
		h->child(); /* attached: the child puts the slots back, unprofiled */
	sp_order_fork_child();
	sp_registry_fork_child();
	sp_hold_fork_child();
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

	if (!__atomic_compare_exchange_n(&init_state, &s, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		while (sp_load_acquire(&init_state) == 1)
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
	read_command();
	if (!attach_options) {
		stderr_keep();
		run_role_init();
	}
	sp_store_relaxed(&state_since_ns, realtime_ns());
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	atexit(at_exit);
	sp_trace_set_write_error_handler(trace_write_error);
	sp_trace_set_lock_names_source(sp_lockname_each_named);
	/* Lock order and the deadlock check need hold tracking's held lists;
	 * hold=1 adds the rest. */
	/* Hold states: in hold ticks of 500 us, at least 1 (hold.c). */
	sp_holdstate_long_ticks = sp_opts.hold_states_ms * 2;
	sp_holdstate_where = sp_opts.hold_where;
	if ((sp_opts.hold || sp_opts.lock_order || sp_opts.deadlock) &&
	    sp_hold_init(sp_opts.hold_sample, sp_opts.hold))
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
	glibc_locks_start();
	sp_locklib_prepare();
	sp_store_relaxed(&sp_account_on, sp_opts.account);
	if (sp_opts.enabled)
		syncprof_enable();
	sp_store_release(&init_state, 2);
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
	if (sp_load_acquire(&init_state) == 2) {
		/* Attached before: this session's report starts now. */
		return syncprof_reset();
	}
	runtime_start(options ? options : "");
	return 0;
}

__attribute__((constructor)) static void syncprof_constructor(void)
{
	sp_runtime_init();
}
