/*
 * test_trace_options - SYNCPROF_OPTIONS trace=FILE and trace_buffer=BYTES.
 *
 * The test runs itself again with SYNCPROF_OPTIONS set (the options are
 * read at start-up): the child finds tracing and profiling on, a buffer of
 * the requested size (its 200 events of 40 bytes do not fit in 4 KiB: some
 * are dropped, and counted), and its trace in the file named with its pid.
 * A bad trace_buffer value is reported on stderr and ignored.
 */
#include <sys/wait.h>

#include "trace_util.h"

struct tally {
	uint64_t events, dropped;
	uint32_t pid;
};

static void tally(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	struct tally *t = arg;

	t->pid = r->hdr.pid;
	if (rec->type == SP_REC_EVENT && rec->def && !strcmp(rec->def->name, "opt_ev"))
		t->events++;
	else if (rec->type == SP_REC_DROPPED)
		t->dropped += rec->count;
}

static int child(void)
{
	static const char *const args[] = { "i", "j" };
	int id = syncprof_trace_register("opt_ev", args, 2);

	T_ASSERT_INT(id, >, 0);
	T_ASSERT_INT(syncprof_is_enabled(), ==, 1);
	T_ASSERT_INT(syncprof_trace_event_on((unsigned)id), !=, 0);
	T_ASSERT_UINT(sp_trace_buf_size, ==, 4096);
	/* a slow writer, so that the buffer does fill */
	__atomic_store_n(&sp_trace_test_writer_delay_us, 100000, __ATOMIC_RELAXED);
	for (uint64_t i = 0; i < 200; i++)
		SYNCPROF_TRACE(id, i, i);
	return 0; /* exit writes the file */
}

static pid_t run(const char *self, const char *mode, const char *options, const char *err_path)
{
	pid_t pid = fork();

	T_ASSERT_INT(pid, >=, 0);
	if (pid == 0) {
		setenv("SYNCPROF_OPTIONS", options, 1);
		if (!freopen(err_path, "w", stderr))
			_exit(99);
		execl(self, self, mode, (char *)NULL);
		_exit(98);
	}
	return pid;
}

int main(int argc, char **argv)
{
	char dir[256], opts[600], path[600], err[600];
	struct tally t = { 0, 0, 0 };
	int st;
	pid_t pid;
	char *text;

	if (argc > 1 && !strcmp(argv[1], "child"))
		return child();
	if (argc > 1 && !strcmp(argv[1], "quiet"))
		return 0;
	t_tmpdir(dir, sizeof(dir), "options");
	snprintf(err, sizeof(err), "%s/stderr", dir);
	snprintf(opts, sizeof(opts), "trace=%s/opt-%%p.trace,trace_buffer=4096,report_at_exit=0",
		 dir);
	pid = run("/proc/self/exe", "child", opts, err);
	T_ASSERT_INT(waitpid(pid, &st, 0), ==, pid);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	snprintf(path, sizeof(path), "%s/opt-%d.trace", dir, (int)pid);
	T_ASSERT_INT(t_trace_read(path, tally, &t), ==, SP_TRACE_READ_OK);
	T_ASSERT_UINT(t.pid, ==, pid);
	T_ASSERT_UINT(t.events + t.dropped, ==, 200);
	T_ASSERT_UINT(t.dropped, >, 0);
	unlink(path);

	/* A bad size: a warning naming the key and the valid range. */
	snprintf(opts, sizeof(opts), "trace_buffer=12,report_at_exit=0");
	pid = run("/proc/self/exe", "quiet", opts, err);
	T_ASSERT_INT(waitpid(pid, &st, 0), ==, pid);
	T_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	text = t_slurp_file(err);
	T_ASSERT_CONTAINS(text, "bad value '12' for option 'trace_buffer'");
	free(text);
	unlink(err);
	rmdir(dir);
	return 0;
}
