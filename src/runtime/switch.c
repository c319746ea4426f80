/*
 * switch.c - the running profile's state: the on/off switch and its
 * dates, the profiled time, resets, the options read at start-up and the
 * reports made of it, for the API (syncprof.h), the control socket, the
 * watchdog and the report at exit.  Below lifecycle.c, which starts
 * everything: nothing here starts or calls what is above it.
 *
 * Enabling sets a bit of syncprof__enabled (one atomic or, under
 * state_lock, which serialises the switches and their dates), read
 * relaxed by every probe; the flag's cache line is written only here, so
 * it stays shared-clean in every core's cache (QSP swaps function
 * pointers for the same effect).  The flag word itself is defined in
 * lifecycle.c, next to the constructor (see there).
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
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "record/lockorder.h"
#include "runtime/runtime.h"
#include "report/collect.h"

struct sp_options sp_opts;

/* Every skip= pattern the options accept reaches record/stack.c. */
_Static_assert(SP_MAX_SKIP <= SP_STACK_MAX_SKIP, "stack.c keeps fewer skip patterns");

static sp_lock_t report_lock = SP_LOCK_INIT;
/*
 * Written under report_lock: the reset's snapshot, and the threads' time
 * account as it stood when profiling went off (a profile of its own, for
 * the arena its names live in): reports made while profiling is off show
 * it, so that, as elapsed_ns, the profile does not change from one report
 * to the next (tests/preload/rerender.sh compares live reports with saved
 * ones).  frozen is valid while frozen_valid is 1, cleared by
 * syncprof_enable().
 */
static struct {
	struct sp_rows snapshot;
	struct sp_profile frozen;
	int frozen_valid;
} reports;
/*
 * Profiled time: how long profiling was on since start-up or the last
 * reset (on_ns, plus the current stretch since on_since_ns while on), the
 * "elapsed_ns" of a profile.  A profile taken while profiling is off
 * therefore does not change from one report to the next.  Written under
 * state_lock by the switches and the reset.
 */
static sp_lock_t state_lock = SP_LOCK_INIT;
static struct {
	uint64_t on_ns, on_since_ns;
	int ever_enabled;
	uint64_t since_ns; /* CLOCK_REALTIME of the last on/off switch */
} switches;

/* The program's command line, read once at start-up (sp_command_read()). */
static char command[4096] SP_LARGE;

uint64_t sp_profiled_ns(void)
{
	uint64_t ns;

	sp_lock(&state_lock);
	ns = switches.on_ns;
	if (syncprof_is_enabled())
		ns += sp_now_ns() - switches.on_since_ns;
	sp_unlock(&state_lock);
	return ns;
}

const char *sp_command(void)
{
	return command;
}

/* argv as the constructors were given it (sp_command_from_argv()). */
static char **start_argv;

void sp_command_from_argv(int argc, char **argv)
{
	if (argc > 0 && argv && argv[0])
		start_argv = argv;
}

/* The arguments into command[], each ended by a NUL as /proc/self/cmdline
 * gives them (sp_command_read() makes them spaces), without the file's
 * open, read and close (~20 us here for a process's first /proc file). */
static ssize_t command_of_argv(char **argv)
{
	size_t n = 0;

	for (; *argv && n < sizeof(command) - 1; argv++) {
		size_t len = strlen(*argv);

		if (len > sizeof(command) - 1 - n)
			len = sizeof(command) - 1 - n;
		memcpy(command + n, *argv, len);
		n += len;
		if (n < sizeof(command) - 1)
			command[n++] = '\0';
	}
	return (ssize_t)n;
}

void sp_command_read(int at_start)
{
	ssize_t n;

	if (at_start && start_argv) {
		n = command_of_argv(start_argv);
	} else {
		int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return;
		n = read(fd, command, sizeof(command) - 1);
		close(fd);
	}
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
	return sp_load_relaxed(&switches.since_ns);
}

