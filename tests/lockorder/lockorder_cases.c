/*
 * lockorder_cases.c - programs whose lock orders are known, for lock-order
 * checking (lock_order=1): each case takes locks inside others in one
 * thread after another (create, join, create, join), so that a cycle of
 * the orders exists although the run never deadlocks.  Built twice: plain
 * (run under the preload library) and with -include syncprof/instrument.h.
 * check_lock_order.py reads the profile and compares its cycles with what
 * the case should give; the comment of each case says what that is.
 *
 * Every function that takes a lock is noinline and named, so that the
 * sites (function names) identify the edges; "_outer" functions take the
 * first lock and call an "_inner" one that takes the second, so that the
 * held lock's site and stack differ from the acquired one's.
 *
 * Usage: lockorder_cases CASE [wait] - no output; exit 0 unless a lock call
 * fails.  With "wait", print "ready" after the case and sleep until killed
 * (for 'syncprof ctl PID report', tests/preload/rerender.sh).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP() __asm__ volatile("" ::: "memory") /* no tail call, no merge */

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "lockorder_cases: %s: %s\n", what, strerror(rc));
		exit(1);
	}
}

static void run(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	check(pthread_create(&t, NULL, fn, arg), "pthread_create");
	check(pthread_join(t, NULL), "pthread_join");
}

static pthread_mutex_t A = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t B = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t C = PTHREAD_MUTEX_INITIALIZER;

/* ---- abba: A then B in one thread, B then A in the next: 1 cycle, edges
 *      ab_outer>ab_inner and ba_outer>ba_inner ------------------------------ */

NOINLINE static void ab_inner(void)
{
	check(pthread_mutex_lock(&B), "lock B");
	check(pthread_mutex_unlock(&B), "unlock B");
	KEEP();
}

NOINLINE static void *ab_outer(void *arg)
{
	check(pthread_mutex_lock(&A), "lock A");
	ab_inner();
	check(pthread_mutex_unlock(&A), "unlock A");
	KEEP();
	return arg;
}

NOINLINE static void ba_inner(void)
{
	check(pthread_mutex_lock(&A), "lock A");
	check(pthread_mutex_unlock(&A), "unlock A");
	KEEP();
}

NOINLINE static void *ba_outer(void *arg)
{
	check(pthread_mutex_lock(&B), "lock B");
	ba_inner();
	check(pthread_mutex_unlock(&B), "unlock B");
	KEEP();
	return arg;
}

static void case_abba(void)
{
	run(ab_outer, NULL);
	run(ba_outer, NULL);
}

/* ---- warm: abba, each thread having taken its inner lock alone first, at
 *      the same site: the inner acquisition is then a hit of the thread's
 *      caches (the probes' fast paths), which must add its edge too ---- */

NOINLINE static void *ab_warm(void *arg)
{
	for (int i = 0; i < 3; i++)
		ab_inner();
	return ab_outer(arg);
}

NOINLINE static void *ba_warm(void *arg)
{
	for (int i = 0; i < 3; i++)
		ba_inner();
	return ba_outer(arg);
}

static void case_warm(void)
{
	run(ab_warm, NULL);
	run(ba_warm, NULL);
}

/* ---- deep: abba, A taken three calls below the thread's function and B
 *      three calls below that: each end's stack (frames=4) ends in a frame
 *      that a walk stopped one frame early would miss; 1 cycle, edges
 *      deep_held>deep_i3 and ba_outer>ba_inner ----------------------------- */

NOINLINE static void deep_i3(void)
{
	check(pthread_mutex_lock(&B), "lock B");
	check(pthread_mutex_unlock(&B), "unlock B");
	KEEP();
}

NOINLINE static void deep_i2(void)
{
	deep_i3();
	KEEP();
}

NOINLINE static void deep_i1(void)
{
	deep_i2();
	KEEP();
}

NOINLINE static void deep_held(void)
{
	check(pthread_mutex_lock(&A), "lock A");
	deep_i1();
	check(pthread_mutex_unlock(&A), "unlock A");
	KEEP();
}

NOINLINE static void deep_c3(void)
{
	deep_held();
	KEEP();
}

NOINLINE static void deep_c2(void)
{
	deep_c3();
	KEEP();
}

NOINLINE static void deep_c1(void)
{
	deep_c2();
	KEEP();
}

