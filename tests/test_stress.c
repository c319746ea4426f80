/*
 * test_stress.c - many threads, sites and objects with known exact counts,
 * while other threads report and reset concurrently and worker threads
 * come and go (their statistics fold into the retired aggregate).
 *
 * Usage: test_stress [SEED [THREADS [MS]]]   (defaults 1, 4, 1500)
 * SYNCPROF_TEST_SCALE=N in the environment divides MS by N (TSan builds).
 *
 * Phase 1: waves of workers, a concurrent reporter checking that totals
 *   never go backwards; afterwards every (site, object) count is exact,
 *   and its wait histogram holds every contended wait.
 * Phase 2: workers while a resetter resets at random; counts in any report
 *   never exceed what was done.
 * Phase 3: reset, then a known amount of work: the report is exactly that.
 */
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "runtime/runtime.h"
#include "report/profile.h"
#include "report_util.h"

#define N_SITES 24
#define N_OBJS 16

static pthread_mutex_t objs[N_OBJS];
static const char *site_file[N_SITES];
static uint64_t expected[N_SITES][N_OBJS];
static pthread_mutex_t expected_lock = PTHREAD_MUTEX_INITIALIZER;
static int stop_workers, stop_observers;
static unsigned seed0;
static unsigned long long reports_done, resets_done;

struct worker_arg {
	unsigned seed;
	unsigned ops; /* 0: until stop_workers */
};

static unsigned rnd(unsigned *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 9;
}

static void *worker(void *p)
{
	struct worker_arg *a = p;
	static __thread uint64_t mine[N_SITES][N_OBJS];
	unsigned s = a->seed;

	memset(mine, 0, sizeof(mine));
	for (unsigned i = 0; a->ops ? i < a->ops : !__atomic_load_n(&stop_workers, __ATOMIC_RELAXED);
	     i++) {
		unsigned site = rnd(&s) % N_SITES, o = rnd(&s) % N_OBJS;

		T_ASSERT_INT(syncprof_mutex_lock(&objs[o], site_file[site], (int)site + 1, "worker"),
			     ==, 0);
		if ((i & 7) == 0) /* sometimes hold a little, to contend */
			for (volatile int k = 0; k < 50; k++)
				;
		T_ASSERT_INT(syncprof_mutex_unlock(&objs[o], site_file[site], (int)site + 1,
						   "worker"),
			     ==, 0);
		mine[site][o]++;
	}
	pthread_mutex_lock(&expected_lock);
	for (int i = 0; i < N_SITES; i++)
		for (int j = 0; j < N_OBJS; j++)
			expected[i][j] += mine[i][j];
	pthread_mutex_unlock(&expected_lock);
	return NULL;
}

static int site_index(const char *file)
{
	for (int i = 0; i < N_SITES; i++)
		if (file && !strcmp(file, site_file[i]))
			return i;
	return -1;
}

static uint64_t rows_total(int coalesce)
{
	struct syncprof_report_options o;
	struct sp_rows rows;
	uint64_t sum = 0;

	syncprof_report_options_init(&o);
	o.coalesce = coalesce;
	T_ASSERT_INT(t_report_rows(&rows, &o), ==, 0);
	for (size_t i = 0; i < rows.n; i++)
		if (site_index(rows.v[i].file) >= 0) {
			sum += rows.v[i].acquisitions;
			T_ASSERT_UINT(rows.v[i].contended, <=, rows.v[i].acquisitions);
		}
	sp_rows_free(&rows);
	return sum;
}

/* Phase 1 observer: totals only grow. */
static void *reporter(void *p)
{
	uint64_t last = 0;
	int n = 0;

	(void)p;
	while (!__atomic_load_n(&stop_observers, __ATOMIC_RELAXED)) {
		uint64_t now = rows_total(n++ & 1);

		T_ASSERT_UINT(now, >=, last);
		last = now;
		__atomic_fetch_add(&reports_done, 1, __ATOMIC_RELAXED);
		usleep(2000);
	}
	return NULL;
}

/* Phase 2 observer: resets at random, reports in between. */
static void *resetter(void *p)
{
	unsigned s = seed0 ^ 0x5bd1e995u;

	(void)p;
	while (!__atomic_load_n(&stop_observers, __ATOMIC_RELAXED)) {
		if (rnd(&s) % 3 == 0) {
			T_ASSERT_INT(syncprof_reset(), ==, 0);
			__atomic_fetch_add(&resets_done, 1, __ATOMIC_RELAXED);
		}
		rows_total(0);
		usleep(1000 + rnd(&s) % 3000);
	}
	return NULL;
}

