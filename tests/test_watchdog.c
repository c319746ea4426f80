/*
 * test_watchdog.c - warn_wait: a program whose main thread waits 300 ms
 * for a mutex another thread holds, with warn_wait=100, gets exactly one
 * warning naming the waiting thread, its site (file:line) and the lock -
 * and, when the library has hold tracking, the holder thread and its
 * site - and one final line with the total; a 30 ms wait gets nothing.
 *
 * Usage: test_watchdog CTL_TARGET CTL_TARGET_SOURCE
 */
#include "tools_util.h"

static const char *target, *source;

static void long_wait(void)
{
	char *out, *err, site[64], holder[64];
	const char *w, *total;
	double ms = 0;

	T_ASSERT_INT(t_run(&out, &err,
			   "SYNCPROF_OPTIONS=enabled=1,warn_wait=100,report_at_exit=0 %s hold 300",
			   target),
		     ==, 0);
	T_ASSERT_INT(t_count_lines(err, "syncprof: warning:"), ==, 1);
	w = strstr(err, "syncprof: warning:");
	snprintf(site, sizeof(site), "ctl_target.c:%d", t_marker_line(source, "SITE_WAITER"));
	snprintf(holder, sizeof(holder), "ctl_target.c:%d", t_marker_line(source, "SITE_HOLDER"));
	T_ASSERT_CONTAINS(w, site);
	T_ASSERT_CONTAINS(w, "has been waiting");
	T_ASSERT_CONTAINS(w, "for mutex 0x");
	T_ASSERT_CONTAINS(w, "(ctl_target)"); /* the thread's name */
	if (strstr(w, "held by thread")) {
		T_ASSERT_CONTAINS(w, holder);
	} else {
		T_ASSERT_CONTAINS(w, "holder unknown");
		fprintf(stderr, "note: no hold tracking in this build; holder site not checked\n");
	}
	T_ASSERT_INT(t_count_lines(err, "in total for mutex"), ==, 1);
	total = strstr(err, "waited ");
	T_ASSERT(total != NULL);
	T_ASSERT_INT(sscanf(total, "waited %lf ms", &ms), ==, 1);
	T_ASSERT_INT(ms, >, 100); /* it was warned about, so it waited longer */
	T_ASSERT_CONTAINS(total, site);
	free(out);
	free(err);
}

static void short_wait(void)
{
	char *out, *err;

	T_ASSERT_INT(t_run(&out, &err,
			   "SYNCPROF_OPTIONS=enabled=1,warn_wait=100,report_at_exit=0 %s hold 30",
			   target),
		     ==, 0);
	T_ASSERT_INT(t_count_lines(err, "syncprof"), ==, 0);
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_watchdog CTL_TARGET CTL_TARGET_SOURCE\n");
		return 2;
	}
	target = argv[1];
	source = argv[2];
	unsetenv("SYNCPROF_OPTIONS");
	long_wait();
	short_wait();
	t_run(NULL, NULL, "rm -rf %s", t_tmp());
	fprintf(stderr, "test_watchdog: ok\n");
	return 0;
}