NOINLINE static void *deep_thread(void *arg)
{
	deep_c1();
	KEEP();
	return arg;
}

static void case_deep(void)
{
	run(deep_thread, NULL);
	run(ba_outer, NULL);
}

/* ---- three: A then B, B then C, C then A, three threads: 1 cycle of 3 --- */

NOINLINE static void lock2(pthread_mutex_t *first, pthread_mutex_t *second)
{
	check(pthread_mutex_lock(first), "lock first");
	check(pthread_mutex_lock(second), "lock second");
	check(pthread_mutex_unlock(second), "unlock second");
	check(pthread_mutex_unlock(first), "unlock first");
	KEEP();
}

NOINLINE static void *three_ab(void *arg)
{
	lock2(&A, &B);
	return arg;
}

NOINLINE static void *three_bc(void *arg)
{
	lock2(&B, &C);
	return arg;
}

NOINLINE static void *three_ca(void *arg)
{
	lock2(&C, &A);
	return arg;
}

static void case_three(void)
{
	run(three_ab, NULL);
	run(three_bc, NULL);
	run(three_ca, NULL);
}

/* ---- wrapped: heap accounts locked through a wrapper, acct_lock(), that
 *      skip=^acct_(un)?lock$ removes; transfers both ways between two pairs
 *      of accounts: 1 cycle (sites: transfer's two calls; compiled in, the
 *      wrapper's line), found twice (two pairs of objects) ---------------- */

struct account {
	pthread_mutex_t lock;
	long balance;
};

NOINLINE void acct_lock(struct account *a)
{
	check(pthread_mutex_lock(&a->lock), "acct_lock");
	KEEP();
}

NOINLINE void acct_unlock(struct account *a)
{
	check(pthread_mutex_unlock(&a->lock), "acct_unlock");
	KEEP();
}

NOINLINE static void transfer(struct account *from, struct account *to, long amount)
{
	acct_lock(from);
	acct_lock(to);
	from->balance -= amount;
	to->balance += amount;
	acct_unlock(to);
	acct_unlock(from);
	KEEP();
}

static struct account *accounts[4];

static void *transfer_fwd(void *arg)
{
	struct account **pair = arg;

	transfer(pair[0], pair[1], 10);
	return NULL;
}

static void *transfer_back(void *arg)
{
	struct account **pair = arg;

	transfer(pair[1], pair[0], 10);
	return NULL;
}

static void case_wrapped(void)
{
	for (int i = 0; i < 4; i++) {
		accounts[i] = malloc(sizeof(*accounts[i]));
		if (!accounts[i])
			exit(1);
		check(pthread_mutex_init(&accounts[i]->lock, NULL), "init");
		accounts[i]->balance = 100;
	}
	run(transfer_fwd, &accounts[0]);
	run(transfer_back, &accounts[0]);
	run(transfer_fwd, &accounts[2]);
	run(transfer_back, &accounts[2]);
	for (int i = 0; i < 4; i++) {
		check(pthread_mutex_destroy(&accounts[i]->lock), "destroy");
		free(accounts[i]);
	}
}

/* ---- rwlock: the rwlock for reading then a mutex, against the mutex then
 *      the rwlock for writing: 1 cycle, an rwlock_read>mutex edge and a
 *      mutex>rwlock_write one ------------------------------------------------ */

static pthread_rwlock_t R = PTHREAD_RWLOCK_INITIALIZER;

NOINLINE static void *rw_read_then_m(void *arg)
{
	check(pthread_rwlock_rdlock(&R), "rdlock");
	check(pthread_mutex_lock(&A), "lock A");
	check(pthread_mutex_unlock(&A), "unlock A");
	check(pthread_rwlock_unlock(&R), "rw unlock");
	KEEP();
	return arg;
}

NOINLINE static void *rw_m_then_write(void *arg)
{
	check(pthread_mutex_lock(&A), "lock A");
	check(pthread_rwlock_wrlock(&R), "wrlock");
	check(pthread_rwlock_unlock(&R), "rw unlock");
	check(pthread_mutex_unlock(&A), "unlock A");
	KEEP();
	return arg;
}

static void case_rwlock(void)
{
	run(rw_read_then_m, NULL);
	run(rw_m_then_write, NULL);
}

