/*
 * test_lockorder_stress.c - lock-order checking (lock_order=1) with many
 * threads adding edges at once, generations bumped by threads that destroy
 * and initialise their own locks again and again, and a thread that
 * reports meanwhile: for the sanitizers (the lock-free lookups and
 * publications of lockorder.c) as much as for the results.
 *
 * Usage: test_lockorder_stress [SEED [THREADS [OPS]]]   (defaults 1, 4, 20000)
 * SYNCPROF_TEST_SCALE=N divides OPS by N (TSan builds).  Run with
 * SYNCPROF_OPTIONS=lock_order=1 (CTest sets it).
 *
 * Phase 1: workers take pairs of a shared array of mutexes, always the
 *   lower index first (some by trylock the other way round, which adds
 *   nothing), and their own two mutexes in one order, destroy and
 *   initialise them, then in the other order; a reporter reports all the
 *   while.  No cycle may be found, now or in any report meanwhile.
 * Phase 2: one thread takes a pair the other way round: a cycle of two
 *   edges, with the sites of both orders, is found.
 */
#include <pthread.h>
#include <unistd.h>

#include "harness.h"
#include "runtime/runtime.h"
#include "report/profile.h"

#define N_LOCKS 32
#define MAX_CHURN 400 /* own-lock rounds per worker: their edges fit the table */

static pthread_mutex_t locks[N_LOCKS];
static int stop_reporter;
static unsigned long long reports_done;

static unsigned rnd(unsigned *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 9;
}

#define LOCK(m, line) T_ASSERT_INT(syncprof_mutex_lock((m), "stress.c", (line), "worker"), ==, 0)
#define UNLOCK(m, line) T_ASSERT_INT(syncprof_mutex_unlock((m), "stress.c", (line), "worker"), ==, 0)

struct worker_arg {
	unsigned seed, ops;
};

static void own_pair(pthread_mutex_t *own, int first)
{
	LOCK(&own[first], 30);
	LOCK(&own[!first], 31);
	UNLOCK(&own[!first], 31);
	UNLOCK(&own[first], 30);
	/* Destroyed and made again: the next order starts from nothing. */
	for (int k = 0; k < 2; k++) {
		T_ASSERT_INT(pthread_mutex_destroy(&own[k]), ==, 0);
		syncprof_lock_forget(&own[k]);
		syncprof_lock_forget(&own[k]);
		T_ASSERT_INT(pthread_mutex_init(&own[k], NULL), ==, 0);
	}
}

static void *worker(void *p)
{
	struct worker_arg *a = p;
	pthread_mutex_t own[2] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
	unsigned s = a->seed, churn = 0;

	for (unsigned i = 0; i < a->ops; i++) {
		unsigned x = rnd(&s) % N_LOCKS, y = rnd(&s) % N_LOCKS;
		unsigned lo = x < y ? x : y, hi = x < y ? y : x;

		if (lo == hi)
			continue;
		if (i % 8 == 7) {
			/* The other way round, by trylock: it cannot wait. */
			LOCK(&locks[hi], 20);
			if (syncprof_mutex_trylock(&locks[lo], "stress.c", 21, "worker") == 0)
				UNLOCK(&locks[lo], 21);
			UNLOCK(&locks[hi], 20);
		} else {
			LOCK(&locks[lo], 10);
			LOCK(&locks[hi], 11);
			UNLOCK(&locks[hi], 11);
			UNLOCK(&locks[lo], 10);
		}
		if (i % 16 == 0 && churn++ < MAX_CHURN)
			own_pair(own, (int)(churn & 1));
	}
	return NULL;
}

static void check_cycles(const struct sp_profile *p, size_t want)
{
	T_ASSERT_INT(p->order.on, ==, 1);
	T_ASSERT_UINT(p->order.edges_dropped, ==, 0);
	T_ASSERT_UINT(p->order.cycles_dropped, ==, 0);
	T_ASSERT_UINT(p->order.n_cycles, ==, want);
}

