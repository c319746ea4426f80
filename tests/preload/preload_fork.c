/*
 * preload_fork.c - fork() with and without exec under the preload, while
 * other threads lock and new threads register (the registry lock must not
 * be inherited locked).  With output=...%p in SYNCPROF_OPTIONS (set by
 * CTest) every process writes its own report at exit: the test checks
 * that each child's report exists and names the child's own call site.
 */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "preload_util.h"

static pthread_mutex_t busy = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t child_lock = PTHREAD_MUTEX_INITIALIZER;
static int stop;

static void *hammer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&busy);
		pthread_mutex_unlock(&busy);
	}
	return NULL;
}

static void *hammer_once(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&busy);
	pthread_mutex_unlock(&busy);
	return NULL;
}

static void *churn(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_t t;

		if (!pthread_create(&t, NULL, hammer_once, NULL))
			pthread_join(t, NULL);
	}
	return NULL;
}

static void *child_work_thread(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&child_lock);
	pthread_mutex_unlock(&child_lock);
	return NULL;
}

static __attribute__((noinline)) void child_work(void)
{
	pthread_t t;

	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&child_lock);
		pthread_mutex_unlock(&child_lock);
	}
	/* Threads work in the child too. */
	T_ASSERT_INT(pthread_create(&t, NULL, child_work_thread, NULL), ==, 0);
	pthread_join(t, NULL);
}

/* Report file name of @pid, from output=PATTERN in SYNCPROF_OPTIONS. */
static void report_path(pid_t pid, char *buf, size_t size)
{
	const char *o = getenv("SYNCPROF_OPTIONS");
	const char *p = o ? strstr(o, "output=") : NULL;
	char pattern[512];
	size_t n;
	char *pp;

	T_ASSERT(p != NULL);
	p += 7;
	n = strcspn(p, ",");
	snprintf(pattern, sizeof(pattern), "%.*s", (int)n, p);
	pp = strstr(pattern, "%p");
	T_ASSERT(pp != NULL);
	*pp = '\0';
	snprintf(buf, size, "%s%d%s", pattern, (int)pid, pp + 2);
}

static void check_report(pid_t pid, const char *needle)
{
	char path[600];
	char *text;

	report_path(pid, path, sizeof(path));
	text = t_slurp_file(path);
	if (!text)
		T_FAIL("no report %s for child %d", path, (int)pid);
	T_ASSERT_CONTAINS(text, needle);
	free(text);
	unlink(path);
}

int main(int argc, char **argv)
{
	pthread_t h[2];
	pid_t kids[40];
	int n_kids = 0;

	t_require_preload();
	if (argc > 1 && !strcmp(argv[1], "exec-child")) {
		child_work();
		return 0;
	}
	for (int i = 0; i < 2; i++)
		T_ASSERT_INT(pthread_create(&h[i], NULL, i ? churn : hammer, NULL), ==, 0);
	for (int i = 0; i < 40; i++) {
		pid_t pid = fork();

		T_ASSERT(pid >= 0);
		if (pid == 0) {
			if (i % 2) {
				execl("/proc/self/exe", argv[0], "exec-child", (char *)NULL);
				_exit(126);
			}
			child_work();
			exit(0);
		}
		kids[n_kids++] = pid;
	}
	for (int i = 0; i < n_kids; i++) {
		int status;

		T_ASSERT_INT(waitpid(kids[i], &status, 0), ==, kids[i]);
		T_ASSERT(WIFEXITED(status));
		T_ASSERT_INT(WEXITSTATUS(status), ==, 0);
		check_report(kids[i], "child_work");
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(h[i], NULL);
	puts("preload_fork: ok");
	return 0;
}
