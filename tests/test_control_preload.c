/*
 * test_control_preload.c - 'syncprof ctl' on an unmodified program run
 * under the preload library with control=1: status (profiling is on by
 * default there), a report naming the interposed site by function, reset
 * (numbers before and after), off.
 *
 * Usage: test_control_preload SYNCPROF_CLI PRELOAD_LIB PLAIN_CTL_TARGET
 */
#include "tools_util.h"

static unsigned long long acquisitions(const char *cli, pid_t pid)
{
	char *out, *err;
	unsigned long long n;

	T_ASSERT_INT(t_run(&out, &err, "%s ctl %d report -f json", cli, (int)pid), ==, 0);
	n = t_json_sum(out, "acquisitions");
	free(out);
	free(err);
	return n;
}

int main(int argc, char **argv)
{
	char line[128], path[200], dir[100], *out, *err;
	char *targv[] = { NULL, "serve", NULL };
	unsigned long long a1, a2, a3;
	struct t_proc p;

	if (argc < 4) {
		fprintf(stderr, "usage: test_control_preload SYNCPROF_CLI PRELOAD_LIB TARGET\n");
		return 2;
	}
	targv[0] = argv[3];
	unsetenv("SYNCPROF_OPTIONS");
	snprintf(dir, sizeof(dir), "%s/ctl", t_tmp());
	setenv("SYNCPROF_CONTROL_DIR", dir, 1);
	setenv("LD_PRELOAD", argv[2], 1); /* for the target only: */
	t_start(&p, "control=1,report_at_exit=0", targv, line, sizeof(line));
	unsetenv("LD_PRELOAD"); /* the CLI runs without it */
	snprintf(path, sizeof(path), "%s/%d.sock", dir, (int)p.pid);
	T_ASSERT_INT(t_wait_path(path, 5000), ==, 0);

	T_ASSERT_INT(t_run(&out, &err, "%s ctl %d status", argv[1], (int)p.pid), ==, 0);
	T_ASSERT_CONTAINS(out, "profiling: on");
	free(out), free(err);
	t_sleep_ms(200);
	T_ASSERT_INT(t_run(&out, &err, "%s ctl %d report", argv[1], (int)p.pid), ==, 0);
	T_ASSERT_CONTAINS(out, "worker"); /* the interposed site, by function */
	free(out), free(err);
	a1 = acquisitions(argv[1], p.pid);
	T_ASSERT_UINT(a1, >=, 20);
	/* The reset with profiling off, the counts settled first: with it on,
	 * a2 < a1 held only while a reset and a report took less time than
	 * the 200 ms before a1 (test_control.c). */
	T_ASSERT_INT(t_run(&out, &err, "%s ctl %d off", argv[1], (int)p.pid), ==, 0);
	T_ASSERT_CONTAINS(out, "profiling: off (was on)");
	free(out), free(err);
	for (a2 = acquisitions(argv[1], p.pid);; a2 = a3) {
		t_sleep_ms(50);
		a3 = acquisitions(argv[1], p.pid);
		if (a3 == a2)
			break;
	}
	T_ASSERT_UINT(a2, >=, a1);
	T_ASSERT_INT(t_run(&out, &err, "%s ctl %d reset", argv[1], (int)p.pid), ==, 0);
	free(out), free(err);
	a2 = acquisitions(argv[1], p.pid);
	T_ASSERT_UINT(a2, ==, 0);
	T_ASSERT_INT(t_stop(&p), ==, 0);
	t_run(NULL, NULL, "rm -rf %s", t_tmp());
	fprintf(stderr, "test_control_preload: ok\n");
	return 0;
}
