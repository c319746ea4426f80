/*
 * preload_exit.c - programs that end abnormally or while threads still
 * lock must end as they would without the profiler, and never hang:
 *   _exit() with threads locking (no report, exit status kept);
 *   SIGKILL and SIGTERM deaths (no report, the signal kept);
 *   exit() while threads contend (the report runs concurrently with them);
 *   exit() while a thread is blocked forever on a mutex main holds;
 *   abort() (SIGABRT kept).
 * Each case runs in a child (this program re-executed with the case name);
 * the parent fails if a child does not end within 30 s.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload_util.h"

static pthread_mutex_t locks[4] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
				    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *hammer(void *arg)
{
	unsigned i = (unsigned)(long)arg;

	for (;;) {
		pthread_mutex_t *m = &locks[i++ % 4];

		pthread_mutex_lock(m);
		if (i % 64 == 0) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			pthread_cond_timedwait(&cv, m, &ts);
		}
		pthread_mutex_unlock(m);
	}
	return NULL;
}

static void *blocked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&locks[0]); /* main holds it and never lets go */
	return NULL;
}

static void start_hammers(void)
{
	for (long i = 0; i < 3; i++) {
		pthread_t t;

		T_ASSERT_INT(pthread_create(&t, NULL, hammer, (void *)i), ==, 0);
	}
	usleep(100000);
}

static int child(const char *mode)
{
	if (!strcmp(mode, "_exit")) {
		start_hammers();
		_exit(7);
	}
	if (!strcmp(mode, "kill")) {
		start_hammers();
		raise(SIGKILL);
	}
	if (!strcmp(mode, "term")) {
		start_hammers();
		raise(SIGTERM);
	}
	if (!strcmp(mode, "abort")) {
		start_hammers();
		abort();
	}
	if (!strcmp(mode, "exit")) {
		start_hammers();
		exit(5);
	}
	if (!strcmp(mode, "exit_blocked")) {
		pthread_t t;

		pthread_mutex_lock(&locks[0]);
		T_ASSERT_INT(pthread_create(&t, NULL, blocked, NULL), ==, 0);
		usleep(100000);
		exit(6);
	}
	T_FAIL("unknown mode %s", mode);
}

static void run_case(const char *self, const char *mode, int want_exit, int want_sig)
{
	pid_t pid = fork();
	int status = 0;

	T_ASSERT(pid >= 0);
	if (pid == 0) {
		execl(self, self, mode, (char *)NULL);
		_exit(126);
	}
	for (int waited = 0;; waited++) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (waited > 3000) {
			kill(pid, SIGKILL);
			T_FAIL("case %s: the program hung", mode);
		}
		usleep(10000);
	}
	if (want_sig) {
		if (!WIFSIGNALED(status))
			T_FAIL("case %s: status %#x, expected death by signal %d", mode, status,
			       want_sig);
		T_ASSERT_INT(WTERMSIG(status), ==, want_sig);
	} else {
		if (!WIFEXITED(status))
			T_FAIL("case %s: status %#x, expected exit %d", mode, status, want_exit);
		T_ASSERT_INT(WEXITSTATUS(status), ==, want_exit);
	}
	printf("preload_exit: %s ok\n", mode);
}

int main(int argc, char **argv)
{
	char self[4096];
	ssize_t n;

	t_require_preload();
	if (argc > 1)
		return child(argv[1]);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_ASSERT(n > 0);
	self[n] = '\0';
	run_case(self, "_exit", 7, 0);
	run_case(self, "kill", 0, SIGKILL);
	run_case(self, "term", 0, SIGTERM);
	run_case(self, "abort", 0, SIGABRT);
	run_case(self, "exit", 5, 0);
	run_case(self, "exit_blocked", 6, 0);
	return 0;
}
