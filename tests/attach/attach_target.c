/*
 * attach_target.c - a lock-heavy program for 'syncprof attach' tests
 * (attach.sh): it was not started for syncprof, runs until told to stop,
 * and checks its own locks' results.
 *
 * Threads: NT workers increment a counter under a mutex (and sometimes
 * with trylock), readers and writers share a pair under a rwlock (a
 * writer keeps the two equal), and a producer/consumer pair hands tokens
 * over with a condition variable.  stdin drives it, one command a line:
 *   status  -> "got=libc" when this program's GOT slot of
 *              pthread_mutex_lock holds libc's function, "got=other"
 *              when something (attach) redirected it;
 *   fork    -> fork a child that reports on itself ("child got=libc",
 *              "child profiling off": no syncprof library in it, or its
 *              syncprof__enabled without the profiling bit), locks a
 *              mutex from two threads, checks the count and exits with
 *              status 5; the parent waits and prints "child exited 5";
 *   quit    -> stop, join, check, print the deterministic results and
 *              exit with status 7.
 * The output of a run does not depend on timing, so a run with attach
 * must print exactly what a run without attach prints.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NT 4
#define NR 2

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long counter, per_thread[NT], pair_a, pair_b, torn, tokens, sent, received;
static int stop;

static void *worker_mutex(void *arg)
{
	unsigned long *mine = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if ((*mine & 7) == 0 && pthread_mutex_trylock(&mu) == 0) {
			counter++;
			(*mine)++;
			pthread_mutex_unlock(&mu);
			continue;
		}
		pthread_mutex_lock(&mu);
		counter++;
		(*mine)++;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *worker_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_rwlock_rdlock(&rw);
		if (pair_a != pair_b)
			__atomic_add_fetch(&torn, 1, __ATOMIC_RELAXED);
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *worker_writer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_rwlock_wrlock(&rw);
		pair_a++;
		pair_b++;
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *producer(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&cmu);
		while (tokens && !stop)
			pthread_cond_wait(&cv, &cmu);
		if (stop) {
			pthread_mutex_unlock(&cmu);
			return NULL;
		}
		tokens = 1;
		sent++;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&cmu);
	}
}

static void *consumer(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&cmu);
		while (!tokens && !stop)
			pthread_cond_wait(&cv, &cmu);
		if (tokens) {
			tokens = 0;
			received++;
			pthread_cond_broadcast(&cv);
		}
		if (stop) {
			pthread_mutex_unlock(&cmu);
			return NULL;
		}
		pthread_mutex_unlock(&cmu);
	}
}

/* "libc" when this program's GOT slot of pthread_mutex_lock is libc's. */
static const char *got_owner(void)
{
	/* PIE code takes an imported function's address from its GOT. */
	void *got = (void *)pthread_mutex_lock;
	void *libc = dlsym(RTLD_NEXT, "pthread_mutex_lock");

	return got == libc ? "libc" : "other";
}

/* The path of a loaded syncprof library (attach loads it), or NULL. */
static int find_syncprof(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libsyncprof")) {
		*(const char **)arg = info->dlpi_name;
		return 1;
	}
	return 0;
}

static const char *child_profiling(void)
{
	const char *path = NULL;
	void *h;
	int *flags;

	dl_iterate_phdr(find_syncprof, &path);
	if (!path)
		return "off";
	h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	flags = h ? dlsym(h, "syncprof__enabled") : NULL;
	if (!flags)
		return "unknown";
	return *flags & 1 /* SYNCPROF__PROFILING */ ? "on" : "off";
}

static pthread_mutex_t child_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long child_counter;

static void *child_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100000; i++) {
		pthread_mutex_lock(&child_mu);
		child_counter++;
		pthread_mutex_unlock(&child_mu);
	}
	return NULL;
}

/* The child of "fork": output and exit status that do not depend on
 * whether the parent was attached to, when attach leaves children alone. */
static void forked_child(void)
{
	pthread_t t[2];

	printf("child got=%s\n", got_owner());
	printf("child profiling %s\n", child_profiling());
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, child_worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("child counter %s\n", child_counter == 200000 ? "consistent" : "WRONG");
	fflush(stdout);
	_exit(5);
}

int main(void)
{
	pthread_t th[NT + NR + 3];
	char line[64];
	int n = 0;
	unsigned long sum = 0;

	for (int i = 0; i < NT; i++)
		pthread_create(&th[n++], NULL, worker_mutex, &per_thread[i]);
	for (int i = 0; i < NR; i++)
		pthread_create(&th[n++], NULL, worker_reader, NULL);
	pthread_create(&th[n++], NULL, worker_writer, NULL);
	pthread_create(&th[n++], NULL, producer, NULL);
	pthread_create(&th[n++], NULL, consumer, NULL);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "status\n")) {
			printf("got=%s\n", got_owner());
			fflush(stdout);
		} else if (!strcmp(line, "fork\n")) {
			pid_t child;
			int status = 0;

			fflush(stdout);
			child = fork();
			if (child == 0)
				forked_child();
			if (child < 0 || waitpid(child, &status, 0) != child)
				printf("fork failed\n");
			else
				printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status)
									: -1);
			fflush(stdout);
		} else if (!strcmp(line, "quit\n")) {
			break;
		}
	}
	pthread_mutex_lock(&cmu);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&cmu);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NT; i++)
		sum += per_thread[i];
	printf("mutex counter %s\n", sum == counter ? "consistent" : "WRONG");
	printf("rwlock pairs %s\n", !torn && pair_a == pair_b ? "consistent" : "WRONG");
	printf("condvar tokens %s\n",
	       sent == received || sent == received + 1 ? "consistent" : "WRONG");
	return 7;
}
