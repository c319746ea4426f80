/*
 * test_thread_reuse.c - an exited thread's record (its table, caches and
 * hold list) is reused by the next thread (registry.c's free list, issue
 * 25 part 2), and the new thread starts empty of the last one's state:
 * entries, cold parts (hold samples, waits), histograms and stacks in the
 * table's pool, the near[] and order caches, its name, its held list; the
 * last thread's counts are kept once, in the retired aggregate.  Then a
 * churn of short threads, each checking that its own table holds only
 * what it did, while the records go round.  Before all that, the
 * profiler's own threads are born named (sp_born_named()).
 *
 * Run with hold=1,hold_sample=1,lock_order=1 (CMakeLists.txt) so that
 * every hold is timed, held lists are kept and edges are cached.
 *
 * Usage: test_thread_reuse [THREADS]   (default 2000; SYNCPROF_TEST_SCALE=N
 * in the environment divides it by N, as the TSan build's run does)
 */
#include <pthread.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "record/hold.h"
#include "record/record.h"
#include "report/profile.h"
#include "report_util.h"

static pthread_mutex_t m1 = PTHREAD_MUTEX_INITIALIZER; /* A's: contended */
static pthread_mutex_t m3 = PTHREAD_MUTEX_INITIALIZER; /* A's: inside m1 */
static pthread_mutex_t m2 = PTHREAD_MUTEX_INITIALIZER; /* B's and the churn's */
static struct sp_thread *rec_a;
static const struct sp_entry *a_m1_entry;
static const struct sp_entry_cold *a_m1_cold; /* the entry's own pointer is cleared too */

static pid_t a_tid;

#define A_ROUNDS 7

/* Until thread A sleeps in the kernel (its lock of m1, main holding it). */
static void wait_until_a_blocks(void)
{
	struct timespec ms1 = { 0, 1000000 };
	char path[64], *st, *p;
	pid_t tid;

	while (!(tid = __atomic_load_n(&a_tid, __ATOMIC_ACQUIRE)))
		nanosleep(&ms1, NULL);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	for (;;) {
		st = t_slurp_file(path);
		T_ASSERT(st != NULL);
		p = strrchr(st, ')');
		if (p && p[1] == ' ' && p[2] == 'S') {
			free(st);
			return;
		}
		free(st);
		nanosleep(&ms1, NULL);
	}
}

static int cold_is_zero(const struct sp_entry_cold *c)
{
	static const struct sp_entry_cold zero;

	return !memcmp(c, &zero, sizeof(zero));
}

static void *thread_a(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "reuse-a", 0, 0, 0);
	__atomic_store_n(&a_tid, gettid(), __ATOMIC_RELEASE);
	/* contended: main holds m1 (unprofiled) and lets go later */
	syncprof_mutex_lock(&m1, "/reuse/a.c", 1, "thread_a");
	syncprof_mutex_lock(&m3, "/reuse/a.c", 2, "thread_a");
	syncprof_mutex_unlock(&m3, "/reuse/a.c", 2, "thread_a");
	syncprof_mutex_unlock(&m1, "/reuse/a.c", 1, "thread_a");
	for (int i = 1; i < A_ROUNDS; i++) {
		syncprof_mutex_lock(&m1, "/reuse/a.c", 1, "thread_a");
		syncprof_mutex_unlock(&m1, "/reuse/a.c", 1, "thread_a");
	}
	rec_a = sp_tls_self;
	T_ASSERT(rec_a != NULL);
	a_m1_entry = sp_table_find(&rec_a->table, &(struct sp_site){ "/reuse/a.c", NULL, 0, 1 },
				   (uintptr_t)&m1, SP_TYPE_MUTEX);
	T_ASSERT(a_m1_entry != NULL);
	a_m1_cold = a_m1_entry->cold;
	/* The state a careless reuse would carry over, all there now. */
	T_ASSERT_UINT(a_m1_entry->acquisitions, ==, A_ROUNDS);
	T_ASSERT_UINT(a_m1_entry->contended, ==, 1);
	T_ASSERT(a_m1_entry->cold->hist[SP_HIST_WAIT] != 0);
	T_ASSERT_UINT(a_m1_entry->cold->hold_sample_n + a_m1_entry->cold->hold_exact_n, >, 0);
	T_ASSERT_UINT(sp_table_count(&rec_a->table), ==, 2);
	/* a stack, as an interposed site's first contended wait keeps one */
	{
		uintptr_t *f = sp_table_alloc(&rec_a->table, 2 * sizeof(*f));

		T_ASSERT(f != NULL);
		f[0] = 0x1234;
		f[1] = 0x5678;
		a_m1_entry->cold->frames = f;
		sp_store_release(&a_m1_entry->cold->n_frames, 2);
	}
	T_ASSERT(rec_a->table.hist_pool.slabs != NULL);
	T_ASSERT_UINT(rec_a->table.hist_pool.left, <, 65536 - 64);
	return NULL;
}