/* ---- readread: the rwlock for reading then a mutex, against the mutex
 *      then the rwlock for reading.  With glibc's default rwlock (readers
 *      first) a reader never waits for a reader: no cycle.  readread_wp:
 *      the same with a writer-preferring rwlock
 *      (PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), whose readers queue
 *      behind a waiting writer: 1 cycle --------------------------------------- */

static pthread_rwlock_t RR;

NOINLINE static void *rr_read_then_m(void *arg)
{
	check(pthread_rwlock_rdlock(&RR), "rdlock");
	check(pthread_mutex_lock(&B), "lock B");
	check(pthread_mutex_unlock(&B), "unlock B");
	check(pthread_rwlock_unlock(&RR), "rw unlock");
	KEEP();
	return arg;
}

NOINLINE static void *rr_m_then_read(void *arg)
{
	check(pthread_mutex_lock(&B), "lock B");
	check(pthread_rwlock_rdlock(&RR), "rdlock");
	check(pthread_rwlock_unlock(&RR), "rw unlock");
	check(pthread_mutex_unlock(&B), "unlock B");
	KEEP();
	return arg;
}

static void case_readread(int writer_first)
{
	pthread_rwlockattr_t a;

	check(pthread_rwlockattr_init(&a), "rwlockattr_init");
	if (writer_first)
		check(pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP),
		      "setkind");
	check(pthread_rwlock_init(&RR, &a), "rwlock_init");
	run(rr_read_then_m, NULL);
	run(rr_m_then_read, NULL);
}

/* ---- condvar: a condition wait retakes its mutex M while the thread holds
 *      A, which it took after M: M then A, and (the retake) A then M - 1
 *      cycle, in one thread, whose second edge's site is the wait ---------- */

static pthread_cond_t CV = PTHREAD_COND_INITIALIZER;

static void wait_a_moment(pthread_mutex_t *m)
{
	struct timespec until;
	int rc;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	rc = pthread_cond_timedwait(&CV, m, &until);
	if (rc != ETIMEDOUT)
		check(rc, "cond_timedwait");
}

NOINLINE static void *cv_wait_holding(void *arg)
{
	check(pthread_mutex_lock(&C), "lock C (the wait's mutex)");
	check(pthread_mutex_lock(&A), "lock A");
	wait_a_moment(&C); /* gives C back, takes it again while A is held */
	check(pthread_mutex_unlock(&A), "unlock A");
	check(pthread_mutex_unlock(&C), "unlock C");
	KEEP();
	return arg;
}

static void case_condvar(void)
{
	run(cv_wait_holding, NULL);
}

/* ---- trylock: A then B, against B then a trylock of A (which cannot
 *      wait): no cycle ------------------------------------------------------- */

NOINLINE static void *try_b_then_a(void *arg)
{
	check(pthread_mutex_lock(&B), "lock B");
	check(pthread_mutex_trylock(&A), "trylock A"); /* A is free: it succeeds */
	check(pthread_mutex_unlock(&A), "unlock A");
	check(pthread_mutex_unlock(&B), "unlock B");
	KEEP();
	return arg;
}

static void case_trylock(void)
{
	run(ab_outer, NULL);
	run(try_b_then_a, NULL);
}

/* ---- deadlock: A then B in one thread, B then A in another, at once, so
 *      that both block for good: 1 cycle, edges dl_outer>dl_inner twice,
 *      although neither second lock is ever acquired (its edges are added
 *      before the lock is tried).  The main thread waits until both are in
 *      their second lock call (and half a second more), then returns: the
 *      report at exit has the cycle ------------------------------------- */

static pthread_barrier_t dl_both_hold;
static int dl_blocking;

NOINLINE static void dl_inner(pthread_mutex_t *second)
{
	__atomic_add_fetch(&dl_blocking, 1, __ATOMIC_SEQ_CST);
	check(pthread_mutex_lock(second), "lock second"); /* never returns */
	KEEP();
}

/* @arg: the two locks, in this thread's order. */
NOINLINE static void *dl_outer(void *arg)
{
	pthread_mutex_t **order = arg;

	check(pthread_mutex_lock(order[0]), "lock first");
	pthread_barrier_wait(&dl_both_hold);
	dl_inner(order[1]);
	KEEP();
	return arg;
}

