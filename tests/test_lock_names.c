/*
 * test_lock_names.c - syncprof_name_lock() under concurrency and at its
 * edges, compiled in (so the sanitizer suites run it): threads name their
 * own locks, rename a shared one, init and destroy locks at one reused
 * address, while the main thread takes reports; then every thread's lock
 * must carry its name, the reused one its last init's line and no stale
 * name, a long name must be cut at 63 bytes on a UTF-8 boundary, and bad
 * arguments must be refused.  Reports as JSON into memory.  Last, a
 * signal handler names a lock while its thread is naming others, 2,000
 * times: each handler call must return 0, or -EBUSY where it interrupted
 * its own thread holding the table's lock (the name counted lost; it
 * gives up at once, lockname.c, grab() - not asserted, as that is a
 * time), and every name of the thread itself must land.  A lock that
 * waited for its holder without bound would hang here.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "syncprof.h"

#define THREADS 4
#define ROUNDS 2000
#define MANY 5000

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own[THREADS];
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *reused;
static int reuse_line;

static char *report_json(void)
{
	struct syncprof_report_options o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	T_ASSERT(f);
	syncprof_report_options_init(&o);
	o.coalesce = 0;
	o.format = SYNCPROF_FORMAT_JSON;
	T_ASSERT_INT(syncprof_report(f, &o), ==, 0);
	fclose(f);
	return buf;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	char name[32];

	snprintf(name, sizeof(name), "own-%ld", id);
	pthread_mutex_init(&own[id], NULL);
	T_ASSERT_INT(syncprof_name_lock(&own[id], name), ==, 0);
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&own[id]);
		pthread_mutex_unlock(&own[id]);
		pthread_mutex_lock(&shared);
		if (i % 100 == 0)
			SYNCPROF_NAME_LOCK(&shared, "shared");
		pthread_mutex_unlock(&shared);
		if (i % 50 == 0) { /* one address, many locks, named and not */
			pthread_mutex_lock(&slot_lock);
			pthread_mutex_destroy(reused);
			pthread_mutex_init(reused, NULL);
			SYNCPROF_NAME_LOCK(reused, "stale");
			pthread_mutex_lock(reused);
			pthread_mutex_unlock(reused);
			pthread_mutex_unlock(&slot_lock);
		}
	}
	return NULL;
}

/* ---- a handler that names a lock, on the naming thread -------------------- */

#define SIGNALS 2000
#define NAMED 64
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t namer;
static int handled, handler_ok, handler_busy, handler_other, sender_done;

static void on_signal(int sig)
{
	int rc = syncprof_name_lock(&handler_lock, "in-handler");

	(void)sig;
	if (rc == 0)
		handler_ok++;
	else if (rc == -EBUSY)
		handler_busy++;
	else
		handler_other++;
	__atomic_store_n(&handled, handled + 1, __ATOMIC_RELEASE);
}

static void *sender(void *arg)
{
	for (int i = 0; i < SIGNALS; i++) {
		T_ASSERT_INT(pthread_kill(namer, SIGUSR1), ==, 0);
		while (__atomic_load_n(&handled, __ATOMIC_ACQUIRE) <= i)
			sched_yield();
	}
	__atomic_store_n(&sender_done, 1, __ATOMIC_RELEASE);
	return arg;
}

static void handler_names(void)
{
	static pthread_mutex_t named[NAMED];
	struct sigaction sa;
	pthread_t th;
	long rounds = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	T_ASSERT_INT(sigaction(SIGUSR1, &sa, NULL), ==, 0);
	for (int i = 0; i < NAMED; i++)
		pthread_mutex_init(&named[i], NULL);
	namer = pthread_self();
	T_ASSERT_INT(pthread_create(&th, NULL, sender, NULL), ==, 0);
	while (!__atomic_load_n(&sender_done, __ATOMIC_ACQUIRE)) {
		char name[32];

		snprintf(name, sizeof(name), "named-%ld", rounds % NAMED);
		/* this thread's own names: never lost, a handler or not */
		T_ASSERT_INT(syncprof_name_lock(&named[rounds % NAMED], name), ==, 0);
		rounds++;
	}
	T_ASSERT_INT(pthread_join(th, NULL), ==, 0);
	T_ASSERT_INT(handler_other, ==, 0);
	T_ASSERT_INT(handler_ok + handler_busy, ==, SIGNALS);
	printf("test_lock_names: %d signals, %d handler names landed, %d found the lock "
	       "held by their own thread, %ld names by the thread\n",
	       SIGNALS, handler_ok, handler_busy, rounds);
}

