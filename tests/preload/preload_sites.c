/*
 * preload_sites.c - call sites of interposed calls: return addresses
 * symbolized with libdw (function, file, line, DSO), lock wrappers
 * skipped with skip=REGEX, stacks of contended waits (frames=N), hold
 * times and blame (hold=1).  Built with -g.
 *
 * Usage: preload_sites wrapped|skipped - what the sites should be: the
 * wrapper function (no skip option), or its callers (skip=^wrap_lock$).
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "preload_util.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long sink;

/* A program's own lock wrapper, like yarn.c's possess(). */
__attribute__((noinline)) void wrap_lock(pthread_mutex_t *l)
{
	pthread_mutex_lock(l);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) void wrap_unlock(pthread_mutex_t *l)
{
	pthread_mutex_unlock(l);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void caller_a(void)
{
	wrap_lock(&m);
	for (int i = 0; i < 200; i++)
		sink += i;
	wrap_unlock(&m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void caller_b(void)
{
	wrap_lock(&m);
	for (int i = 0; i < 50; i++)
		sink += i;
	wrap_unlock(&m);
	__asm__ volatile("" ::: "memory");
}

/* Two frames between the worker and the callers: with frames=4, worker
 * is the last frame of wrap_lock's stack, which a walk stopped one frame
 * early would miss (stack.c, capture_more()). */
__attribute__((noinline)) void work_inner(void)
{
	caller_a();
	caller_b();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void work_outer(void)
{
	work_inner();
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++)
		work_outer();
	return NULL;
}

int main(int argc, char **argv)
{
	int skipped = argc > 1 && !strcmp(argv[1], "skipped");
	pthread_t t[3];
	char *json, *table;

	t_require_preload();
	/* Contention for certain, however the threads get scheduled: the
	 * workers' first acquisitions wait while main holds the lock. */
	pthread_mutex_lock(&m);
	for (int i = 0; i < 3; i++)
		T_ASSERT_INT(pthread_create(&t[i], NULL, worker, NULL), ==, 0);
	usleep(30000);
	pthread_mutex_unlock(&m);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);

	json = t_report(1, 0);
	table = t_report(0, 0);
	fputs(table, stdout);
	if (skipped) {
		/* One row per real caller, named with file:line. */
		T_ASSERT_INT(t_count(json, "\"site\":{\"function\":\"wrap_lock\""), ==, 0);
		T_ASSERT_INT(t_row_value(json, "\"site\":{\"function\":\"caller_a\"", "acquisitions"),
			     ==, 60000);
		T_ASSERT_INT(t_row_value(json, "\"site\":{\"function\":\"caller_b\"", "acquisitions"),
			     ==, 60000);
		T_ASSERT_CONTAINS(table, "caller_a ");
	} else {
		T_ASSERT_INT(t_row_value(json, "\"site\":{\"function\":\"wrap_lock\"", "acquisitions"),
			     ==, 120000);
	}
	/* file:line from the debug info, the DSO, the address. */
	T_ASSERT_CONTAINS(json, "preload_sites.c\",\"line\":");
	T_ASSERT_CONTAINS(json, "\"dso\":\"");
	T_ASSERT_CONTAINS(json, "\"address\":\"0x");
	/* A contended wait kept its callers: work_outer among them, and with
	 * frames=4 worker too, the fourth (wrapped) or third (skipped). */
	T_ASSERT_CONTAINS(json, "\"stack\":[{\"function\":\"");
	T_ASSERT_CONTAINS(json, "\"function\":\"work_outer\"");
	if (getenv("SYNCPROF_OPTIONS") && strstr(getenv("SYNCPROF_OPTIONS"), "frames=4"))
		T_ASSERT_CONTAINS(json, "\"function\":\"worker\"");
	/* hold=1: hold times and blame. */
	if (!getenv("SYNCPROF_OPTIONS") || !strstr(getenv("SYNCPROF_OPTIONS"), "hold=1"))
		goto done;
	T_ASSERT(t_row_value(json, "\"type\":\"mutex\"", "hold_ns") > 0);
	if (strstr(getenv("SYNCPROF_OPTIONS"), "hold_sample=1,")) {
		/* Every hold timed: exact counts. */
		T_ASSERT_INT(t_row_value(json, "\"type\":\"mutex\"", "holds"), ==,
			     skipped ? 60000 : 120000);
	} else {
		/* Sampled holds: an estimate of the count. */
		T_ASSERT_INT(t_row_value(json, "\"type\":\"mutex\"", "holds"), >=,
			     skipped ? 30000 : 60000);
		T_ASSERT_INT(t_row_value(json, "\"type\":\"mutex\"", "holds"), <=,
			     skipped ? 120000 : 240000);
	}
	T_ASSERT_CONTAINS(json, "\"blame\":[{\"site\":{\"function\":\"");
	T_ASSERT_CONTAINS(table, "blame: waited");
done:
	free(json);
	free(table);
	puts("preload_sites: ok");
	return 0;
}
