/*
 * preload_waits.c - the rows of the blocking calls that are not locks,
 * under the preload: a semaphore wait that blocked (contended), a barrier
 * of 3 threads (3 waits), a join of a thread that sleeps 50 ms (its wait
 * at least 40 ms: a lower bound from the sleep, never an upper one), and
 * the clock variants at their sites.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "preload_util.h"

static sem_t sem;
static pthread_barrier_t barrier;

static void *post_later(void *arg)
{
	(void)arg;
	usleep(30000);
	sem_post(&sem);
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	usleep(50000);
	return NULL;
}

__attribute__((noinline)) static void sem_blocked(void)
{
	pthread_t t;

	T_ASSERT_INT(pthread_create(&t, NULL, post_later, NULL), ==, 0);
	T_ASSERT_INT(sem_wait(&sem), ==, 0);
	pthread_join(t, NULL);
}

__attribute__((noinline)) static void *barrier_waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&barrier);
	return NULL;
}

__attribute__((noinline)) static void join_sleeper(pthread_t t)
{
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
}

__attribute__((noinline)) static void clock_calls(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_nsec += 10000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	T_ASSERT_INT(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &ts), ==, 0);
	T_ASSERT_INT(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &ts), ==, ETIMEDOUT);
	pthread_mutex_unlock(&m);
	T_ASSERT_INT(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &ts), ==, 0);
	pthread_rwlock_unlock(&l);
	T_ASSERT_INT(pthread_rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &ts), ==, 0);
	pthread_rwlock_unlock(&l);
}

int main(void)
{
	pthread_t t[2];
	char *json;

	t_require_preload();
	T_ASSERT_INT(sem_init(&sem, 0, 0), ==, 0);
	sem_blocked();
	T_ASSERT_INT(pthread_barrier_init(&barrier, NULL, 3), ==, 0);
	for (int i = 0; i < 2; i++)
		T_ASSERT_INT(pthread_create(&t[i], NULL, barrier_waiter, NULL), ==, 0);
	barrier_waiter(NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	T_ASSERT_INT(pthread_create(&t[0], NULL, sleeper, NULL), ==, 0);
	join_sleeper(t[0]);
	clock_calls();

	json = t_report(1, 0);
	T_ASSERT_INT(t_rows_sum(json, "\"type\":\"semaphore\"", "contended"), ==, 1);
	T_ASSERT_INT(t_rows_sum(json, "\"type\":\"semaphore\"", "acquisitions"), ==, 1);
	T_ASSERT_INT(t_rows_sum(json, "\"type\":\"barrier\"", "acquisitions"), ==, 3);
	T_ASSERT_INT(t_rows_sum(json, "\"type\":\"barrier\"", "contended"), ==, 3);
	T_ASSERT_INT(t_rows_sum(json, "\"function\":\"join_sleeper\"", "acquisitions"), ==, 1);
	T_ASSERT_INT(t_rows_sum(json, "\"function\":\"join_sleeper\"", "wait_ns"), >=, 40000000);
	T_ASSERT_CONTAINS(json, "\"function\":\"sem_blocked\"");
	T_ASSERT_CONTAINS(json, "\"type\":\"join\"");
	/* The clock calls: mutex, condvar, rwlock rows in clock_calls. */
	T_ASSERT_INT(t_rows_sum(json, "\"function\":\"clock_calls\"", "acquisitions"), ==, 4);
	free(json);
	puts("preload_waits: ok");
	return 0;
}
