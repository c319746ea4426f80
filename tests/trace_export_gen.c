/*
 * trace_export_gen - writes the traces tests/trace_export_check.py exports
 * and checks (CTest trace_export), one per shape a trace can have:
 *
 *   DIR/full.trace       every event (trace_events=all): instrumented
 *                        contention between two named threads (a wait, the
 *                        hand-off, holds on both), a condition wait,
 *                        hand-over-hand locking (holds that do not nest),
 *                        a failed trylock and a registered event; lock
 *                        names: m named before the trace opened
 *                        ("hand-off lock"), a init'd and named while it
 *                        is open ("hand-over-hand a", its init's line in
 *                        DIR/name_site.txt), then destroyed and init'd
 *                        again (a LOCK_NAME record without a name);
 *   DIR/contended.trace  the contended-only shape: lock_wait and
 *                        lock_acquired of the waiter, and lock_released
 *                        events carrying hold_ns without the holder's
 *                        lock_acquired; the holder's site is a code address
 *                        (as the preload library records), whose name
 *                        "function file:line" is written to DIR/pc_site.txt;
 *                        a second lock is taken after a wait and its
 *                        release is not in the trace (nobody waited);
 *   DIR/loss.trace       written into a full disk (RLIMIT_FSIZE): a
 *                        WRITE_LOSS record;
 *   DIR/drops.trace      a 256-byte buffer flooded: DROPPED records;
 *   DIR/skew.trace       a full stream whose release carries a hold_ns
 *                        1.5 ms shorter than its gap from the acquisition,
 *                        as when the releaser is preempted between the
 *                        clock reads of its hold and of its event: the
 *                        hold is still the acquisition's.
 *
 * Usage: trace_export_gen DIR
 */
#include <syncprof/instrument.h>

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "trace/trace.h"
#include "trace_util.h"
#include "now_ns.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready, signalled;

static void sleep_ms(long ms)
{
	struct timespec d = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&d, NULL);
}

static void *holder(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "holder", 0, 0, 0);
	pthread_mutex_lock(&m);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	/* until main blocks on m: glibc marks the lock word 2 (contended)
	 * before it sleeps; no sleep is long enough on a loaded machine */
	while (__atomic_load_n(&m.__data.__lock, __ATOMIC_ACQUIRE) != 2)
		sleep_ms(1);
	sleep_ms(30); /* main waits for m meanwhile */
	pthread_mutex_unlock(&m);
	sleep_ms(20);
	pthread_mutex_lock(&m);
	signalled = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void full(const char *dir)
{
	static const char *const args[] = { "value" };
	char path[600];
	pthread_t th;
	int id, a_line;
	FILE *f;

	snprintf(path, sizeof(path), "%s/full.trace", dir);
	T_ASSERT_INT(syncprof_trace_set_lock_events(SYNCPROF_TRACE_ALL, 0), ==, 0);
	SYNCPROF_NAME_LOCK(&m, "hand-off lock"); /* in the file's first records */
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	a_line = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_init(&a, NULL), ==, 0);
	SYNCPROF_NAME_LOCK(&a, "hand-over-hand a"); /* written when named */
	id = syncprof_trace_register("checkpoint", args, 1);
	T_ASSERT_INT(id, >, 0);
	T_ASSERT_INT(pthread_create(&th, NULL, holder, NULL), ==, 0);
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		;
	T_ASSERT_INT(pthread_mutex_trylock(&m), ==, EBUSY);
	pthread_mutex_lock(&m); /* waits for the holder: a hand-off */
	pthread_mutex_unlock(&m);
	pthread_mutex_lock(&m);
	while (!signalled)
		pthread_cond_wait(&cv, &m);
	pthread_mutex_unlock(&m);
	T_ASSERT_INT(pthread_join(th, NULL), ==, 0);
	/* hand over hand: a's hold ends inside b's */
	pthread_mutex_lock(&a);
	sleep_ms(1);
	pthread_mutex_lock(&b);
	sleep_ms(1);
	pthread_mutex_unlock(&a);
	sleep_ms(1);
	pthread_mutex_unlock(&b);
	/* a new lock at a's address: its name ends (a record without one) */
	T_ASSERT_INT(pthread_mutex_destroy(&a), ==, 0);
	T_ASSERT_INT(pthread_mutex_init(&a, NULL), ==, 0);
	SYNCPROF_TRACE(id, 42);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);
	snprintf(path, sizeof(path), "%s/name_site.txt", dir);
	f = fopen(path, "w");
	T_ASSERT(f);
	fprintf(f, "trace_export_gen.c:%d\n", a_line);
	fclose(f);
}