int main(void)
{
	static const char *const long_name =
		"01234567890123456789012345678901234567890123456789012345678901\xc3\xa9xyz";
	pthread_t th[THREADS];
	char *json;

	syncprof_enable();
	T_ASSERT_INT(syncprof_name_lock(NULL, "x"), ==, -EINVAL);
	T_ASSERT_INT(syncprof_name_lock(&shared, NULL), ==, -EINVAL);
	reused = malloc(sizeof(*reused));
	T_ASSERT(reused);
	pthread_mutex_init(reused, NULL);
	for (long i = 0; i < THREADS; i++)
		T_ASSERT_INT(pthread_create(&th[i], NULL, worker, (void *)i), ==, 0);
	for (int i = 0; i < 5; i++)
		free(report_json()); /* reports while names change */
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);

	/* The last lock at the reused address: unnamed, its own init. */
	pthread_mutex_destroy(reused);
	reuse_line = __LINE__ + 1;
	pthread_mutex_init(reused, NULL);
	pthread_mutex_lock(reused);
	pthread_mutex_unlock(reused);
	/* 62 ASCII bytes then a 2-byte character: 63 kept would split it, so 62. */
	pthread_mutex_lock(&slot_lock);
	pthread_mutex_unlock(&slot_lock);
	T_ASSERT_INT(syncprof_name_lock(&slot_lock, long_name), ==, 0);

	json = report_json();
	for (int i = 0; i < THREADS; i++) {
		char want[64];

		snprintf(want, sizeof(want), "\"lock_name\":\"own-%d\"", i);
		T_ASSERT_CONTAINS(json, want);
	}
	T_ASSERT_CONTAINS(json, "\"lock_name\":\"shared\"");
	T_ASSERT(!strstr(json, "stale"));
	{
		char want[128];

		snprintf(want, sizeof(want), "\"line\":%d,\"dso\":null,\"address\":null,"
			 "\"offset\":null},\"created_by\":\"init\"", reuse_line);
		T_ASSERT_CONTAINS(json, want);
	}
	T_ASSERT_CONTAINS(json, "\"lock_name\":\"0123456789012345678901234567890123456789"
				"0123456789012345678901\"");
	T_ASSERT(!strstr(json, "names_lost"));
	free(json);
	free(reused);

	/* Many locks, named one after another: the table's index grows
	 * (1,024 slots at first, doubled at half full) and every name stays
	 * with its lock. */
	{
		pthread_mutex_t *many = calloc(MANY, sizeof(*many));
		char name[32];
		const char *p;
		int n = 0;

		T_ASSERT(many);
		for (int i = 0; i < MANY; i++) {
			pthread_mutex_init(&many[i], NULL);
			snprintf(name, sizeof(name), "many-%d", i);
			T_ASSERT_INT(syncprof_name_lock(&many[i], name), ==, 0);
			pthread_mutex_lock(&many[i]);
			pthread_mutex_unlock(&many[i]);
		}
		json = report_json();
		for (p = json; (p = strstr(p, "\"lock_name\":\"many-")); p++)
			n++;
		T_ASSERT_INT(n, ==, MANY);
		T_ASSERT_CONTAINS(json, "\"lock_name\":\"many-0\"");
		T_ASSERT_CONTAINS(json, "\"lock_name\":\"many-4999\"");
		T_ASSERT(!strstr(json, "names_lost"));
		free(json);
		free(many);
	}
	handler_names();
	printf("test_lock_names: ok\n");
	return 0;
}
