/*
 * test_trace_locks - lock events from the profiler.
 *
 * Instrumented code (syncprof/instrument.h) with profiling and tracing on:
 * a contended mutex yields lock_wait then lock_acquired with the wait, an
 * uncontended one lock_acquired with wait 0, unlocks lock_released, a
 * failed trylock lock_try_failed (trace_events=all; each release with its
 * hold time), a condition wait cond_wait (naming its
 * mutex) then cond_woken with the wait, a rwlock's release its mode (read
 * or write); every event names this file and
 * the line of the call, and the thread by id and name; a code-address site
 * (as the preload interposer records) resolves to the executable + offset
 * through the MAPS records.  The Chrome export
 * of the file has the wait slices, holds on the holder's thread, the
 * hand-off flow, waiter counts and thread names.
 *
 * Usage: test_trace_locks [SYNCPROF_CLI]
 */
#include <syncprof/instrument.h>

#include <sys/prctl.h>
#include <sys/wait.h>

#include "trace_util.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int ready, signalled;
static int line_lock_contended, line_trylock, line_cond_wait, line_unlock;

struct seen {
	int pc_site;
	uint32_t holder_tid;
	int wait, acquired_waited, acquired_free, released, try_failed, cond_wait, cond_woken;
	int named;
	int rw_released_read, rw_released_write;
};

