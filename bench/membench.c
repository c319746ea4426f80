/*
 * membench.c - what profiling a program with many locks costs in memory.
 *
 * Locks N distinct mutexes (default 1,000,000) once each from one thread,
 * at one call site, and prints the resident set size before and after,
 * and the difference per lock.  The same loop runs twice: with the
 * mutexes' own memory touched first (so the first run's growth is the
 * program's own), then profiled.  Built twice: instrumented (the profiled
 * entries of libsyncprof) and plain (run it under the preload library).
 *
 * Usage: membench [N]
 *   SYNCPROF_OPTIONS=enabled=1,report_at_exit=0 build/bench/membench
 *   LD_PRELOAD=build/libsyncprof-preload.so SYNCPROF_OPTIONS=report_at_exit=0 \
 *     build/bench/membench_plain
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, before, after;
	pthread_mutex_t *m = calloc((size_t)n, sizeof(*m));

	if (!m || n <= 0)
		return 1;
	for (long i = 0; i < n; i++) /* the program's own memory, resident */
		pthread_mutex_init(&m[i], NULL);
	before = rss_kb();
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m[i]);
		pthread_mutex_unlock(&m[i]);
	}
	after = rss_kb();
	printf("membench: %ld locks: RSS %ld -> %ld KiB, %.1f bytes per lock\n", n, before, after,
	       (double)(after - before) * 1024 / (double)n);
	free(m);
	return 0;
}