static void *thread_b(void *arg)
{
	struct sp_thread *t;
	const struct sp_entry *e;
	struct sp_hold_pub *p;
	unsigned filled = 0;

	(void)arg;
	prctl(PR_SET_NAME, "reuse-b", 0, 0, 0);
	T_ASSERT(sp_hold_my_pub == NULL);
	syncprof_mutex_lock(&m2, "/reuse/b.c", 5, "thread_b");
	t = sp_tls_self;
	/* The free list gave B A's record: the reuse under test. */
	T_ASSERT(t == rec_a);
	T_ASSERT_STR(t->name, "reuse-b");
	p = sp_hold_my_pub;
	T_ASSERT(p != NULL);
	T_ASSERT_UINT(SP_PUB_N(p->state), ==, 1);
	T_ASSERT_UINT(p->e[0].obj, ==, (uintptr_t)&m2);
	syncprof_mutex_unlock(&m2, "/reuse/b.c", 5, "thread_b");
	T_ASSERT_UINT(SP_PUB_N(p->state), ==, 0);

	T_ASSERT_UINT(sp_table_count(&t->table), ==, 1);
	T_ASSERT(sp_table_find(&t->table, &(struct sp_site){ "/reuse/a.c", NULL, 0, 1 },
			       (uintptr_t)&m1, SP_TYPE_MUTEX) == NULL);
	e = sp_table_find(&t->table, &(struct sp_site){ "/reuse/b.c", NULL, 0, 5 },
			  (uintptr_t)&m2, SP_TYPE_MUTEX);
	T_ASSERT(e != NULL);
	T_ASSERT_UINT(e->acquisitions, ==, 1);
	T_ASSERT_UINT(e->contended, ==, 0);
	T_ASSERT_UINT(e->cold->hist[SP_HIST_WAIT], ==, 0);
	T_ASSERT_UINT(e->cold->n_frames, ==, 0);
	T_ASSERT(e->cold->frames == NULL);
	/* A's entries: emptied wherever they were (home slot or chunk) */
	T_ASSERT_UINT(a_m1_entry->obj, ==, a_m1_entry == e ? (uintptr_t)&m2 : 0);
	if (a_m1_entry != e)
		T_ASSERT(a_m1_entry->cold == NULL && cold_is_zero(a_m1_cold));
	T_ASSERT(t->near[sp_lock_slot((uintptr_t)&m1)] == NULL);
	T_ASSERT(t->near[sp_lock_slot((uintptr_t)&m3)] == NULL);
	for (unsigned i = 0; i < SP_ORDER_CACHE; i++)
		filled += t->order_cache[i].from != 0;
	T_ASSERT_UINT(filled, ==, 0);
	/* the pool: one slab, all free (A's blocks were zeroed and given
	 * back); B's one hold is in its histogram's word */
	T_ASSERT(e->cold->hist[SP_HIST_HOLD] & SP_HIST_ONE);
	T_ASSERT(t->table.hist_pool.slabs != NULL);
	T_ASSERT_UINT(t->table.hist_pool.left, ==, 65536 - 64);
	for (unsigned i = 64; i < 65536; i++)
		T_ASSERT_UINT(((const unsigned char *)t->table.hist_pool.slabs)[i], ==, 0);
	{
		uint64_t counts[SP_HIST_BUCKETS], sum = 0;

		T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_HOLD], counts), ==, 1);
		for (unsigned i = 0; i < SP_HIST_BUCKETS; i++)
			sum += counts[i];
		T_ASSERT_UINT(sum, ==, 1);
	}
	return NULL;
}