static void case_deadlock(void)
{
	static pthread_mutex_t *ab[2] = { &A, &B }, *ba[2] = { &B, &A };
	pthread_t t;
	struct timespec moment = { 0, 10000000 };

	check(pthread_barrier_init(&dl_both_hold, NULL, 2), "pthread_barrier_init");
	check(pthread_create(&t, NULL, dl_outer, ab), "pthread_create");
	check(pthread_detach(t), "pthread_detach");
	check(pthread_create(&t, NULL, dl_outer, ba), "pthread_create");
	check(pthread_detach(t), "pthread_detach");
	while (__atomic_load_n(&dl_blocking, __ATOMIC_SEQ_CST) < 2)
		nanosleep(&moment, NULL);
	moment.tv_nsec = 500000000;
	nanosleep(&moment, NULL);
}

/* ---- recursive: a recursive mutex REC then A, then REC again while both
 *      are held (a re-lock, which cannot wait): no cycle ------------------- */

static pthread_mutex_t REC;

NOINLINE static void *rec_relock(void *arg)
{
	check(pthread_mutex_lock(&REC), "lock REC");
	check(pthread_mutex_lock(&A), "lock A");
	check(pthread_mutex_lock(&REC), "re-lock REC");
	check(pthread_mutex_unlock(&REC), "unlock REC");
	check(pthread_mutex_unlock(&A), "unlock A");
	check(pthread_mutex_unlock(&REC), "unlock REC");
	KEEP();
	return arg;
}

static void case_recursive(void)
{
	pthread_mutexattr_t a;

	check(pthread_mutexattr_init(&a), "mutexattr_init");
	check(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), "settype");
	check(pthread_mutex_init(&REC, &a), "init REC");
	run(rec_relock, NULL);
}

/* ---- reinit: locks destroyed or initialised again, then taken in the
 *      other order at the same addresses: static ones initialised again,
 *      heap ones destroyed, freed and allocated again (glibc's malloc hands
 *      the two blocks back in the other order): no cycle -------------------- */

static pthread_mutex_t slot[2];

NOINLINE static void *slots_01(void *arg)
{
	lock2(&slot[0], &slot[1]);
	return arg;
}

NOINLINE static void *slots_10(void *arg)
{
	lock2(&slot[1], &slot[0]);
	return arg;
}

static pthread_mutex_t *heap[2];

NOINLINE static void *heap_01(void *arg)
{
	lock2(heap[0], heap[1]);
	return arg;
}

static void heap_make(void)
{
	for (int i = 0; i < 2; i++) {
		heap[i] = malloc(sizeof(*heap[i]));
		if (!heap[i])
			exit(1);
		check(pthread_mutex_init(heap[i], NULL), "init heap");
	}
}

static void case_reinit(void)
{
	pthread_mutex_t *first[2];

	for (int i = 0; i < 2; i++)
		check(pthread_mutex_init(&slot[i], NULL), "init slot");
	run(slots_01, NULL);
	for (int i = 0; i < 2; i++)
		check(pthread_mutex_init(&slot[i], NULL), "init slot again");
	run(slots_10, NULL);

	heap_make();
	run(heap_01, NULL);
	for (int i = 0; i < 2; i++) {
		first[i] = heap[i];
		check(pthread_mutex_destroy(heap[i]), "destroy heap");
		free(heap[i]);
	}
	heap_make();
	if (heap[0] != first[1] || heap[1] != first[0])
		fprintf(stderr, "lockorder_cases: note: malloc did not reuse the blocks in reverse\n");
	run(heap_01, NULL); /* the old heap[1] first, then the old heap[0] */
	for (int i = 0; i < 2; i++) {
		check(pthread_mutex_destroy(heap[i]), "destroy heap");
		free(heap[i]);
	}
}

/* ---- clean: one consistent order (A, then B, then C) in three threads,
 *      with a reverse trylock, a recursive re-lock, condition waits and
 *      re-initialised locks: no cycle ---------------------------------------- */

NOINLINE static void *clean_abc(void *arg)
{
	check(pthread_mutex_lock(&A), "lock A");
	check(pthread_mutex_lock(&B), "lock B");
	wait_a_moment(&B); /* retakes B while A is held: A then B again */
	check(pthread_mutex_lock(&C), "lock C");
	if (pthread_mutex_trylock(&A) != EBUSY) /* held: fails, and adds nothing */
		exit(1);
	check(pthread_mutex_unlock(&C), "unlock C");
	check(pthread_mutex_unlock(&B), "unlock B");
	check(pthread_mutex_unlock(&A), "unlock A");
	KEEP();
	return arg;
}

