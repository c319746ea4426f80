/*
 * test_trace_write_error - a trace file that cannot take all its data
 * (docs/trace-format.md, "Write errors").  RLIMIT_FSIZE stands in for a
 * full disk: the write fails with EFBIG where a full filesystem says
 * ENOSPC, through the same code, and it needs no mount
 * (tests/preload/full_disk.sh does the same with a real full tmpfs).
 *   - open on a file that cannot take even its header (/dev/full) fails
 *     with -ENOSPC, and the file open before stays open;
 *   - in a child limited to 64 KiB, with the writer thread, a thread that
 *     exits with a full ring of drops and the main thread's flushes all
 *     writing: no SIGXFSZ kills it; flush and close return -EFBIG, every
 *     time once failed; the file ends on a record boundary (reads OK),
 *     its header says EFBIG, and the books balance exactly: events
 *     emitted = EVENT records + DROPPED counts + the WRITE_LOSS count, and
 *     = EVENT records + the growth of syncprof_trace_dropped();
 *   - in a child that exits with the file open: exit status 0, and stderr
 *     says at once that writing failed, then how many events were lost.
 */
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "trace_util.h"

#define LIMIT (64 << 10)
#define MAIN_EVENTS 20000
#define THREAD_EVENTS 20000

static int ev_id;

struct tally {
	uint64_t events, dropped, loss, losses;
	uint32_t loss_error;
};

static void tally(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	struct tally *t = arg;

	(void)r;
	if (rec->type == SP_REC_EVENT && (int)rec->id == ev_id)
		t->events++;
	else if (rec->type == SP_REC_DROPPED)
		t->dropped += rec->count;
	else if (rec->type == SP_REC_WRITE_LOSS) {
		t->loss += rec->count;
		t->losses++;
		t->loss_error = rec->error;
	}
}

static void *thread_body(void *arg)
{
	(void)arg;
	for (int i = 0; i < THREAD_EVENTS; i++)
		SYNCPROF_TRACE(ev_id, 2, i, 0);
	return NULL; /* its exit writes its ring and drops: into a full file */
}

static void limit_file_size(void)
{
	struct rlimit rl;

	T_ASSERT_INT(getrlimit(RLIMIT_FSIZE, &rl), ==, 0);
	rl.rlim_cur = LIMIT;
	T_ASSERT_INT(setrlimit(RLIMIT_FSIZE, &rl), ==, 0);
}

/* Emit from the main thread, flushing every 500 events. */
static int emit_main(int *first_error)
{
	int rc = 0;

	*first_error = 0;
	for (int i = 0; i < MAIN_EVENTS; i++) {
		SYNCPROF_TRACE(ev_id, 1, i, 0);
		if (i % 500 != 499)
			continue;
		rc = syncprof_trace_flush();
		if (rc && !*first_error)
			*first_error = rc;
		if (*first_error)
			T_ASSERT_INT(rc, ==, *first_error); /* failed for good */
	}
	return rc;
}

/* Child: fill the limited file, close it, check the books. */
static void child_close(const char *path, const char *counts)
{
	unsigned long long before;
	int first_error, rc;
	pthread_t th;
	FILE *f;

	limit_file_size();
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	before = syncprof_trace_dropped();
	SYNCPROF_TRACE(ev_id, 1, 0, 0); /* main's ring: the default 1 MiB */
	T_ASSERT_INT(syncprof_trace_set_buffer_size(4096), ==, 0); /* the thread's: drops */
	T_ASSERT_INT(pthread_create(&th, NULL, thread_body, NULL), ==, 0);
	pthread_join(th, NULL);
	rc = emit_main(&first_error);
	T_ASSERT_INT(first_error, ==, -EFBIG);
	T_ASSERT_INT(rc, ==, -EFBIG);
	T_ASSERT_INT(syncprof_trace_close(), ==, -EFBIG);
	T_ASSERT_INT(syncprof_trace_close(), ==, -EBADF);
	f = fopen(counts, "w");
	T_ASSERT(f);
	fprintf(f, "%llu\n", syncprof_trace_dropped() - before);
	fclose(f);
	exit(0);
}

/* Child: fill the limited file and exit with it open. */
static void child_exit(const char *path)
{
	pthread_t th;
	int first_error;

	limit_file_size();
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	T_ASSERT_INT(pthread_create(&th, NULL, thread_body, NULL), ==, 0);
	pthread_join(th, NULL);
	emit_main(&first_error);
	for (int i = 0; i < MAIN_EVENTS; i++)
		SYNCPROF_TRACE(ev_id, 3, i, 0); /* unflushed: lost at exit */
	exit(0);
}

static pid_t spawn_close(const char *path, const char *counts)
{
	pid_t pid = fork();

	T_ASSERT_INT(pid, >=, 0);
	if (pid == 0) {
		alarm(60);
		child_close(path, counts);
	}
	return pid;
}

/* The exit child is this program again, run with its stderr in @err_path
 * from the start: the library keeps the stderr it starts with. */
