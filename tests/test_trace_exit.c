/*
 * test_trace_exit - what reaches the file without an explicit flush:
 *   - a thread's events, when the thread exits (before the process does);
 *   - a quiet program's events, within the writer's timer period;
 *   - the main thread's events and pending drops, when the process calls
 *     exit() with the trace still open.
 * The traced program is a child process, so its exit can be observed.
 */
#include <pthread.h>
#include <sys/wait.h>

#include "trace_util.h"

static int ev_id;

struct tally {
	uint64_t by_who[4], dropped;
};

static void tally(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	struct tally *t = arg;

	(void)r;
	if (rec->type == SP_REC_EVENT && (int)rec->id == ev_id && rec->args[0] < 4)
		t->by_who[rec->args[0]]++;
	else if (rec->type == SP_REC_DROPPED)
		t->dropped += rec->count;
}

static void *thread_body(void *arg)
{
	(void)arg;
	for (int i = 0; i < 1000; i++)
		SYNCPROF_TRACE(ev_id, 1, i);
	return NULL; /* no flush: the thread's exit writes its events */
}

static void child(const char *path)
{
	struct tally t = { { 0 }, 0 };
	pthread_t th;
	struct timespec d = { 0, 400000000 };

	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	T_ASSERT_INT(pthread_create(&th, NULL, thread_body, NULL), ==, 0);
	pthread_join(th, NULL);
	/* The thread's exit flushed its ring: in the file now.  (The writer
	 * may be writing: a read can end inside a record.) */
	t_trace_read(path, tally, &t);
	T_ASSERT_UINT(t.by_who[1], ==, 1000);

	/* A quiet program: 10 events, then the writer's timer (100 ms). */
	for (int i = 0; i < 10; i++)
		SYNCPROF_TRACE(ev_id, 2, i);
	nanosleep(&d, NULL);
	memset(&t, 0, sizeof(t));
	t_trace_read(path, tally, &t);
	T_ASSERT_UINT(t.by_who[2], ==, 10);

	/* Then exit without closing: more events than the ring holds, so
	 * the exit also writes pending drops. */
	for (int i = 0; i < 100000; i++)
		SYNCPROF_TRACE(ev_id, 3, i);
	exit(0);
}

int main(void)
{
	static const char *const args[] = { "who", "i" };
	char dir[256], path[512];
	struct tally t = { { 0 }, 0 };
	int st;
	pid_t pid;

	t_tmpdir(dir, sizeof(dir), "exit");
	snprintf(path, sizeof(path), "%s/exit.trace", dir);
	ev_id = syncprof_trace_register("exit_ev", args, 2);
	T_ASSERT_INT(syncprof_trace_set_buffer_size(64 << 10), ==, 0);
	pid = fork();
	T_ASSERT_INT(pid, >=, 0);
	if (pid == 0) {
		alarm(30);
		child(path);
	}
	T_ASSERT_INT(waitpid(pid, &st, 0), ==, pid);
	T_ASSERT(WIFEXITED(st));
	T_ASSERT_INT(WEXITSTATUS(st), ==, 0);
	T_ASSERT_INT(t_trace_read(path, tally, &t), ==, SP_TRACE_READ_OK);
	T_ASSERT_UINT(t.by_who[1], ==, 1000);
	T_ASSERT_UINT(t.by_who[2], ==, 10);
	T_ASSERT_UINT(t.by_who[3] + t.dropped, ==, 100000);
	printf("exit flush: thread 1000, quiet 10, main %llu + %llu dropped\n",
	       (unsigned long long)t.by_who[3], (unsigned long long)t.dropped);
	unlink(path);
	rmdir(dir);
	return 0;
}
