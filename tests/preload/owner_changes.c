/*
 * owner_changes.c - owner changes counted exactly (hold.h,
 * sp_hold_push_ok(); hold.c, owner_change()): two threads take one lock
 * in a fixed order, handed over by semaphores, so the truth is known:
 *   - strict turns (A, B, A, B...): every acquisition but the first
 *     changes the owner: 2 x ROUNDS - 1;
 *   - batches (A x BATCH, B x BATCH...): one change per batch but the
 *     first: 2 x ROUNDS - 1 again, among 2 x ROUNDS x BATCH acquisitions.
 * Each pattern has its own lock, of each kind: a normal, an
 * error-checking and a recursive mutex (taken twice, nested: one owner),
 * a rwlock's write lock and a spinlock.  The JSON report's owner_changes
 * of a lock's rows (one per call site) must add up to the truth, and every
 * call must return what it would bare.  Run preloaded with hold=1 (owner
 * changes are a column of hold tracking).  Exit 1 with a message on
 * failure.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_report.h"

#define ROUNDS 500
#define BATCH 7

enum kind { NORMAL, ERRORCHECK, RECURSIVE, RWLOCK, SPIN, KINDS };
static const char *const kind_name[KINDS] = { "normal", "errorcheck", "recursive", "rwlock",
					       "spinlock" };

/* One lock of a kind, for one pattern. */
struct lock {
	enum kind kind;
	pthread_mutex_t m;
	pthread_rwlock_t rw;
	pthread_spinlock_t spin;
};

static struct lock locks[KINDS][2]; /* [kind][0: turns, 1: batches] */
static sem_t go[2];
static int failed;

static void check(int rc, const char *what)
{
	if (rc) {
		fprintf(stderr, "owner_changes: %s returned %d\n", what, rc);
		__atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
	}
}

static void take_once(struct lock *l)
{
	switch (l->kind) {
	case RECURSIVE:
		check(pthread_mutex_lock(&l->m), "pthread_mutex_lock");
		check(pthread_mutex_lock(&l->m), "pthread_mutex_lock (again)");
		check(pthread_mutex_unlock(&l->m), "pthread_mutex_unlock (inner)");
		check(pthread_mutex_unlock(&l->m), "pthread_mutex_unlock");
		break;
	case RWLOCK:
		check(pthread_rwlock_wrlock(&l->rw), "pthread_rwlock_wrlock");
		check(pthread_rwlock_unlock(&l->rw), "pthread_rwlock_unlock");
		break;
	case SPIN:
		check(pthread_spin_lock(&l->spin), "pthread_spin_lock");
		check(pthread_spin_unlock(&l->spin), "pthread_spin_unlock");
		break;
	default:
		check(pthread_mutex_lock(&l->m), "pthread_mutex_lock");
		check(pthread_mutex_unlock(&l->m), "pthread_mutex_unlock");
	}
}

struct who {
	int me;
	struct lock *l;
	int batch;
};

static void *take(void *arg)
{
	const struct who *w = arg;

	for (int i = 0; i < ROUNDS; i++) {
		sem_wait(&go[w->me]);
		for (int k = 0; k < w->batch; k++)
			take_once(w->l);
		sem_post(&go[!w->me]);
	}
	return NULL;
}

static void run(struct lock *l, int batch)
{
	struct who w[2] = { { 0, l, batch }, { 1, l, batch } };
	pthread_t t[2];

	sem_init(&go[0], 0, 1);
	sem_init(&go[1], 0, 0);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, take, &w[i])) {
			perror("owner_changes: pthread_create");
			exit(1);
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sem_destroy(&go[0]);
	sem_destroy(&go[1]);
}

static void init(struct lock *l, enum kind kind)
{
	pthread_mutexattr_t a;

	l->kind = kind;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, kind == ERRORCHECK  ? PTHREAD_MUTEX_ERRORCHECK
				      : kind == RECURSIVE ? PTHREAD_MUTEX_RECURSIVE
							  : PTHREAD_MUTEX_NORMAL);
	pthread_mutex_init(&l->m, &a);
	pthread_mutexattr_destroy(&a);
	pthread_rwlock_init(&l->rw, NULL);
	pthread_spin_init(&l->spin, PTHREAD_PROCESS_PRIVATE);
}

/* The object a lock's rows carry. */
static const void *object(const struct lock *l)
{
	return l->kind == RWLOCK ? (const void *)&l->rw
	       : l->kind == SPIN ? (const void *)&l->spin
				 : (const void *)&l->m;
}

/* The sum of "@key" over the rows of object @m in @json. */
static long long sum_of(const char *json, const void *obj, const char *key)
{
	long long sum = 0;

	for (const char *row = json_object_row(json, obj); row; row = json_object_row(row + 1, obj)) {
		long long v = json_row_value(row, json_row_end(row), key);

		if (v > 0)
			sum += v;
	}
	return sum;
}

int main(void)
{
	long long want = 2 * ROUNDS - 1;
	int rc = 0;
	char *json;

	for (int k = 0; k < KINDS; k++)
		for (int b = 0; b < 2; b++) {
			init(&locks[k][b], (enum kind)k);
			run(&locks[k][b], b ? BATCH : 1);
		}
	json = json_report("owner_changes");
	for (int k = 0; k < KINDS; k++) {
		const void *t = object(&locks[k][0]), *b = object(&locks[k][1]);
		long long got_t = sum_of(json, t, "owner_changes");
		long long got_b = sum_of(json, b, "owner_changes");
		long long acq_b = sum_of(json, b, "acquisitions");
		/* A recursive mutex's inner lock is a row's acquisition too. */
		long long want_acq = 2LL * ROUNDS * BATCH * (k == RECURSIVE ? 2 : 1);

		printf("owner_changes: %s: turns %lld (truth %lld), batches %lld (truth %lld) in "
		       "%lld acquisitions\n",
		       kind_name[k], got_t, want, got_b, want, acq_b);
		if (got_t != want || got_b != want || acq_b != want_acq) {
			fprintf(stderr, "owner_changes: FAIL (%s)\n", kind_name[k]);
			rc = 1;
		}
	}
	if (failed) {
		fprintf(stderr, "owner_changes: FAIL (a call returned an error)\n");
		rc = 1;
	}
	free(json);
	return rc;
}