/* ---- the contended-only shape, emitted as the probe would ------------- */

static uint64_t obj_x = 0x5eed0000, obj_y = 0x5eed0040;
static int step;

static void wait_step(int s)
{
	while (__atomic_load_n(&step, __ATOMIC_ACQUIRE) < s)
		sleep_ms(1);
}

static void set_step(int s)
{
	__atomic_store_n(&step, s, __ATOMIC_RELEASE);
}

/* The return address of this call: what the preload library records. */
static __attribute__((noinline)) uintptr_t call_site(void)
{
	return (uintptr_t)__builtin_return_address(0);
}

static int pc_line;

static void *contended_holder(void *arg)
{
	struct sp_site s = { NULL, NULL, 0, 0 };
	uint64_t t0;

	prctl(PR_SET_NAME, "c-holder", 0, 0, 0);
	wait_step(1); /* the waiter waits */
	t0 = now_ns();
	sleep_ms(5);
	pc_line = __LINE__ + 1;
	s.pc = call_site();
	/* released after a 5 ms hold; no lock_acquired for it */
	sp_trace_lock_event(SP_EV_LOCK_RELEASED, (void *)(uintptr_t)obj_x, SP_TYPE_MUTEX, &s,
			    now_ns() - t0, 1);
	set_step(2);
	wait_step(3); /* the waiter waits for y */
	t0 = now_ns();
	sleep_ms(2);
	sp_trace_lock_event(SP_EV_LOCK_RELEASED, (void *)(uintptr_t)obj_y, SP_TYPE_MUTEX, &s,
			    now_ns() - t0, 1);
	set_step(4);
	return arg;
}

static void contended(const char *dir)
{
	struct sp_site w = { __FILE__, __func__, 0, 0 };
	char path[600];
	pthread_t th;
	uint64_t t0, t1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/contended.trace", dir);
	T_ASSERT_INT(syncprof_trace_set_lock_events(SYNCPROF_TRACE_CONTENDED, 0), ==, 0);
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	T_ASSERT_INT(pthread_create(&th, NULL, contended_holder, NULL), ==, 0);
	w.line = __LINE__;
	t0 = now_ns();
	sp_trace_lock_event(SP_EV_LOCK_WAIT, (void *)(uintptr_t)obj_x, SP_TYPE_MUTEX, &w, 0, 0);
	set_step(1);
	wait_step(2);
	t1 = now_ns();
	sp_trace_lock_event(SP_EV_LOCK_ACQUIRED, (void *)(uintptr_t)obj_x, SP_TYPE_MUTEX, &w,
			    t1 - t0, 1);
	sleep_ms(2);
	w.line = __LINE__;
	sp_trace_lock_event(SP_EV_LOCK_RELEASED, (void *)(uintptr_t)obj_x, SP_TYPE_MUTEX, &w,
			    now_ns() - t1, 1);
	/* y: taken after a wait and never released (as far as the trace
	 * knows: contended-only tracing leaves out releases nobody waited
	 * for), so its hold has no end */
	w.line = __LINE__;
	t0 = now_ns();
	sp_trace_lock_event(SP_EV_LOCK_WAIT, (void *)(uintptr_t)obj_y, SP_TYPE_MUTEX, &w, 0, 0);
	set_step(3);
	wait_step(4);
	sp_trace_lock_event(SP_EV_LOCK_ACQUIRED, (void *)(uintptr_t)obj_y, SP_TYPE_MUTEX, &w,
			    now_ns() - t0, 1);
	T_ASSERT_INT(pthread_join(th, NULL), ==, 0);
	/* z: taken after a wait, its release not written (nobody waited);
	 * 20 ms later a release of z with a 1 ms hold: that hold began long
	 * after the acquisition in the file, so it is 1 ms, not 21 ms */
	sp_trace_lock_event(SP_EV_LOCK_ACQUIRED, (void *)(uintptr_t)0x5eed00c0, SP_TYPE_MUTEX, &w,
			    1000, 1);
	sleep_ms(20);
	sp_trace_lock_event(SP_EV_LOCK_RELEASED, (void *)(uintptr_t)0x5eed00c0, SP_TYPE_MUTEX, &w,
			    1000000, 1);
	/* a hold of 0 ns: a slice that begins and ends at one instant */
	sp_trace_lock_event(SP_EV_LOCK_RELEASED, (void *)(uintptr_t)0x5eed0080, SP_TYPE_MUTEX, &w,
			    0, 1);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);
	snprintf(path, sizeof(path), "%s/pc_site.txt", dir);
	f = fopen(path, "w");
	T_ASSERT(f);
	fprintf(f, "contended_holder trace_export_gen.c:%d\n", pc_line);
	fclose(f);
}

