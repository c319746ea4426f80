/*
 * run_offline.c - a program whose profile is the same from run to run
 * (counts, contended attempts, sites, stacks, creation sites), for
 * run_offline.sh: the report that 'syncprof run' names outside the
 * program must be the one the program would have printed.
 *
 * Nothing here depends on timing: the contended attempts are trylocks on
 * locks a helper thread holds (it took them before main goes on, told
 * through a pipe, which syncprof does not profile) and condition waits
 * whose deadline has passed; the helper is never joined (it sleeps in
 * read() when the program exits), so no join row depends on who was
 * first.  Built plain (preloaded) and with -include syncprof/instrument.h.
 *
 * Usage: run_offline [plain|fork|exec|exit]
 *   fork: a child also locks, and exits with its own report;
 *   exec: the program execs /bin/true at the end (no report of its own);
 *   exit: it ends with _exit(0) (no report).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t made;
static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int to_main[2], to_helper[2];

int early_lib_work(int n); /* early_lib.c: a site in another DSO */

static void *helper(void *arg)
{
	char c = 'x';

	(void)arg;
	pthread_mutex_lock(&held);
	pthread_rwlock_wrlock(&rw);
	if (write(to_main[1], &c, 1) != 1)
		abort();
	while (read(to_helper[0], &c, 1) < 0 && errno == EINTR)
		; /* never written: the program ends while this waits */
	return NULL;
}

__attribute__((noinline)) static void try_held(int n)
{
	for (int i = 0; i < n; i++)
		if (pthread_mutex_trylock(&held) == 0)
			abort();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void try_read(int n)
{
	for (int i = 0; i < n; i++)
		if (pthread_rwlock_tryrdlock(&rw) == 0)
			abort();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void lock_made(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&made);
		pthread_mutex_unlock(&made);
	}
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void wait_past(int n)
{
	struct timespec past = { 1, 0 }; /* 1970: the deadline has passed */

	pthread_mutex_lock(&cm);
	for (int i = 0; i < n; i++)
		if (pthread_cond_timedwait(&cv, &cm, &past) != ETIMEDOUT)
			abort();
	pthread_mutex_unlock(&cm);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void work(void)
{
	try_held(5);
	try_read(3);
	lock_made(7);
	wait_past(2);
	early_lib_work(11);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	pthread_t t;
	char c;

	if (pipe(to_main) || pipe(to_helper) || pthread_mutex_init(&made, NULL) ||
	    pthread_create(&t, NULL, helper, NULL))
		return 1;
	while (read(to_main[0], &c, 1) < 0 && errno == EINTR)
		;
	work();
	if (!strcmp(mode, "fork")) {
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			lock_made(3);
			exit(0);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status)
			return 1;
	} else if (!strcmp(mode, "exec")) {
		execl("/bin/true", "true", (char *)NULL);
		return 1;
	} else if (!strcmp(mode, "exit")) {
		_exit(0);
	}
	printf("run_offline: %s done\n", mode);
	return 0;
}
