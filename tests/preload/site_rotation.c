/*
 * site_rotation.c - one lock taken at three call sites in turn, and 3000
 * locks taken at one site in a scattered order: every acquisition lands
 * on its own (site, lock) row.  The entry caches (record.h: the thread's
 * last entry, the lock's home slot, near[] by lock and site) only decide
 * how an entry is found; a cache that returned another site's entry, or
 * another lock's, would move counts between rows.  Preloaded, or compiled
 * in (-DSITE_ROTATION_INSTRUMENTED, -include syncprof/instrument.h).
 * Checks, on the per-object JSON report: the three rows of the shared lock
 * have ROUNDS acquisitions each, the 3000 locks' rows sum to 3000 x
 * PASSES with none above PASSES.  Exit 1 with a message on failure.
 */
#ifdef SITE_ROTATION_INSTRUMENTED
#define JSON_REPORT_LINKED
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_report.h"

#define ROUNDS 20000
#define MANY 3000
#define PASSES 5

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t many[MANY];
static volatile unsigned sink;

static __attribute__((noinline)) void site_a(void)
{
	pthread_mutex_lock(&shared);
	sink += 1;
	pthread_mutex_unlock(&shared);
}

static __attribute__((noinline)) void site_b(void)
{
	pthread_mutex_lock(&shared);
	sink += 2;
	pthread_mutex_unlock(&shared);
}

static __attribute__((noinline)) void site_c(void)
{
	pthread_mutex_lock(&shared);
	sink += 3;
	pthread_mutex_unlock(&shared);
}

static __attribute__((noinline)) void site_many(unsigned i)
{
	pthread_mutex_lock(&many[i]);
	sink += i;
	pthread_mutex_unlock(&many[i]);
}

/* "acquisitions" of each row of object @m, in order, into @out (at most @n). */
static int rows_of(const char *json, const void *m, long long *out, int n)
{
	int k = 0;

	for (const char *row = json_object_row(json, m); row; row = json_object_row(row + 1, m)) {
		if (k < n)
			out[k] = json_row_value(row, json_row_end(row), "acquisitions");
		k++;
	}
	return k;
}

int main(void)
{
	long long acq[8], total = 0;
	int rc = 0, n;
	char *json;

	for (int i = 0; i < MANY; i++)
		pthread_mutex_init(&many[i], NULL);
	for (int i = 0; i < ROUNDS; i++) {
		site_a();
		site_b();
		site_c();
	}
	for (int p = 0; p < PASSES; p++)
		for (unsigned i = 0, j = 0; i < MANY; i++, j = (j + 1237) % MANY)
			site_many(j);
	json = json_report("site_rotation");
	n = rows_of(json, &shared, acq, 8);
	printf("site_rotation: shared lock: %d rows:", n);
	for (int i = 0; i < n && i < 8; i++)
		printf(" %lld", acq[i]);
	printf("\n");
	if (n != 3 || acq[0] != ROUNDS || acq[1] != ROUNDS || acq[2] != ROUNDS) {
		fprintf(stderr, "site_rotation: FAIL: the shared lock's rows are not 3 x %d\n", ROUNDS);
		rc = 1;
	}
	for (int i = 0; i < MANY; i++) {
		long long a[2];

		if (rows_of(json, &many[i], a, 2) != 1 || a[0] != PASSES) {
			fprintf(stderr, "site_rotation: FAIL: lock %d of %d: %lld acquisitions, not %d\n",
				i, MANY, a[0], PASSES);
			rc = 1;
			break;
		}
		total += a[0];
	}
	printf("site_rotation: %d locks at one site: %lld acquisitions\n", MANY, total);
	free(json);
	return rc;
}
