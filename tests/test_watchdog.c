/*
 * test_watchdog.c - warn_wait: a program whose main thread waits 800 ms
 * for a mutex another thread holds, with warn_wait=100, gets exactly one
 * warning naming the waiting thread, its site (file:line) and the lock,
 * and - with hold=1 - the holder thread and the site where it took the
 * lock; then one final line with the total.  Without hold tracking the
 * warning says the holder is unknown and why; a 30 ms wait gets nothing.
 * An 800 ms condition wait gets one warning that says it is one.  (800 ms:
 * on a loaded machine, a sanitized build may start waiting late.)
 *
 * Usage: test_watchdog CTL_TARGET CTL_TARGET_SOURCE
 *        test_watchdog --preload PRELOAD_LIB PLAIN_CTL_TARGET CTL_TARGET_SOURCE
 * The second form runs an uninstrumented build of the same program under
 * LD_PRELOAD (interposed sites, named by libdw).
 */
#include "tools_util.h"

static char env[512];
static const char *target, *source;

/* The one warning line of @err (asserting there is exactly one). */
static const char *one_warning(const char *err)
{
	T_ASSERT_INT(t_count_lines(err, "syncprof: warning:"), ==, 1);
	return strstr(err, "syncprof: warning:");
}

static void long_wait(int hold)
{
	char *out, *err, waiter[64], holder[64];
	const char *w, *total;
	double ms = 0;

	T_ASSERT_INT(t_run(&out, &err,
			   "%s SYNCPROF_OPTIONS=enabled=1,warn_wait=100,hold=%d,report_at_exit=0 "
			   "%s hold 800",
			   env, hold, target),
		     ==, 0);
	w = one_warning(err);
	snprintf(waiter, sizeof(waiter), "ctl_target.c:%d", t_marker_line(source, "SITE_WAITER"));
	snprintf(holder, sizeof(holder), "ctl_target.c:%d", t_marker_line(source, "SITE_HOLDER"));
	T_ASSERT_CONTAINS(w, waiter);
	T_ASSERT_CONTAINS(w, "has been waiting");
	T_ASSERT_CONTAINS(w, "for mutex 0x");
	T_ASSERT_CONTAINS(w, "(ctl_"); /* the thread's name */
	if (hold) {
		/* Both sites once, in this order: the waiter's, then the holder's. */
		T_ASSERT_CONTAINS(w, "held by thread");
		T_ASSERT_CONTAINS(strstr(w, "held by thread"), holder);
		T_ASSERT(strstr(w, holder) > strstr(w, waiter));
	} else {
		T_ASSERT_CONTAINS(w, "holder unknown (hold tracking is off");
	}
	T_ASSERT_INT(t_count_lines(err, "in total for mutex"), ==, 1);
	total = strstr(err, "waited ");
	T_ASSERT(total != NULL);
	T_ASSERT_INT(sscanf(total, "waited %lf ms", &ms), ==, 1);
	T_ASSERT_INT(ms, >, 100); /* it was warned about, so it waited longer */
	T_ASSERT_CONTAINS(total, waiter);
	free(out);
	free(err);
}

/* A condition wait longer than warn_wait is warned about as such. */
static void cond_wait(void)
{
	char *out, *err, site[64];
	const char *w;

	T_ASSERT_INT(t_run(&out, &err,
			   "%s SYNCPROF_OPTIONS=enabled=1,warn_wait=100,report_at_exit=0 "
			   "%s condwait 800",
			   env, target),
		     ==, 0);
	w = one_warning(err);
	snprintf(site, sizeof(site), "ctl_target.c:%d", t_marker_line(source, "SITE_CONDWAIT"));
	T_ASSERT_CONTAINS(w, site);
	T_ASSERT_CONTAINS(w, "for condvar 0x");
	T_ASSERT_CONTAINS(w, "a condition wait");
	T_ASSERT_INT(t_count_lines(err, "in total for condvar"), ==, 1);
	free(out);
	free(err);
}

static void short_wait(void)
{
	char *out, *err;

	T_ASSERT_INT(t_run(&out, &err,
			   "%s SYNCPROF_OPTIONS=enabled=1,warn_wait=100,hold=1,report_at_exit=0 "
			   "%s hold 30",
			   env, target),
		     ==, 0);
	T_ASSERT_INT(t_count_lines(err, "syncprof"), ==, 0);
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "--preload")) {
		snprintf(env, sizeof(env), "LD_PRELOAD=%s", argv[2]);
		target = argv[3];
		source = argv[4];
	} else if (argc == 3) {
		target = argv[1];
		source = argv[2];
	} else {
		fprintf(stderr, "usage: test_watchdog CTL_TARGET CTL_TARGET_SOURCE\n"
				"       test_watchdog --preload PRELOAD_LIB PLAIN_CTL_TARGET "
				"CTL_TARGET_SOURCE\n");
		return 2;
	}
	unsetenv("SYNCPROF_OPTIONS");
	long_wait(1);
	long_wait(0);
	cond_wait();
	short_wait();
	t_run(NULL, NULL, "rm -rf %s", t_tmp());
	fprintf(stderr, "test_watchdog: ok\n");
	return 0;
}
