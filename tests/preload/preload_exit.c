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
 *
 * The control socket (control.c), in a directory of this test's own: a
 * child that ends by exit(), _exit() or _Exit() - also from a signal
 * handler - leaves none behind (dash ends every 'sh -c' with _exit(); each
 * left a socket file before).  A vfork child's _exit() does not remove its
 * parent's.  The socket cases wait for the socket to exist first.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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

/* The control socket of process @pid in @dir. */
static void sock_path(char *buf, size_t size, const char *dir, pid_t pid)
{
	snprintf(buf, size, "%s/%d.sock", dir, (int)pid);
}

/* This process's socket, once its helper thread has made it (5 s at most). */
static void wait_own_socket(void)
{
	char path[512];
	struct stat st;

	sock_path(path, sizeof(path), getenv("SYNCPROF_CONTROL_DIR"), getpid());
	for (int i = 0; stat(path, &st); i++) {
		if (i > 500)
			T_FAIL("no control socket %s after 5 s", path);
		usleep(10000);
	}
}

static void exit_in_handler(int sig)
{
	(void)sig;
	_exit(9);
}

static int child(const char *mode)
{
	if (!strcmp(mode, "_exit_handler")) {
		start_hammers();
		wait_own_socket();
		signal(SIGUSR1, exit_in_handler);
		raise(SIGUSR1);
		T_FAIL("the handler returned");
	}
	if (!strcmp(mode, "vfork")) {
		char path[512];
		struct stat st;
		pid_t pid;
		int status;

		start_hammers();
		wait_own_socket();
		pid = vfork();
		if (pid == 0)
			_exit(0); /* the socket is the parent's, not this pid's */
		T_ASSERT(pid > 0);
		T_ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
		sock_path(path, sizeof(path), getenv("SYNCPROF_CONTROL_DIR"), getpid());
		if (stat(path, &st))
			T_FAIL("a vfork child's _exit() removed its parent's socket %s", path);
		_exit(10);
	}
	if (!strcmp(mode, "_exit") || !strcmp(mode, "_Exit")) {
		start_hammers();
		wait_own_socket();
		if (mode[1] == 'E')
			_Exit(8);
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
		wait_own_socket();
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

static char sock_dir[256];
/* The children's environment: this one's and SYNCPROF_CONTROL_DIR, which
 * this process does not get (its own helper thread may be making its
 * socket, from the environment, at any time). */
static char **child_env;

static void child_env_make(void)
{
	extern char **environ;
	static char dir_var[300];
	size_t n = 0;

	while (environ[n])
		n++;
	child_env = calloc(n + 2, sizeof(*child_env));
	T_ASSERT(child_env != NULL);
	for (size_t i = 0, k = 0; i < n; i++)
		if (strncmp(environ[i], "SYNCPROF_CONTROL_DIR=", 21))
			child_env[k++] = environ[i];
	snprintf(dir_var, sizeof(dir_var), "SYNCPROF_CONTROL_DIR=%s", sock_dir);
	for (n = 0; child_env[n]; n++)
		;
	child_env[n] = dir_var;
}

static void run_case(const char *self, const char *mode, int want_exit, int want_sig)
{
	char path[512];
	struct stat st;
	pid_t pid = fork();
	int status = 0;

	T_ASSERT(pid >= 0);
	if (pid == 0) {
		execle(self, self, mode, (char *)NULL, child_env);
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
	/* Killed, a process leaves its socket ('ctl --list' removes it). */
	sock_path(path, sizeof(path), sock_dir, pid);
	if (want_sig)
		unlink(path);
	else if (!stat(path, &st))
		T_FAIL("case %s: the control socket %s was left behind", mode, path);
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
	/* The children's sockets, here (control=1: the preload's default). */
	snprintf(sock_dir, sizeof(sock_dir), "%s/preload_exit.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	T_ASSERT(mkdtemp(sock_dir) != NULL);
	child_env_make();
	run_case(self, "_exit", 7, 0);
	run_case(self, "_Exit", 8, 0);
	run_case(self, "_exit_handler", 9, 0);
	run_case(self, "vfork", 10, 0);
	run_case(self, "kill", 0, SIGKILL);
	run_case(self, "term", 0, SIGTERM);
	run_case(self, "abort", 0, SIGABRT);
	run_case(self, "exit", 5, 0);
	run_case(self, "exit_blocked", 6, 0);
	if (rmdir(sock_dir))
		T_FAIL("%s not empty: %s", sock_dir, strerror(errno));
	return 0;
}