static void run_workers(unsigned n, unsigned ms, unsigned ops, unsigned salt)
{
	pthread_t th[64];
	struct worker_arg args[64];

	__atomic_store_n(&stop_workers, 0, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n; i++) {
		args[i].seed = seed0 * 7919u + i * 104729u + salt;
		args[i].ops = ops;
		T_ASSERT_INT(pthread_create(&th[i], NULL, worker, &args[i]), ==, 0);
	}
	if (!ops) {
		usleep(ms * 1000u);
		__atomic_store_n(&stop_workers, 1, __ATOMIC_RELAXED);
	}
	for (unsigned i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

static void check_exact(const char *phase)
{
	struct syncprof_report_options o;
	struct sp_rows rows;
	uint64_t seen[N_SITES][N_OBJS] = { { 0 } }, total = 0;

	syncprof_report_options_init(&o);
	o.coalesce = 0;
	T_ASSERT_INT(t_report_rows(&rows, &o), ==, 0);
	for (size_t i = 0; i < rows.n; i++) {
		int s = site_index(rows.v[i].file);
		int ob = -1;

		if (s < 0)
			continue;
		for (int j = 0; j < N_OBJS; j++)
			if (rows.v[i].obj == (uintptr_t)&objs[j])
				ob = j;
		T_ASSERT_INT(ob, >=, 0);
		T_ASSERT_UINT(rows.v[i].line, ==, (unsigned)s + 1);
		/* Every contended attempt is a timed wait (no trylocks): the wait
		 * histogram holds each one, also after folds and a reset. */
		T_ASSERT_UINT(sp_hist_total(&sp_row_d(&rows.v[i])->hist), ==, rows.v[i].contended);
		seen[s][ob] += rows.v[i].acquisitions;
	}
	for (int s = 0; s < N_SITES; s++)
		for (int j = 0; j < N_OBJS; j++) {
			if (seen[s][j] != expected[s][j])
				T_FAIL("%s: site %d object %d: reported %llu, done %llu", phase, s, j,
				       (unsigned long long)seen[s][j],
				       (unsigned long long)expected[s][j]);
			total += seen[s][j];
		}
	printf("test_stress: %s: %llu acquisitions exact over %zu rows\n", phase,
	       (unsigned long long)total, rows.n);
	sp_rows_free(&rows);
}

int main(int argc, char **argv)
{
	unsigned threads = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
	unsigned ms = argc > 3 ? (unsigned)atoi(argv[3]) : 1500;
	pthread_t obs;
	static char names[N_SITES][32]; /* outlive main: the exit report reads them */

	seed0 = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	if (getenv("SYNCPROF_TEST_SCALE") && atoi(getenv("SYNCPROF_TEST_SCALE")) > 1)
		ms /= (unsigned)atoi(getenv("SYNCPROF_TEST_SCALE")); /* sanitizer builds */
	if (threads < 1 || threads > 64)
		T_FAIL("THREADS must be 1..64");
	printf("test_stress: seed %u, %u threads, %u ms\n", seed0, threads, ms);
	for (int i = 0; i < N_OBJS; i++)
		pthread_mutex_init(&objs[i], NULL);
	for (int i = 0; i < N_SITES; i++) {
		snprintf(names[i], sizeof(names[i]), "/stress/site%02d.c", i);
		site_file[i] = names[i];
	}
	syncprof_enable();

	/* Phase 1: four waves, so most statistics come from retired threads. */
	T_ASSERT_INT(pthread_create(&obs, NULL, reporter, NULL), ==, 0);
	for (unsigned wave = 0; wave < 4; wave++)
		run_workers(threads, ms / 8, 0, wave);
	__atomic_store_n(&stop_observers, 1, __ATOMIC_RELAXED);
	pthread_join(obs, NULL);
	check_exact("phase 1 (waves, concurrent reports)");
	T_ASSERT_UINT(sp_registry_thread_count(), <=, 2); /* main + the reporter's record, gone */

	/* Phase 2: concurrent resets; reports stay within what was done. */
	__atomic_store_n(&stop_observers, 0, __ATOMIC_RELAXED);
	T_ASSERT_INT(pthread_create(&obs, NULL, resetter, NULL), ==, 0);
	run_workers(threads, ms / 2, 0, 100);
	__atomic_store_n(&stop_observers, 1, __ATOMIC_RELAXED);
	pthread_join(obs, NULL);
	{
		uint64_t done = 0;

		for (int s = 0; s < N_SITES; s++)
			for (int j = 0; j < N_OBJS; j++)
				done += expected[s][j];
		T_ASSERT_UINT(rows_total(0), <=, done);
	}

	/* Phase 3: reset, known work, exact. */
	T_ASSERT_INT(syncprof_reset(), ==, 0);
	memset(expected, 0, sizeof(expected));
	run_workers(threads, 0, 20000, 200);
	check_exact("phase 3 (after reset)");
	T_ASSERT_UINT(syncprof_lost_events(), ==, 0);
	printf("test_stress: ok (%llu concurrent reports, %llu concurrent resets)\n", reports_done,
	       resets_done);
	return 0;
}