static void *holder(void *arg)
{
	struct timespec d = { 0, 50000000 };

	(void)arg;
	prctl(PR_SET_NAME, "holder", 0, 0, 0);
	pthread_mutex_lock(&m);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	nanosleep(&d, NULL); /* main waits for m meanwhile */
	pthread_mutex_unlock(&m);
	d.tv_nsec = 20000000;
	nanosleep(&d, NULL);
	pthread_mutex_lock(&m);
	signalled = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void check(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	struct seen *s = arg;
	char site[512];
	uint64_t line;

	if (rec->type != SP_REC_EVENT || rec->id > SP_EV_LOCK_LAST)
		return;
	if (rec->args[SP_LA_OBJ] == (uintptr_t)&rw) {
		if (rec->id == SP_EV_LOCK_RELEASED) {
			T_ASSERT(rec->args[SP_LA_TYPE] == SP_TYPE_RWLOCK_READ ||
				 rec->args[SP_LA_TYPE] == SP_TYPE_RWLOCK_WRITE);
			if (rec->args[SP_LA_TYPE] == SP_TYPE_RWLOCK_READ)
				s->rw_released_read++;
			else
				s->rw_released_write++;
		}
		return;
	}
	if (rec->args[SP_LA_OBJ] != (uintptr_t)&m && rec->args[SP_LA_OBJ] != (uintptr_t)&cv)
		return;
	T_ASSERT(sp_trace_reader_thread(r, rec->tid) != NULL);
	if (!strcmp(sp_trace_reader_thread(r, rec->tid), "holder"))
		s->named = 1;
	sp_trace_reader_site(r, rec, site, sizeof(site));
	if (rec->args[SP_LA_LINE] == 0) {
		/* an interposed site: a code address, resolved from MAPS */
		char want[64];

		snprintf(want, sizeof(want), "test_trace_locks+0x");
		T_ASSERT_CONTAINS(site, want);
		T_ASSERT_UINT(rec->args[SP_LA_NS], ==, 777);
		s->pc_site++;
		return;
	}
	T_ASSERT_CONTAINS(site, "test_trace_locks.c:");
	line = rec->args[SP_LA_LINE];
	if (rec->tid != (uint32_t)getpid())
		return; /* the holder's events: only names checked */
	switch (rec->id) {
	case SP_EV_LOCK_WAIT:
		T_ASSERT_UINT(line, ==, line_lock_contended);
		s->wait++;
		break;
	case SP_EV_LOCK_ACQUIRED:
		if (line == (uint64_t)line_lock_contended) {
			T_ASSERT_UINT(rec->args[SP_LA_NS], >, 10000000); /* > 10 ms */
			s->acquired_waited++;
		} else {
			s->acquired_free++;
		}
		break;
	case SP_EV_LOCK_RELEASED:
		/* every release of m here follows an acquisition seen: its hold */
		T_ASSERT_UINT(rec->nargs, ==, 6);
		s->released++;
		break;
	case SP_EV_LOCK_TRY_FAILED:
		T_ASSERT_UINT(line, ==, line_trylock);
		s->try_failed++;
		break;
	case SP_EV_COND_WAIT:
		T_ASSERT_UINT(line, ==, line_cond_wait);
		T_ASSERT_UINT(rec->args[SP_LA_TYPE], ==, (uintptr_t)&m);
		s->cond_wait++;
		break;
	case SP_EV_COND_WOKEN:
		T_ASSERT_UINT(rec->args[SP_LA_NS], >, 1000000);
		s->cond_woken++;
		break;
	}
}

int main(int argc, char **argv)
{
	char dir[256], path[512], out[600], cmd[2048];
	struct seen s;
	pthread_t th;
	int rc;

	t_tmpdir(dir, sizeof(dir), "locks");
	snprintf(path, sizeof(path), "%s/locks.trace", dir);
	syncprof_enable();
	/* The full stream (the default is contended-only: test_trace_contended) */
	T_ASSERT_INT(syncprof_trace_set_lock_events(SYNCPROF_TRACE_ALL, 0), ==, 0);
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	T_ASSERT_INT(pthread_create(&th, NULL, holder, NULL), ==, 0);
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		;
	line_trylock = __LINE__ + 1;
	rc = pthread_mutex_trylock(&m);
	T_ASSERT_INT(rc, ==, EBUSY);
	line_lock_contended = __LINE__ + 1;
	pthread_mutex_lock(&m);
	line_unlock = __LINE__ + 1;
	pthread_mutex_unlock(&m);
	pthread_mutex_lock(&m);
	while (!signalled) {
		line_cond_wait = __LINE__ + 1;
		pthread_cond_wait(&cv, &m);
	}
	pthread_mutex_unlock(&m);
	pthread_join(th, NULL);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_wrlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_unlock(&rw);
	{
		/* What the preload interposer will emit: the return address. */
		struct sp_site pc_site = { NULL, NULL, (uintptr_t)&holder + 5, 0 };

		sp_trace_lock_event(SP_EV_LOCK_ACQUIRED, &m, SP_TYPE_MUTEX, &pc_site, 777, 1);
	}
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);
	syncprof_disable();

	memset(&s, 0, sizeof(s));
	T_ASSERT_INT(t_trace_read(path, check, &s), ==, SP_TRACE_READ_OK);
	T_ASSERT_INT(s.wait, ==, 1);
	T_ASSERT_INT(s.acquired_waited, ==, 1);
	T_ASSERT_INT(s.acquired_free, >=, 1);
	T_ASSERT_INT(s.released, ==, 2);
	T_ASSERT_INT(s.try_failed, ==, 1);
	T_ASSERT_INT(s.cond_wait, >=, 1);
	T_ASSERT_INT(s.cond_woken, ==, s.cond_wait);
	T_ASSERT_INT(s.named, ==, 1);
	T_ASSERT_INT(s.pc_site, ==, 1);
	T_ASSERT_INT(s.rw_released_read, ==, 3);
	T_ASSERT_INT(s.rw_released_write, ==, 1);
	(void)line_unlock;

	if (argc > 1) {
		char *json;

		snprintf(out, sizeof(out), "%s/locks.json", dir);
		snprintf(cmd, sizeof(cmd), "%s trace export --format chrome %s -o %s", argv[1],
			 path, out);
		rc = system(cmd);
		T_ASSERT(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
		json = t_slurp_file(out);
		T_ASSERT_CONTAINS(json, "\"traceEvents\":[");
		T_ASSERT_CONTAINS(json, "\"ph\":\"X\"");
		T_ASSERT_CONTAINS(json, "\"name\":\"wait ");
		T_ASSERT_CONTAINS(json, "\"name\":\"cond wait ");
		/* holds are slices on the holder's thread; the hand-off a flow */
		T_ASSERT_CONTAINS(json, "\"name\":\"hold test_trace_locks.c:");
		T_ASSERT_CONTAINS(json, "\"cat\":\"hold\",\"dur\":");
		T_ASSERT_CONTAINS(json, "\"ph\":\"s\"");
		T_ASSERT_CONTAINS(json, "\"ph\":\"f\"");
		T_ASSERT_CONTAINS(json, "\"ph\":\"C\"");
		T_ASSERT_CONTAINS(json, "\"name\":\"trylock failed ");
		T_ASSERT_CONTAINS(json, "test_trace_locks.c:");
		T_ASSERT_CONTAINS(json, "\"args\":{\"name\":\"holder\"}");
		T_ASSERT_CONTAINS(json, "]}\n");
		free(json);
		snprintf(cmd, sizeof(cmd), "%s trace dump %s > %s", argv[1], path, out);
		rc = system(cmd);
		T_ASSERT(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
		json = t_slurp_file(out);
		T_ASSERT_CONTAINS(json, "lock_try_failed obj=");
		/* the code-address site, named offline from the ELF symbols */
		T_ASSERT_CONTAINS(json, "site=holder+0x5 (test_trace_locks)");
		T_ASSERT_CONTAINS(json, "(main) type=mutex");
		free(json);
		/* --sort: all threads merged by time */
		snprintf(cmd, sizeof(cmd), "%s trace dump --sort %s > %s", argv[1], path, out);
		rc = system(cmd);
		T_ASSERT(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
		json = t_slurp_file(out);
		{
			double prev = -1e30;
			int lines = 0;

			for (char *l = strchr(json, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
				double t = strtod(l + 1, NULL);

				T_ASSERT(t >= prev);
				prev = t;
				lines++;
			}
			T_ASSERT_INT(lines, >=, 10);
		}
		free(json);
		unlink(out);
	}
	unlink(path);
	rmdir(dir);
	return 0;
}
