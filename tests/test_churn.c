/*
 * test_churn.c - thousands of short-lived threads: every acquisition they
 * made is still counted after they exit (folded into the retired
 * aggregate), the registry holds only live threads, and the process's
 * memory does not grow with the number of threads that came and went.
 *
 * Usage: test_churn [THREADS]   (default 3000)
 */
#include <pthread.h>
#include <unistd.h>

#include "harness.h"
#include "runtime/runtime.h"
#include "report/profile.h"
#include "report_util.h"

#define OPS 50
#define BATCH 8

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t own[BATCH];

static void *short_lived(void *arg)
{
	unsigned i = (unsigned)(unsigned long)arg;

	for (int k = 0; k < OPS; k++) {
		syncprof_mutex_lock(&shared, "/churn/a.c", 1, "short_lived");
		syncprof_mutex_unlock(&shared, "/churn/a.c", 1, "short_lived");
		syncprof_mutex_lock(&own[i % BATCH], "/churn/b.c", 2, "short_lived");
		syncprof_mutex_unlock(&own[i % BATCH], "/churn/b.c", 2, "short_lived");
	}
	if (i % 2)
		pthread_exit(NULL); /* the other way out */
	return NULL;
}

static long vm_kib(void)
{
	char *s = t_slurp_file("/proc/self/status");
	char *p = s ? strstr(s, "VmSize:") : NULL;
	long v = p ? atol(p + 7) : -1;

	free(s);
	return v;
}

static void run(unsigned from, unsigned to)
{
	for (unsigned i = from; i < to; i += BATCH) {
		pthread_t th[BATCH];

		for (unsigned j = 0; j < BATCH; j++)
			T_ASSERT_INT(pthread_create(&th[j], NULL, short_lived,
						    (void *)(unsigned long)(i + j)),
				     ==, 0);
		for (unsigned j = 0; j < BATCH; j++)
			pthread_join(th[j], NULL);
	}
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 3000;
	struct syncprof_report_options o;
	struct sp_rows rows;
	uint64_t a = 0, b = 0;
	long vm_warm, vm_end;

	n -= n % BATCH;
	for (int i = 0; i < BATCH; i++)
		pthread_mutex_init(&own[i], NULL);
	unsigned warm = n / 4 - (n / 4) % BATCH;

	syncprof_enable();
	run(0, warm);
	vm_warm = vm_kib();
	run(warm, n);
	vm_end = vm_kib();

	T_ASSERT_UINT(sp_registry_thread_count(), <=, 1);
	syncprof_report_options_init(&o);
	o.coalesce = 0;
	T_ASSERT_INT(t_report_rows(&rows, &o), ==, 0);
	for (size_t i = 0; i < rows.n; i++) {
		if (rows.v[i].file && !strcmp(rows.v[i].file, "/churn/a.c"))
			a += rows.v[i].acquisitions;
		if (rows.v[i].file && !strcmp(rows.v[i].file, "/churn/b.c"))
			b += rows.v[i].acquisitions;
	}
	T_ASSERT_UINT(a, ==, (uint64_t)n * OPS);
	T_ASSERT_UINT(b, ==, (uint64_t)n * OPS);
	T_ASSERT_UINT(rows.n, ==, 1 + BATCH);
	sp_rows_free(&rows);
	/* 3/4 of the threads came and went after the warm-up: memory must not
	 * follow them (each thread's record is unmapped at its exit). */
	printf("test_churn: %u threads, VmSize %ld KiB after %u, %ld KiB after all\n", n, vm_warm,
	       warm, vm_end);
	T_ASSERT_INT(vm_end - vm_warm, <, 4096);
	T_ASSERT_UINT(syncprof_lost_events(), ==, 0);
	puts("test_churn: ok");
	return 0;
}