static pid_t spawn_exit(const char *self, const char *path, const char *err_path)
{
	pid_t pid = fork();

	T_ASSERT_INT(pid, >=, 0);
	if (pid == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(120);
		alarm(60);
		execl(self, self, "--exit-child", path, (char *)NULL);
		_exit(121);
	}
	return pid;
}

static void wait_ok(pid_t pid, const char *what)
{
	int st;

	T_ASSERT_INT(waitpid(pid, &st, 0), ==, pid);
	if (WIFSIGNALED(st))
		T_FAIL("%s: killed by signal %d", what, WTERMSIG(st));
	T_ASSERT(WIFEXITED(st));
	T_ASSERT_INT(WEXITSTATUS(st), ==, 0);
}

/* The limited file: whole records, marked, and the books balance. */
static void check_file(const char *path, uint64_t emitted, long long dropped_growth)
{
	struct sp_trace_file_header hdr;
	struct tally t = { 0 };
	size_t size;
	uint8_t *data = t_read_all(path, &size);
	int status = t_trace_read_mem(data, size, tally, &t, NULL, &hdr);

	free(data);
	T_ASSERT_INT(status, ==, SP_TRACE_READ_OK); /* no partial record at the end */
	T_ASSERT_UINT(size, <=, LIMIT);
	T_ASSERT_UINT(hdr.flags & SP_TRACE_FLAG_WRITE_ERROR, !=, 0);
	T_ASSERT_INT(hdr.write_errno, ==, EFBIG);
	T_ASSERT_UINT(t.events, <, emitted);
	if (dropped_growth >= 0)
		T_ASSERT_UINT(t.events + (uint64_t)dropped_growth, ==, emitted);
	/* The cut keeps room for the WRITE_LOSS record unless the failed
	 * write got fewer than 40 bytes in (rare): then the file cannot say. */
	T_ASSERT_UINT(t.losses, <=, 1);
	if (t.losses) {
		T_ASSERT_INT(t.loss_error, ==, EFBIG);
		T_ASSERT_UINT(t.events + t.dropped + t.loss, ==, emitted);
	}
	printf("%s: %llu events in the file, %llu dropped, %llu lost to EFBIG%s\n", path,
	       (unsigned long long)t.events, (unsigned long long)t.dropped,
	       (unsigned long long)t.loss, t.losses ? "" : " (no WRITE_LOSS record: no room)");
}

static void test_dev_full(const char *dir)
{
	struct tally t = { 0 };
	char path[512];

	if (access("/dev/full", W_OK)) {
		printf("no /dev/full: open of a full file not tested\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/before.trace", dir);
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	for (int i = 0; i < 10; i++)
		SYNCPROF_TRACE(ev_id, 0, i, 0);
	T_ASSERT_INT(syncprof_trace_open("/dev/full"), ==, -ENOSPC);
	for (int i = 0; i < 10; i++)
		SYNCPROF_TRACE(ev_id, 0, i, 0); /* still into the first file */
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);
	T_ASSERT_INT(t_trace_read(path, tally, &t), ==, SP_TRACE_READ_OK);
	T_ASSERT_UINT(t.events, ==, 20);
	unlink(path);
}

int main(int argc, char **argv)
{
	static const char *const args[] = { "who", "i" };
	char dir[256], path[512], counts[512], err_path[512];
	char *err, *counted;

	ev_id = syncprof_trace_register("wrerr_ev", args, 2);
	T_ASSERT_INT(ev_id, >, 0);
	if (argc == 3 && !strcmp(argv[1], "--exit-child"))
		child_exit(argv[2]);
	t_tmpdir(dir, sizeof(dir), "wrerr");
	test_dev_full(dir);

	snprintf(path, sizeof(path), "%s/close.trace", dir);
	snprintf(counts, sizeof(counts), "%s/close.counts", dir);
	wait_ok(spawn_close(path, counts), "child closing the file");
	counted = t_slurp_file(counts);
	T_ASSERT(counted);
	check_file(path, 1 + MAIN_EVENTS + THREAD_EVENTS, atoll(counted));
	free(counted);

	snprintf(path, sizeof(path), "%s/exit.trace", dir);
	snprintf(err_path, sizeof(err_path), "%s/exit.stderr", dir);
	wait_ok(spawn_exit("/proc/self/exe", path, err_path), "child exiting with the file open");
	err = t_slurp_file(err_path);
	T_ASSERT(err);
	{
		char want[1024];

		snprintf(want, sizeof(want),
			 "syncprof: warning: writing the trace file '%s' failed: File too large; "
			 "events from now on are counted as dropped\n",
			 path);
		T_ASSERT_CONTAINS(err, want);
		snprintf(want, sizeof(want), "events were lost to the write error on the trace "
					     "file '%s' (File too large), from ",
			 path);
		T_ASSERT_CONTAINS(err, want);
		/* once per file, however many writes and threads met it */
		T_ASSERT(!strstr(strstr(err, "failed: File too large") + 1,
				 "failed: File too large"));
	}
	check_file(path, 2 * MAIN_EVENTS + THREAD_EVENTS, -1);
	free(err);
	unlink(path);
	unlink(err_path);
	unlink(counts);
	snprintf(path, sizeof(path), "%s/close.trace", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}
