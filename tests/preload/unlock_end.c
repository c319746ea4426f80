/*
 * unlock_end.c - a hold ends at the unlock call, not at its return
 * (issue 25 part 3: the pop waits until after the real unlock, the clock
 * of a timed release is read before it; hold.h, sp_hold_release_begin()).
 *
 * Run preloaded with slow_unlock.c behind libsyncprof-preload.so, whose
 * real unlock returns SLOW_UNLOCK_MS (30) late for one mutex: the program
 * holds that mutex HOLDS times for HOLD_US each, measured by itself from
 * the return of the lock call to the unlock call, and checks the JSON
 * report's row of the mutex:
 *   - hold_max_ns is under half the late return (a clock read after the
 *     unlock would put 30 ms in each timed hold);
 *   - with every hold timed (hold_sample=1, argument "all"), hold_ns is
 *     at least the program's own sum (no hold lost, none cut short);
 *   - the thread's list is empty again: a second mutex taken and released
 *     afterwards is released on the inlined pop's terms (its row has its
 *     holds), and the unlock's return values are the real ones (0).
 * Exit 1 with a message on failure.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_report.h"
#include "../now_ns.h"

#define HOLDS 5
#define HOLD_US 2000

static pthread_mutex_t slow = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t after = PTHREAD_MUTEX_INITIALIZER;

/* The row of object @m in @json, and its end. */
static const char *row_of(const char *json, const pthread_mutex_t *m, const char **end)
{
	const char *at = json_object_row(json, m);

	if (at)
		*end = json_row_end(at);
	return at;
}

int main(int argc, char **argv)
{
	void (*target)(pthread_mutex_t *) =
		(void (*)(pthread_mutex_t *))dlsym(RTLD_DEFAULT, "slow_unlock_target");
	int all = argc > 1 && !strcmp(argv[1], "all"), rc = 0;
	unsigned long long own = 0, max_ok = 15000000ull;
	const char *row, *end = NULL;
	char *json;

	if (!target) {
		fprintf(stderr, "unlock_end: run with LD_PRELOAD=libsyncprof-preload.so:libslow_unlock.so\n");
		return 1;
	}
	target(&slow);
	for (int i = 0; i < HOLDS; i++) {
		unsigned long long t0, t1;

		pthread_mutex_lock(&slow);
		t0 = now_ns();
		do
			t1 = now_ns();
		while (t1 - t0 < HOLD_US * 1000ull);
		own += t1 - t0;
		rc |= pthread_mutex_unlock(&slow);
	}
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&after);
		rc |= pthread_mutex_unlock(&after);
	}
	if (rc) {
		fprintf(stderr, "unlock_end: FAIL: an unlock returned %d\n", rc);
		return 1;
	}
	json = json_report("unlock_end");
	if (!(row = row_of(json, &slow, &end))) {
		fprintf(stderr, "unlock_end: FAIL: no row for the slow mutex\n");
		return 1;
	}
	{
		long long max = json_row_value(row, end, "hold_max_ns"), ns = json_row_value(row, end, "hold_ns");

		printf("unlock_end: %d holds of %d us, own sum %llu ns; syncprof hold_ns %lld, "
		       "hold_max_ns %lld\n", HOLDS, HOLD_US, own, ns, max);
		if (max < 0 || (unsigned long long)max > max_ok) {
			fprintf(stderr, "unlock_end: FAIL: hold_max_ns %lld: the late return "
					"of the unlock was counted as held\n", max);
			rc = 1;
		}
		if (all && (ns < 0 || (unsigned long long)ns < own)) {
			fprintf(stderr, "unlock_end: FAIL: hold_ns %lld below the program's own "
					"%llu with every hold timed\n", ns, own);
			rc = 1;
		}
	}
	if (!(row = row_of(json, &after, &end)) || json_row_value(row, end, "holds") != 100) {
		fprintf(stderr, "unlock_end: FAIL: the second mutex's row has %lld holds, not 100\n",
			row ? json_row_value(row, end, "holds") : -1);
		rc = 1;
	}
	free(json);
	return rc;
}
