/*
 * trace_fuzz_seed.c - writes small, valid trace files into DIR as the
 * starting corpus of fuzz_trace_reader: user events of every argument
 * count, lock events (instrumented sites), drops, two threads, lock
 * names (LOCK_NAME records: one at the file's start from the second
 * file on, one written when named, one that ends a name).
 *
 * Usage: trace_fuzz_seed DIR
 */
#include <syncprof/instrument.h>

#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *other(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "a", "b", "c", "d", "e", "f" };
	char path[4096];
	pthread_t th;

	if (argc != 2) {
		fputs("usage: trace_fuzz_seed DIR\n", stderr);
		return 2;
	}
	for (int variant = 0; variant < 3; variant++) {
		uint64_t args[6] = { 1, 2, 3, 4, 5, 6 };
		int id;

		snprintf(path, sizeof(path), "%s/seed-%d.trace", argv[1], variant);
		syncprof_trace_set_buffer_size(variant == 2 ? 256 : 4096);
		if (syncprof_trace_open(path)) {
			perror(path);
			return 1;
		}
		syncprof_enable();
		for (unsigned n = 0; n <= 6; n++) {
			char name[16];

			snprintf(name, sizeof(name), "ev%u", n);
			id = syncprof_trace_register(name, names, n);
			for (int k = 0; k < 3 + variant * 10; k++)
				syncprof_trace_emit((unsigned)id, n, args);
		}
		SYNCPROF_NAME_LOCK(&m, variant ? "seed lock, again" : "seed lock");
		if (variant == 1) {
			pthread_mutex_destroy(&m); /* the name ends at the next init */
			pthread_mutex_init(&m, NULL);
		}
		pthread_create(&th, NULL, other, NULL);
		for (int i = 0; i < 20; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		pthread_join(th, NULL);
		syncprof_disable();
		syncprof_trace_close();
	}
	return 0;
}
