/*
 * runtime.c - start-up, the control API and the report at exit.
 *
 * Design: a constructor reads SYNCPROF_OPTIONS once (options.c), switches
 * profiling on if asked and registers the report at exit.  Everything here
 * is idempotent and safe to reach before the constructor ran (a lock call
 * from another library's constructor simply goes unrecorded, as profiling
 * is still off then).
 *
 * Enabling is one relaxed store to syncprof__enabled, read by every probe;
 * the flag's cache line is written only here, so it stays shared-clean in
 * every core's cache (QSP swaps function pointers for the same effect).
 *
 * A reset takes a snapshot of everything collected so far and bumps the
 * reset epoch (which retires the maxima, see probe.c); reports subtract the
 * snapshot.  report_lock serialises reports and resets; it is taken before
 * the registry lock.  The reporting thread is marked busy, so lock calls it
 * makes while reporting (stdio, malloc) are not recorded.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

/*
 * Defined here, next to the constructor, on purpose: every instrumented
 * call site refers to it, so a static link always pulls in this object and
 * with it the constructor that reads SYNCPROF_OPTIONS.
 */
int syncprof__enabled;

static sp_lock_t report_lock = SP_LOCK_INIT;
static struct sp_rows snapshot; /* under report_lock */
static uint64_t window_start_ns; /* start of what reports cover */
static int ever_enabled;
static uint64_t state_since_ns; /* CLOCK_REALTIME of the last on/off switch */
static int init_state;
static char command[4096];

uint64_t sp_start_ns(void)
{
	return sp_load_relaxed(&window_start_ns);
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
	/* Remember when the state changed, for 'syncprof ctl PID status'. */
	if (!(__atomic_fetch_or(&syncprof__enabled, SYNCPROF__PROFILING, __ATOMIC_RELAXED) &
	      SYNCPROF__PROFILING))
		sp_store_relaxed(&state_since_ns, realtime_ns());
}

void syncprof_disable(void)
{
	if (__atomic_fetch_and(&syncprof__enabled, ~SYNCPROF__PROFILING, __ATOMIC_RELAXED) &
	    SYNCPROF__PROFILING)
		sp_store_relaxed(&state_since_ns, realtime_ns());
}

int syncprof_is_enabled(void)
{
	return !!(sp_load_relaxed(&syncprof__enabled) & SYNCPROF__PROFILING);
}

/*
 * Unlock calls of instrumented code reach the library only while some
 * feature needs them (SYNCPROF__UNLOCK_HOOKS); each such feature holds one
 * reason bit in the word itself (SP_FLAG_REASON), updated together with
 * SYNCPROF__UNLOCK_HOOKS in one compare-and-swap.
 */
