/*
 * test_trace_kill9 - SIGKILL of a traced process.
 *
 * The child emits numbered events from two threads, calls
 * syncprof_trace_flush(), tells the parent, and goes on emitting as fast as
 * it can (the writer thread busy writing) until the parent kills it with
 * SIGKILL.  The file must then be readable (complete, or ending inside one
 * record), and hold every event emitted before the flush: for each thread
 * all of 0..N-1, in order.  The CLI must read it too (exit 0 or 3).
 *
 * Usage: test_trace_kill9 [SYNCPROF_CLI]
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "trace_util.h"

#define N 10000

static int ev_id;
static int phase;

struct tally {
	uint64_t before[2], after;
	uint64_t next[2];
};

static void tally(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	struct tally *t = arg;

	(void)r;
	if (rec->type != SP_REC_EVENT || (int)rec->id != ev_id)
		return;
	T_ASSERT_UINT(rec->args[0], <, 2);
	if (rec->args[1] < N) {
		T_ASSERT_UINT(rec->args[1], ==, t->next[rec->args[0]]);
		t->next[rec->args[0]]++;
		t->before[rec->args[0]]++;
	} else {
		t->after++;
	}
}

static void *second(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < N; i++)
		SYNCPROF_TRACE(ev_id, 1, i);
	__atomic_store_n(&phase, 1, __ATOMIC_RELEASE);
	for (uint64_t i = N;; i++)
		SYNCPROF_TRACE(ev_id, 1, i);
	return NULL;
}

static void child(const char *path, int fd)
{
	pthread_t th;

	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	T_ASSERT_INT(pthread_create(&th, NULL, second, NULL), ==, 0);
	for (uint64_t i = 0; i < N; i++)
		SYNCPROF_TRACE(ev_id, 0, i);
	while (!__atomic_load_n(&phase, __ATOMIC_ACQUIRE))
		;
	T_ASSERT_INT(syncprof_trace_flush(), ==, 0);
	T_ASSERT_INT(write(fd, "k", 1), ==, 1);
	for (uint64_t i = N;; i++)
		SYNCPROF_TRACE(ev_id, 0, i);
}

int main(int argc, char **argv)
{
	static const char *const args[] = { "thread", "seq" };
	char dir[256], path[512], cmd[1200], c;
	struct tally t;
	int fds[2], st, status;
	pid_t pid;

	t_tmpdir(dir, sizeof(dir), "kill9");
	snprintf(path, sizeof(path), "%s/kill9.trace", dir);
	ev_id = syncprof_trace_register("kill9_ev", args, 2);
	T_ASSERT_INT(pipe(fds), ==, 0);
	for (int round = 0; round < 5; round++) {
		pid = fork();
		T_ASSERT_INT(pid, >=, 0);
		if (pid == 0) {
			alarm(30);
			child(path, fds[1]);
		}
		T_ASSERT_INT(read(fds[0], &c, 1), ==, 1);
		usleep(20000 + 15000 * round);
		kill(pid, SIGKILL);
		T_ASSERT_INT(waitpid(pid, &st, 0), ==, pid);
		T_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

		memset(&t, 0, sizeof(t));
		status = t_trace_read(path, tally, &t);
		T_ASSERT(status == SP_TRACE_READ_OK || status == SP_TRACE_READ_TRUNCATED);
		T_ASSERT_UINT(t.before[0], ==, N);
		T_ASSERT_UINT(t.before[1], ==, N);
		printf("round %d: %s, %d+%d events before the flush all there, %llu after\n", round,
		       status ? "truncated" : "complete", N, N, (unsigned long long)t.after);
		if (argc > 1) {
			snprintf(cmd, sizeof(cmd), "%s trace stats %s >/dev/null", argv[1], path);
			st = system(cmd);
			T_ASSERT(WIFEXITED(st));
			T_ASSERT_INT(WEXITSTATUS(st), ==, status ? 3 : 0);
		}
	}
	unlink(path);
	rmdir(dir);
	return 0;
}
