/*
 * test_trace_fork - fork() while tracing, with other threads emitting.
 *
 * 1. File name with %p: the child traces into its own file (its pid in the
 *    name and in the header), holding the child's events only, written by
 *    the child's own writer thread before the child exits; the parent's
 *    file holds the parent's events only, none lost by the fork.
 * 2. File name without %p: tracing stops cleanly in the child (no file of
 *    its own, no writes into the parent's file, no hang at exit), and the
 *    parent goes on tracing.
 * Every child is waited for with a deadline: a hang fails the test.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "trace_util.h"

static int ev_id;
static int stop;
static uint64_t spun;

struct tally {
	uint64_t by_who[4]; /* arg0: 1 parent main, 2 parent thread, 3 child */
	uint64_t dropped;
	uint32_t pid;
};

static void *spinner(void *arg)
{
	uint64_t n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		SYNCPROF_TRACE(ev_id, 2, n);
		n++;
	}
	spun = n;
	return NULL;
}

static void tally(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	struct tally *t = arg;

	t->pid = r->hdr.pid;
	if (rec->type == SP_REC_EVENT && (int)rec->id == ev_id) {
		T_ASSERT_UINT(rec->args[0], <, 4);
		t->by_who[rec->args[0]]++;
	} else if (rec->type == SP_REC_DROPPED) {
		t->dropped += rec->count;
	}
}

/* Wait for @pid at most 20 s; returns its exit status. */
static int wait_child(pid_t pid)
{
	for (int i = 0; i < 2000; i++) {
		int st;
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid) {
			T_ASSERT(WIFEXITED(st));
			return WEXITSTATUS(st);
		}
		usleep(10000);
	}
	kill(pid, SIGKILL);
	T_FAIL("child %d hangs", (int)pid);
}

static void run(const char *dir, int with_pid)
{
	char tmpl[512], parent_path[512], child_path[512];
	struct tally pt = { { 0 }, 0, 0 }, ct = { { 0 }, 0, 0 };
	pthread_t th;
	pid_t child;

	snprintf(tmpl, sizeof(tmpl), "%s/fork%s.trace", dir, with_pid ? "-%p" : "");
	snprintf(parent_path, sizeof(parent_path), "%s/fork%s%d.trace", dir, with_pid ? "-" : "",
		 with_pid ? (int)getpid() : 0);
	if (!with_pid)
		snprintf(parent_path, sizeof(parent_path), "%s/fork.trace", dir);
	T_ASSERT_INT(syncprof_trace_open(tmpl), ==, 0);
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	T_ASSERT_INT(pthread_create(&th, NULL, spinner, NULL), ==, 0);
	for (int i = 0; i < 1000; i++)
		SYNCPROF_TRACE(ev_id, 1, i);
	usleep(20000);

	fflush(stdout);
	child = fork();
	T_ASSERT_INT(child, >=, 0);
	if (child == 0) {
		/* The spinner thread does not exist here. */
		for (int i = 0; i < 500; i++)
			SYNCPROF_TRACE(ev_id, 3, i);
#if defined(__SANITIZE_THREAD__)
		if (0) { /* no writer thread in a fork child under TSan */
#else
		if (with_pid) {
#endif
			/* The child's writer (started by its first event)
			 * drains on its timer, before any exit. */
			struct tally own = { { 0 }, 0, 0 };
			struct timespec d = { 0, 300000000 };
			char own_path[512];

			nanosleep(&d, NULL);
			snprintf(own_path, sizeof(own_path), "%s/fork-%d.trace", dir, (int)getpid());
			t_trace_read(own_path, tally, &own);
			T_ASSERT_UINT(own.by_who[3], ==, 500);
		}
		exit(0); /* the exit flush writes the child's file, if any */
	}
	for (int i = 0; i < 1000; i++)
		SYNCPROF_TRACE(ev_id, 1, i);
	T_ASSERT_INT(wait_child(child), ==, 0);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);

	T_ASSERT_INT(t_trace_read(parent_path, tally, &pt), ==, SP_TRACE_READ_OK);
	T_ASSERT_UINT(pt.pid, ==, getpid());
	T_ASSERT_UINT(pt.by_who[3], ==, 0);
	/* Exact: everything the parent's threads emitted is in its file or
	 * counted as dropped, across the fork. */
	T_ASSERT_UINT(pt.by_who[1] + pt.by_who[2] + pt.dropped, ==, 2000 + spun);
	T_ASSERT_UINT(pt.by_who[2], >, 0);
	snprintf(child_path, sizeof(child_path), "%s/fork-%d.trace", dir, (int)child);
	if (with_pid) {
		T_ASSERT_INT(t_trace_read(child_path, tally, &ct), ==, SP_TRACE_READ_OK);
		T_ASSERT_UINT(ct.pid, ==, child);
		T_ASSERT_UINT(ct.by_who[1], ==, 0);
		T_ASSERT_UINT(ct.by_who[2], ==, 0);
		T_ASSERT_UINT(ct.by_who[3] + ct.dropped, ==, 500);
		unlink(child_path);
	} else {
		T_ASSERT_INT(access(child_path, F_OK), !=, 0);
	}
	printf("fork %s %%p: parent file %llu+%llu events, child file %llu\n",
	       with_pid ? "with" : "without", (unsigned long long)pt.by_who[1],
	       (unsigned long long)pt.by_who[2], (unsigned long long)ct.by_who[3]);
	unlink(parent_path);
}

int main(void)
{
	static const char *const args[] = { "who", "i" };
	char dir[256];

	alarm(60);
	t_tmpdir(dir, sizeof(dir), "fork");
	ev_id = syncprof_trace_register("fork_ev", args, 2);
	T_ASSERT_INT(ev_id, >, 0);
	run(dir, 1);
	run(dir, 0);
	rmdir(dir);
	return 0;
}
