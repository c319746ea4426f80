/*
 * hold_lookup.c - sp_hold_lookup(), the query the control/watchdog side
 * uses: who holds a lock, acquired where, since when.  Checks the answer
 * for held/released/recursive/read locks, and that a reader in another
 * thread never sees a torn holder while the owner takes and releases the
 * lock at full speed (the owner is never blocked by the reader), through
 * the probes' inlined fast paths and the general ones, with instrumented
 * and interposed sites, popped in order and removed from below.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "record/probe.h"
#include "runtime/runtime.h"

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_r;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static const struct sp_site site1 = { "hold.c", "one", 0, 1 };
static const struct sp_site site2 = { "hold.c", "two", 0, 2 };
static const struct sp_site site3 = { NULL, NULL, 0x1234, 0 }; /* interposed */
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static int stop;
static pid_t owner_tid;
static unsigned long cycles, seen;

/* What the probes do after an acquisition and before a release. */
static void acquired(struct sp_thread *t, pthread_mutex_t *m, const struct sp_site *site)
{
	if (!sp_hold_acquired_fast((uintptr_t)m, SP_TYPE_MUTEX, site->file, site->func,
				   site->pc, site->line, NULL))
		sp_hold_acquired(t, (uintptr_t)m, SP_TYPE_MUTEX, site);
}

static void released(pthread_mutex_t *m)
{
	if (!sp_hold_released_fast((uintptr_t)m))
		sp_hold_released((uintptr_t)m);
}

static void *owner(void *arg)
{
	struct sp_thread *t = sp_thread_self();
	const struct sp_site *sites[3] = { &site1, &site2, &site3 };

	(void)arg;
	__atomic_store_n(&owner_tid, sp_gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		switch (cycles % 4) {
		case 0: /* the general paths */
			sp_hold_acquired(t, (uintptr_t)&lock_a, SP_TYPE_MUTEX,
					 cycles & 4 ? &site1 : &site2);
			sp_hold_released((uintptr_t)&lock_a);
			break;
		case 1: /* the fast paths, instrumented or interposed sites */
		case 2:
			acquired(t, &lock_a, sites[(cycles / 4) % 3]);
			released(&lock_a);
			break;
		case 3: /* lock_a above lock_b, lock_b released first */
			acquired(t, &lock_b, &site1);
			acquired(t, &lock_a, sites[(cycles / 4) % 3]);
			released(&lock_b);
			released(&lock_a);
			break;
		}
		cycles++;
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pid_t tid;
		struct sp_site s;
		uint64_t since;

		if (!sp_hold_lookup((uintptr_t)&lock_a, &tid, &s, &since)) {
			T_ASSERT_INT(tid, ==, __atomic_load_n(&owner_tid, __ATOMIC_ACQUIRE));
			if (s.file) {
				T_ASSERT_STR(s.file, "hold.c");
				T_ASSERT(s.line == 1 || s.line == 2);
				T_ASSERT_STR(s.func, s.line == 1 ? "one" : "two");
				T_ASSERT_UINT(s.pc, ==, 0);
			} else {
				T_ASSERT_UINT(s.pc, ==, 0x1234);
				T_ASSERT(!s.func && !s.line);
			}
			T_ASSERT(since <= sp_now_ns() + 1000000);
			seen++;
		}
	}
	return NULL;
}

int main(void)
{
	struct sp_thread *t;
	pthread_mutexattr_t a;
	pthread_t th[2];
	struct sp_site s;
	uint64_t before, since, after;
	pid_t tid;

	sp_runtime_init();
	sp_opts.hold = 1;
	sp_opts.report_at_exit = 0;
	T_ASSERT_INT(sp_blame_init(), ==, 0);
	T_ASSERT_INT(sp_hold_init(sp_opts.hold_sample, 1, sp_opts.hold_clock), ==, 0);
	syncprof_enable();
	t = sp_thread_self();
	T_ASSERT(t != NULL);

	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&lock_a, &tid, &s, &since), ==, -ENOENT);
	before = sp_now_ns();
	sp_hold_acquired(t, (uintptr_t)&lock_a, SP_TYPE_MUTEX, &site1);
	after = sp_now_ns();
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&lock_a, &tid, &s, &since), ==, 0);
	T_ASSERT_INT(tid, ==, sp_gettid());
	T_ASSERT_STR(s.file, "hold.c");
	T_ASSERT_INT(s.line, ==, 1);
	/* TSC-converted: allow a few microseconds of calibration error. */
	T_ASSERT_UINT(since + 50000, >=, before);
	T_ASSERT_UINT(since, <=, after + 50000);
	sp_hold_released((uintptr_t)&lock_a);
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&lock_a, &tid, &s, &since), ==, -ENOENT);

	/* Recursive: held until the last release. */
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&lock_r, &a);
	sp_hold_acquired(t, (uintptr_t)&lock_r, SP_TYPE_MUTEX, &site1);
	sp_hold_acquired(t, (uintptr_t)&lock_r, SP_TYPE_MUTEX, &site2);
	sp_hold_released((uintptr_t)&lock_r);
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&lock_r, &tid, &s, &since), ==, 0);
	T_ASSERT_INT(s.line, ==, 1);
	sp_hold_released((uintptr_t)&lock_r);
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&lock_r, &tid, &s, &since), ==, -ENOENT);

	/* Read locks have no single holder. */
	sp_hold_acquired(t, (uintptr_t)&rw, SP_TYPE_RWLOCK_READ, &site1);
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&rw, &tid, &s, &since), ==, -ENOENT);
	sp_hold_released((uintptr_t)&rw);
	sp_hold_acquired(t, (uintptr_t)&rw, SP_TYPE_RWLOCK_WRITE, &site2);
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&rw, &tid, &s, &since), ==, 0);
	sp_hold_released((uintptr_t)&rw);

	/* fork(): the child's copy of a hold names the child's thread. */
	sp_hold_acquired(t, (uintptr_t)&lock_a, SP_TYPE_MUTEX, &site2);
	{
		pid_t pid = fork();
		int status;

		T_ASSERT(pid >= 0);
		if (pid == 0) {
			int ok = !sp_hold_lookup((uintptr_t)&lock_a, &tid, &s, &since) &&
				 tid == sp_gettid() && s.line == 2;

			_exit(ok ? 0 : 1);
		}
		T_ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
		T_ASSERT(WIFEXITED(status));
		T_ASSERT_INT(WEXITSTATUS(status), ==, 0);
	}
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&lock_a, &tid, &s, &since), ==, 0);
	T_ASSERT_INT(tid, ==, sp_gettid());
	sp_hold_released((uintptr_t)&lock_a);

	/* Concurrent: no torn copies. */
	pthread_create(&th[0], NULL, owner, NULL);
	pthread_create(&th[1], NULL, reader, NULL);
	usleep(300000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	T_ASSERT_UINT(cycles, >, 1000);
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&lock_a, &tid, &s, &since), ==, -ENOENT);
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)&lock_b, &tid, &s, &since), ==, -ENOENT);
	printf("hold_lookup: ok (%lu cycles, holder seen %lu times)\n", cycles, seen);
	return 0;
}