NOINLINE static void *clean_bc_try_a(void *arg)
{
	check(pthread_mutex_lock(&B), "lock B");
	check(pthread_mutex_lock(&C), "lock C");
	check(pthread_mutex_trylock(&A), "trylock A"); /* reverse, but it cannot wait */
	check(pthread_mutex_unlock(&A), "unlock A");
	check(pthread_mutex_unlock(&C), "unlock C");
	check(pthread_mutex_unlock(&B), "unlock B");
	KEEP();
	return arg;
}

static void case_clean(void)
{
	run(clean_abc, NULL);
	run(clean_bc_try_a, NULL);
	case_recursive();
	case_reinit();
	run(clean_abc, NULL);
}

/* ---- churn: 300,000 mutexes made, each taken inside a long-lived lock
 *      and destroyed, more than the edge table holds (262144); then abba:
 *      the late inversion is still 1 cycle, ab_outer>ab_inner and
 *      ba_outer>ba_inner, and no edge is dropped (the destroyed locks'
 *      edges leave the table) ---------------------------------------------- */

#define CHURN 300000
static pthread_mutex_t churn_locks[CHURN];
static pthread_mutex_t G = PTHREAD_MUTEX_INITIALIZER;

NOINLINE static void *churn_loop(void *arg)
{
	for (int i = 0; i < CHURN; i++) {
		check(pthread_mutex_init(&churn_locks[i], NULL), "init");
		check(pthread_mutex_lock(&G), "lock G");
		check(pthread_mutex_lock(&churn_locks[i]), "lock churn");
		check(pthread_mutex_unlock(&churn_locks[i]), "unlock churn");
		check(pthread_mutex_unlock(&G), "unlock G");
		check(pthread_mutex_destroy(&churn_locks[i]), "destroy");
	}
	KEEP();
	return arg;
}

static void case_churn(void)
{
	run(churn_loop, NULL);
	case_abba();
}

/* ---- many: the same 300,000 mutexes alive at once (never destroyed): more
 *      live edges than the table holds; some are dropped, and no cycle
 *      exists - the report must not say "none" as if the check were whole */

NOINLINE static void *many_loop(void *arg)
{
	for (int i = 0; i < CHURN; i++) {
		check(pthread_mutex_lock(&G), "lock G");
		check(pthread_mutex_lock(&churn_locks[i]), "lock many");
		check(pthread_mutex_unlock(&churn_locks[i]), "unlock many");
		check(pthread_mutex_unlock(&G), "unlock G");
	}
	KEEP();
	return arg;
}

static void case_many(void)
{
	for (int i = 0; i < CHURN; i++)
		check(pthread_mutex_init(&churn_locks[i], NULL), "init");
	run(many_loop, NULL);
}

static void case_readread_default(void)
{
	case_readread(0);
}

static void case_readread_wp(void)
{
	case_readread(1);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "abba", case_abba },
	{ "warm", case_warm },
	{ "deep", case_deep },
	{ "three", case_three },
	{ "wrapped", case_wrapped },
	{ "rwlock", case_rwlock },
	{ "readread", case_readread_default },
	{ "readread_wp", case_readread_wp },
	{ "condvar", case_condvar },
	{ "trylock", case_trylock },
	{ "deadlock", case_deadlock },
	{ "recursive", case_recursive },
	{ "reinit", case_reinit },
	{ "clean", case_clean },
	{ "churn", case_churn },
	{ "many", case_many },
};

int main(int argc, char **argv)
{
	for (size_t i = 0; (argc == 2 || argc == 3) && i < sizeof(cases) / sizeof(*cases); i++)
		if (!strcmp(argv[1], cases[i].name)) {
			cases[i].fn();
			if (argc == 3 && !strcmp(argv[2], "wait")) {
				puts("ready");
				fflush(stdout);
				for (;;)
					sleep(1);
			}
			return 0;
		}
	fputs("usage: lockorder_cases CASE, one of:", stderr);
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		fprintf(stderr, " %s", cases[i].name);
	fputc('\n', stderr);
	return 2;
}