void sp_unlock_hooks_set(int reason, int on)
{
	int old = sp_load_relaxed(&syncprof__enabled), now;
	const int reasons = SP_FLAG_REASON(SP_UNLOCK_HOOK_TRACE | SP_UNLOCK_HOOK_HOLD);

	do {
		now = on ? old | SP_FLAG_REASON(reason) : old & ~SP_FLAG_REASON(reason);
		now = now & reasons ? now | SYNCPROF__UNLOCK_HOOKS : now & ~SYNCPROF__UNLOCK_HOOKS;
	} while (!__atomic_compare_exchange_n(&syncprof__enabled, &old, now, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

unsigned long long syncprof_lost_events(void)
{
	return sp_lost_get();
}

int sp_report_snapshot(void)
{
	struct sp_rows now;
	int rc;

	rc = sp_report_collect(&now);
	if (rc)
		return rc;
	sp_rows_free(&snapshot);
	snapshot = now;
	sp_hold_snapshot();
	/* After the snapshot: an event between the two is in the snapshot's
	 * counts; only its maximum is forgotten. */
	sp_add_relaxed(&sp_reset_epoch, 1);
	sp_store_relaxed(&window_start_ns, sp_now_ns());
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

int sp_report_options_check(const struct syncprof_report_options *o)
{
	int ids[SP_MAX_COLUMNS];

	if ((unsigned)o->sort > SYNCPROF_SORT_HOLD || (unsigned)o->format > SYNCPROF_FORMAT_PPROF ||
	    sp_columns_parse(o->columns, ids, SP_MAX_COLUMNS) < 0)
		return -EINVAL;
	return 0;
}

void sp_report_lock(void)
{
	sp_lock(&report_lock);
}

void sp_report_unlock(void)
{
	sp_unlock(&report_lock);
}

int sp_report_build(struct sp_rows *out, const struct syncprof_report_options *o)
{
	int rc = sp_report_collect(out);

	if (!rc)
		rc = sp_report_subtract(out, &snapshot);
	if (!rc && o->coalesce)
		rc = sp_report_coalesce(out);
	if (rc) {
		sp_rows_free(out);
		return rc;
	}
	sp_report_sort(out, o->sort);
	sp_report_top(out, o->top);
	return 0;
}

int sp_report_rows(struct sp_rows *out, const struct syncprof_report_options *o)
{
	struct sp_thread *saved = sp_thread_enter();
	int rc;

	sp_lock(&report_lock);
	rc = sp_report_build(out, o);
	sp_unlock(&report_lock);
	sp_thread_leave(saved);
	return rc;
}

int syncprof_report(FILE *out, const struct syncprof_report_options *opts)
{
	struct sp_thread *saved;
	struct sp_render_ctx ctx;
	struct sp_rows rows;
	int rc;

	if (!opts) {
		sp_runtime_init();
		opts = &sp_opts.report;
	}
	if (!out || sp_report_options_check(opts))
		return -EINVAL;
	saved = sp_thread_enter();
	sp_lock(&report_lock);
	rc = sp_report_build(&rows, opts);
	if (!rc) {
		ctx.opts = opts;
		ctx.elapsed_ns = sp_now_ns() - sp_start_ns();
		ctx.lost = sp_lost_get();
		ctx.pid = getpid();
		ctx.command = command;
		rc = sp_render(out, &rows, &ctx);
		sp_rows_free(&rows);
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

/*
 * Under 'syncprof run', the program is the first process to load the
 * library with SYNCPROF_RUN=root in its environment; it changes that to
 * "kids" for everything it starts.  A child that recorded no lock
 * activity prints no report at exit: wrappers and shell scripts start many
 * helper processes, and pages of empty reports would bury the one that
 * matters.  The program itself always reports.
 */
static int run_child;

/*
 * The value is rewritten in place, not with setenv(): programs such as
 * bash build their children's environment from main()'s envp, which keeps
 * pointing at the original strings.
 */
static void run_role_init(void)
{
	extern char **environ;

	for (char **e = environ; e && *e; e++) {
		if (strncmp(*e, "SYNCPROF_RUN=", 13))
			continue;
		if (!strcmp(*e + 13, "root"))
			memcpy(*e + 13, "kids", 4); /* what this process starts */
		else
			run_child = 1;
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

static void report_at_exit(void)
{
	char path[4096];
	FILE *f = NULL;
	int rc;

	if (sp_opts.report_at_exit == 0 ||
	    (sp_opts.report_at_exit < 0 && !sp_load_relaxed(&ever_enabled)))
		return;
	if (run_child && sp_opts.report_at_exit < 0 && nothing_recorded())
		return;
	if (sp_opts.output) {
		const char *p = sp_path_expand(sp_opts.output, path, sizeof(path));

		f = p ? fopen(p, "we") : NULL;
		if (!f) {
			FILE *e = stderr_reopen();

			fprintf(e ? e : stderr,
				"syncprof: cannot write the report to '%s' (%s); writing it to "
				"stderr\n",
				sp_opts.output, p ? strerror(errno) : "name too long");
			if (e)
				fclose(e);
		}
	}
	if (!f)
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

void sp_runtime_init(void)
{
	int s = 0;

	if (!__atomic_compare_exchange_n(&init_state, &s, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		while (sp_load_acquire(&init_state) == 1)
			;
		return;
	}
	sp_options_defaults(&sp_opts);
	sp_options_parse(&sp_opts, getenv("SYNCPROF_OPTIONS"), stderr);
	read_command();
	sp_store_relaxed(&window_start_ns, sp_now_ns());
	stderr_keep();
	run_role_init();
	sp_store_relaxed(&state_since_ns, realtime_ns());
	atexit(report_at_exit);
	sp_hold_init(); /* when hold=1 */
	if (sp_opts.enabled)
		syncprof_enable();
	sp_store_release(&init_state, 2);
	if (sp_opts.control || sp_opts.warn_wait_ms || sp_opts.report_signal)
		sp_control_start();
}

__attribute__((constructor)) static void syncprof_constructor(void)
{
	sp_runtime_init();
}