static void *reporter(void *p)
{
	struct syncprof_report_options o;
	FILE *null = fopen("/dev/null", "w");

	(void)p;
	T_ASSERT(null);
	syncprof_report_options_init(&o);
	while (!__atomic_load_n(&stop_reporter, __ATOMIC_RELAXED)) {
		struct sp_profile prof;

		T_ASSERT_INT(sp_report_profile(&prof, &o), ==, 0);
		check_cycles(&prof, 0);
		sp_profile_free(&prof);
		T_ASSERT_INT(syncprof_report(null, &o), ==, 0);
		reports_done++;
	}
	fclose(null);
	return NULL;
}

static void *reverse(void *p)
{
	(void)p;
	LOCK(&locks[N_LOCKS - 1], 40); /* the highest first: against 10/11 */
	LOCK(&locks[0], 41);
	UNLOCK(&locks[0], 41);
	UNLOCK(&locks[N_LOCKS - 1], 40);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
	unsigned n = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
	unsigned ops = argc > 3 ? (unsigned)atoi(argv[3]) : 20000;
	struct syncprof_report_options o;
	struct worker_arg args[64];
	pthread_t t[64], rep, rev;
	struct sp_profile prof;
	int found = 0;

	if (getenv("SYNCPROF_TEST_SCALE") && atoi(getenv("SYNCPROF_TEST_SCALE")) > 1)
		ops /= (unsigned)atoi(getenv("SYNCPROF_TEST_SCALE"));
	T_ASSERT(n >= 1 && n <= 64);
	sp_runtime_init();
	if (!sp_opts.lock_order) {
		fputs("test_lockorder_stress: run with SYNCPROF_OPTIONS=lock_order=1\n", stderr);
		return 1;
	}
	for (int i = 0; i < N_LOCKS; i++)
		pthread_mutex_init(&locks[i], NULL);
	syncprof_enable();

	T_ASSERT_INT(pthread_create(&rep, NULL, reporter, NULL), ==, 0);
	for (unsigned i = 0; i < n; i++) {
		args[i].seed = seed * 7919u + i;
		args[i].ops = ops;
		T_ASSERT_INT(pthread_create(&t[i], NULL, worker, &args[i]), ==, 0);
	}
	for (unsigned i = 0; i < n; i++)
		T_ASSERT_INT(pthread_join(t[i], NULL), ==, 0);
	__atomic_store_n(&stop_reporter, 1, __ATOMIC_RELAXED);
	T_ASSERT_INT(pthread_join(rep, NULL), ==, 0);

	syncprof_report_options_init(&o);
	T_ASSERT_INT(sp_report_profile(&prof, &o), ==, 0);
	check_cycles(&prof, 0);
	T_ASSERT_UINT(prof.order.edges_kept, >, N_LOCKS);
	printf("phase 1: %llu edges, %llu reports meanwhile, no cycle\n",
	       (unsigned long long)prof.order.edges_kept, reports_done);
	sp_profile_free(&prof);

	/* Phase 2: the pair (0, N_LOCKS - 1) the other way round. */
	T_ASSERT_INT(pthread_create(&rev, NULL, reverse, NULL), ==, 0);
	T_ASSERT_INT(pthread_join(rev, NULL), ==, 0);
	T_ASSERT_INT(sp_report_profile(&prof, &o), ==, 0);
	T_ASSERT_UINT(prof.order.n_cycles, >=, 1);
	for (size_t i = 0; i < prof.order.n_cycles; i++) {
		const struct sp_cycle *c = &prof.order.cycles[i];

		for (unsigned k = 0; k < c->n_edges; k++) /* each cycle is closed */
			T_ASSERT_UINT(c->edges[k].acquired.obj, ==,
				      c->edges[(k + 1) % c->n_edges].held.obj);
		if (c->n_edges == 2)
			for (unsigned k = 0; k < 2; k++)
				found |= c->edges[k].held.site.line == 40 &&
					 c->edges[k].acquired.site.line == 41 &&
					 c->edges[!k].held.site.line == 10 &&
					 c->edges[!k].acquired.site.line == 11;
	}
	T_ASSERT(found);
	printf("phase 2: %zu cycle(s) through the reversed pair\n", prof.order.n_cycles);
	sp_profile_free(&prof);
	return 0;
}