void syncprof_enable(void)
{
	sp_store_relaxed(&switches.ever_enabled, 1);
	sp_store_relaxed(&reports.frozen_valid, 0); /* the account runs on */
	sp_lock(&state_lock);
	/* Remember when the state changed, for 'syncprof ctl PID status'. */
	if (!(__atomic_fetch_or(&syncprof__enabled, SYNCPROF__PROFILING, __ATOMIC_RELAXED) &
	      SYNCPROF__PROFILING)) {
		sp_store_relaxed(&switches.since_ns, realtime_ns());
		switches.on_since_ns = sp_now_ns();
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
	if (reports.frozen.arena)
		sp_profile_free(&reports.frozen);
	memset(&reports.frozen, 0, sizeof(reports.frozen));
	if (!sp_profile_init(&reports.frozen) && !sp_collect_account(&reports.frozen))
		sp_store_relaxed(&reports.frozen_valid, 1);
	sp_unlock(&report_lock);
	sp_thread_leave(saved);
}

/* @p's account: the frozen one while profiling is off, else collected. */
static int account_locked(struct sp_profile *p)
{
	struct sp_account *a = &p->account;

	if (!sp_load_relaxed(&sp_account_on))
		return 0; /* account=0: none, and the reports say nothing of it */
	if (syncprof_is_enabled() || !sp_load_relaxed(&reports.frozen_valid))
		return sp_collect_account(p);
	*a = reports.frozen.account;
	a->unavailable = sp_profile_intern(p, reports.frozen.account.unavailable);
	a->reset = sp_load_relaxed(&sp_reset_epoch) != 0;
	if (a->n) {
		a->v = sp_profile_alloc(p, a->n * sizeof(*a->v));
		if (!a->v)
			return -ENOMEM;
		for (size_t i = 0; i < a->n; i++) {
			a->v[i] = reports.frozen.account.v[i];
			a->v[i].name = sp_profile_intern(p, reports.frozen.account.v[i].name);
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
		sp_store_relaxed(&switches.since_ns, realtime_ns());
		switches.on_ns += sp_now_ns() - switches.on_since_ns;
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
	sp_rows_free(&reports.snapshot);
	reports.snapshot = now;
	sp_holdstate_snapshot();
	sp_blame_snapshot();
	sp_order_snapshot();
	/* After the snapshot: an event between the two is in the snapshot's
	 * counts; only its maximum is forgotten. */
	sp_add_relaxed(&sp_reset_epoch, 1);
	sp_lock(&state_lock);
	switches.on_ns = 0;
	switches.on_since_ns = sp_now_ns();
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
int sp_report_build_locked(struct sp_profile *p, const struct syncprof_report_options *o,
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
		p->hold_untracked = sp_hold_untracked();
		p->blame_lost = sp_blame_lost();
		sp_hold_ticker_lateness(&p->hold_late_ticks, &p->hold_gap_max_ns);
		sp_hold_clock_mode(&p->hold_clock_ns, &p->hold_clock_switches);
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
		rc = sp_report_subtract(&p->rows, &reports.snapshot);
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
	rc = sp_report_build_locked(p, o, 1);
	sp_unlock(&report_lock);
	sp_thread_leave(saved);
	return rc;
}

int sp_report_write(FILE *out, const struct syncprof_report_options *opts)
{
	struct sp_thread *saved;
	struct sp_profile p;
	int rc;

	if (!out || !opts || sp_report_options_check(opts))
		return -EINVAL;
	saved = sp_thread_enter();
	sp_lock(&report_lock);
	rc = sp_report_build_locked(&p, opts, 1);
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


int sp_ever_enabled(void)
{
	return sp_load_relaxed(&switches.ever_enabled);
}

/* Start-up: the state's date is now. */
void sp_state_started(void)
{
	sp_store_relaxed(&switches.since_ns, realtime_ns());
}