/* Churn: each thread's table holds exactly its own two calls. */
static void *churner(void *arg)
{
	struct sp_thread *t;
	const struct sp_entry *e;

	(void)arg;
	syncprof_mutex_lock(&m2, "/reuse/c.c", 9, "churner");
	syncprof_mutex_lock(&m3, "/reuse/c.c", 10, "churner");
	syncprof_mutex_unlock(&m3, "/reuse/c.c", 10, "churner");
	syncprof_mutex_unlock(&m2, "/reuse/c.c", 9, "churner");
	t = sp_tls_self;
	T_ASSERT(t != NULL);
	T_ASSERT_UINT(sp_table_count(&t->table), ==, 2);
	e = sp_table_find(&t->table, &(struct sp_site){ "/reuse/c.c", NULL, 0, 9 },
			  (uintptr_t)&m2, SP_TYPE_MUTEX);
	T_ASSERT(e != NULL);
	T_ASSERT_UINT(e->acquisitions, ==, 1);
	return NULL;
}

static uint64_t row_acquisitions(const char *file)
{
	struct syncprof_report_options o;
	struct sp_rows rows;
	uint64_t n = 0;

	syncprof_report_options_init(&o);
	o.coalesce = 0;
	T_ASSERT_INT(t_report_rows(&rows, &o), ==, 0);
	for (size_t i = 0; i < rows.n; i++)
		if (rows.v[i].file && !strcmp(rows.v[i].file, file))
			n += rows.v[i].acquisitions;
	sp_rows_free(&rows);
	return n;
}

/* The profiler's own threads are born with their names (sp_born_named()):
 * the time account leaves them out by name, even before they first run.
 * The new thread reads its name first thing, before anything could rename
 * it; the creator keeps its own. */
static char born_name[16];

static void *born_probe(void *arg)
{
	(void)arg;
	prctl(PR_GET_NAME, (unsigned long)born_name, 0, 0, 0);
	return NULL;
}

static void test_born_named(void)
{
	char before[16] = "", after[16] = "";
	pthread_t t;

	prctl(PR_SET_NAME, (unsigned long)"reuse-main", 0, 0, 0);
	prctl(PR_GET_NAME, (unsigned long)before, 0, 0, 0);
	T_ASSERT_INT(sp_born_named(&t, NULL, born_probe, "syncprof-test"), ==, 0);
	prctl(PR_GET_NAME, (unsigned long)after, 0, 0, 0);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
	T_ASSERT_STR(born_name, "syncprof-test");
	T_ASSERT_STR(before, "reuse-main");
	T_ASSERT_STR(after, "reuse-main");
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	pthread_t a, b, c[4];
	uint64_t made = 0;

	if (getenv("SYNCPROF_TEST_SCALE") && atoi(getenv("SYNCPROF_TEST_SCALE")) > 1)
		n /= (unsigned)atoi(getenv("SYNCPROF_TEST_SCALE"));

	test_born_named();
	syncprof_enable();
	pthread_mutex_lock(&m1); /* glibc's own: A's first lock waits */
	T_ASSERT_INT(pthread_create(&a, NULL, thread_a, NULL), ==, 0);
	wait_until_a_blocks();
	pthread_mutex_unlock(&m1);
	T_ASSERT_INT(pthread_join(a, NULL), ==, 0);
	T_ASSERT_INT(pthread_create(&b, NULL, thread_b, NULL), ==, 0);
	T_ASSERT_INT(pthread_join(b, NULL), ==, 0);
	/* A's and B's calls are in the report once each */
	T_ASSERT_UINT(row_acquisitions("/reuse/a.c"), ==, A_ROUNDS + 1);
	T_ASSERT_UINT(row_acquisitions("/reuse/b.c"), ==, 1);

	for (unsigned i = 0; i < n; i += 4) {
		for (unsigned j = 0; j < 4; j++)
			T_ASSERT_INT(pthread_create(&c[j], NULL, churner, NULL), ==, 0);
		for (unsigned j = 0; j < 4; j++)
			pthread_join(c[j], NULL);
		made += 4;
	}
	T_ASSERT_UINT(row_acquisitions("/reuse/c.c"), ==, 2 * made);
	T_ASSERT_UINT(syncprof_lost_events(), ==, 0);
	puts("test_thread_reuse: ok");
	return 0;
}