static pthread_mutex_t d = PTHREAD_MUTEX_INITIALIZER;

static void *flooder(void *x)
{
	prctl(PR_SET_NAME, "flooder", 0, 0, 0);
	for (int i = 0; i < 200000; i++) {
		pthread_mutex_lock(&d);
		pthread_mutex_unlock(&d);
	}
	return x;
}

static void drops(const char *dir)
{
	char path[600];
	pthread_t th;

	snprintf(path, sizeof(path), "%s/drops.trace", dir);
	T_ASSERT_INT(syncprof_trace_set_buffer_size(256), ==, 0);
	T_ASSERT_INT(syncprof_trace_set_lock_events(SYNCPROF_TRACE_ALL, 0), ==, 0);
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	/* a new thread gets the small buffer */
	T_ASSERT_INT(pthread_create(&th, NULL, flooder, NULL), ==, 0);
	T_ASSERT_INT(pthread_join(th, NULL), ==, 0);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);
}

/* The events written directly, so that the gap is there every run. */
static void skew(const char *dir)
{
	static int obj; /* only its address is used */
	const struct sp_site site = { "trace_export_gen.c", "skew", 0, __LINE__ };
	char path[600];

	snprintf(path, sizeof(path), "%s/skew.trace", dir);
	T_ASSERT_INT(syncprof_trace_set_lock_events(SYNCPROF_TRACE_ALL, 0), ==, 0);
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	sp_trace_lock_event(SP_EV_LOCK_ACQUIRED, &obj, SP_TYPE_MUTEX, &site, 0, 1);
	sleep_ms(2);
	sp_trace_lock_event(SP_EV_LOCK_RELEASED, &obj, SP_TYPE_MUTEX, &site, 500000, 1);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);
}

/* In a child whose files cannot grow past 16 KiB (a full disk): a
 * WRITE_LOSS record counts what the file could not take. */
static void loss(const char *dir)
{
	static pthread_mutex_t l = PTHREAD_MUTEX_INITIALIZER;
	char path[600];
	int status;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/loss.trace", dir);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (!pid) {
		struct rlimit rl = { 16 << 10, 16 << 10 };

		T_ASSERT_INT(setrlimit(RLIMIT_FSIZE, &rl), ==, 0);
		T_ASSERT_INT(syncprof_trace_set_lock_events(SYNCPROF_TRACE_ALL, 0), ==, 0);
		T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
		for (int i = 0; i < 20000; i++) {
			pthread_mutex_lock(&l);
			pthread_mutex_unlock(&l);
			if (i % 500 == 499)
				syncprof_trace_flush();
		}
		T_ASSERT_INT(syncprof_trace_close(), ==, -EFBIG);
		_exit(0);
	}
	T_ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
	T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: trace_export_gen DIR\n");
		return 2;
	}
	syncprof_enable();
	full(argv[1]);
	contended(argv[1]);
	loss(argv[1]);
	drops(argv[1]);
	skew(argv[1]);
	return 0;
}
