/*
 * reportbench.c - how long a report takes over a large profile.
 *
 * Fills the tables with ENTRIES distinct (call site, object) entries spread
 * over THREADS threads (1000 sites x ENTRIES/1000 objects), then times
 * syncprof_report() to /dev/null, coalesced and not, all rows and the top
 * 20, table and JSON, and a reset.  The goal: a report over 1M entries in
 * <= 1 s, coalesced and top N (issue 14 part 4).
 *
 * Usage: reportbench [ENTRIES [THREADS]]   (default 1000000 and 4)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "syncprof.h"

#define N_SITES 1000

static char site_names[N_SITES][32];
static pthread_mutex_t *objs;
static unsigned n_objs, n_threads;

static void *fill(void *arg)
{
	unsigned id = (unsigned)(unsigned long)arg;

	for (unsigned s = id; s < N_SITES; s += n_threads)
		for (unsigned o = 0; o < n_objs; o++) {
			syncprof_mutex_lock(&objs[o], site_names[s], (int)s + 1, "fill");
			pthread_mutex_unlock(&objs[o]);
		}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void timed_report(FILE *devnull, int coalesce, enum syncprof_format f, unsigned top)
{
	struct syncprof_report_options o;
	double t0;
	int rc;

	syncprof_report_options_init(&o);
	o.coalesce = coalesce;
	o.format = f;
	o.top = top;
	t0 = now_s();
	rc = syncprof_report(devnull, &o);
	printf("report %-5s %-12s %-7s %8.3f s%s\n", f == SYNCPROF_FORMAT_JSON ? "json" : "table",
	       coalesce ? "coalesced" : "per object", top ? "top 20" : "all", now_s() - t0,
	       rc ? "  (FAILED)" : "");
}

int main(int argc, char **argv)
{
	unsigned entries = argc > 1 ? (unsigned)atoi(argv[1]) : 1000000;
	pthread_t th[64];
	FILE *devnull = fopen("/dev/null", "w");
	double t0;

	n_threads = argc > 2 ? (unsigned)atoi(argv[2]) : 4;
	if (!devnull || entries < N_SITES || !n_threads || n_threads > 64) {
		fputs("usage: reportbench [ENTRIES>=1000 [THREADS 1..64]]\n", stderr);
		return 2;
	}
	n_objs = entries / N_SITES;
	objs = calloc(n_objs, sizeof(*objs));
	for (unsigned i = 0; i < n_objs; i++)
		pthread_mutex_init(&objs[i], NULL);
	for (unsigned i = 0; i < N_SITES; i++)
		snprintf(site_names[i], sizeof(site_names[i]), "/bench/site%04u.c", i);
	syncprof_enable();
	t0 = now_s();
	for (unsigned i = 0; i < n_threads; i++)
		pthread_create(&th[i], NULL, fill, (void *)(unsigned long)i);
	for (unsigned i = 0; i < n_threads; i++)
		pthread_join(th[i], NULL);
	syncprof_disable();
	printf("reportbench: %u entries (%u sites x %u objects) over %u threads, filled in %.3f s\n",
	       N_SITES * n_objs, N_SITES, n_objs, n_threads, now_s() - t0);
	timed_report(devnull, 1, SYNCPROF_FORMAT_TABLE, 0);
	timed_report(devnull, 1, SYNCPROF_FORMAT_TABLE, 20);
	timed_report(devnull, 0, SYNCPROF_FORMAT_TABLE, 20);
	timed_report(devnull, 0, SYNCPROF_FORMAT_TABLE, 0);
	timed_report(devnull, 0, SYNCPROF_FORMAT_JSON, 0);
	t0 = now_s();
	syncprof_reset();
	printf("reset                             %8.3f s\n", now_s() - t0);
	timed_report(devnull, 0, SYNCPROF_FORMAT_TABLE, 0);
	return 0;
}
