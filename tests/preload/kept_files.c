/*
 * kept_files.c - the hold-state sampler's files kept open (holdstate.c,
 * kept_read()): while a hold is long, the ticker keeps its holder's
 * /proc/self/task/TID/schedstat and syscall open, at descriptors of 100
 * and up, instead of opening them at every sample.  What that could
 * break, checked here (run preloaded with hold=1):
 *   1. the files are kept: during a long hold (the main thread holds a
 *      mutex across sleeps), descriptors of 100 and up name its thread's
 *      schedstat and syscall (the test fails if the sampler opens and
 *      closes them at each sample);
 *   2. the program takes those numbers over (dup2 of a pipe's read end,
 *      holding 5 bytes, onto each) and holds a second mutex long: the
 *      sampler neither closes them nor reads them (the pipe still holds
 *      its bytes, the numbers are still the pipe's), and the second hold
 *      still gets its states (in clock_nanosleep, most of its 60 ms);
 *   3. a child of fork() holds none of the parent's kept files;
 *   4. two seconds after the last long hold, none is open.
 * Exit 1 with a message on failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json_report.h"

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what)
{
	fprintf(stderr, "kept_files: %s\n", what);
	exit(1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The descriptors (up to @max, into @fds) that name a thread's
 * schedstat or syscall file under /proc: the sampler's. */
static int task_files(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		fail("cannot list /proc/self/fd");
	while ((de = readdir(d))) {
		char path[300], target[256];
		ssize_t len;
		const char *leaf;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		leaf = strrchr(target, '/');
		if (strncmp(target, "/proc/", 6) || !strstr(target, "/task/") || !leaf ||
		    (strcmp(leaf, "/schedstat") && strcmp(leaf, "/syscall")))
			continue;
		if (n < max)
			fds[n] = atoi(de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* The nanoseconds a row of @m's spent in clock_nanosleep under its long
 * holds (its "hold_states"), from this process's report. */
static long long nanosleep_ns(pthread_mutex_t *m)
{
	char *report = json_report("kept_files");
	const char *row = json_object_row(report, m), *end, *s;
	long long ns = -1;

	if (row) {
		end = json_row_end(row);
		s = strstr(row, "\"syscall:clock_nanosleep\":");
		if (s && (!end || s < end))
			ns = atoll(s + strlen("\"syscall:clock_nanosleep\":"));
	}
	free(report);
	return ns;
}

int main(void)
{
	int fds[8], n, p[2], avail;
	pid_t child;
	int status;
	long long ns;

	/* 1: kept while the hold is long */
	pthread_mutex_lock(&first);
	sleep_ms(30);
	n = task_files(fds, 8);
	if (n < 2)
		fail("during a long hold, fewer than two task files are open: not kept");
	if (n > 8)
		fail("more than eight task files open for one holder");
	for (int i = 0; i < n; i++)
		if (fds[i] < 100)
			fail("a kept file below descriptor 100");

	/* 3: a child of fork() (while they are open) has none of them */
	child = fork();
	if (child < 0)
		fail("fork failed");
	if (!child)
		_exit(task_files(fds, 8) ? 3 : 0);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		fail("the child did not end");
	if (WEXITSTATUS(status) == 3)
		fail("a child of fork() holds the parent's kept files");
	pthread_mutex_unlock(&first);

	/* 2: the program takes the numbers over */
	if (pipe(p) || write(p[1], "bytes", 5) != 5)
		fail("cannot make a pipe");
	for (int i = 0; i < n; i++)
		if (dup2(p[0], fds[i]) != fds[i])
			fail("dup2 failed");
	pthread_mutex_lock(&second);
	sleep_ms(60);
	pthread_mutex_unlock(&second);
	for (int i = 0; i < n; i++) {
		if (fcntl(fds[i], F_GETFD) < 0)
			fail("the sampler closed a descriptor the program had taken over");
		if (ioctl(fds[i], FIONREAD, &avail) || avail != 5)
			fail("the sampler read from a descriptor the program had taken over");
	}
	ns = nanosleep_ns(&second);
	if (ns < 45000000)
		fail("the hold after the takeover got no states (clock_nanosleep under 45 of 60 ms)");
	for (int i = 0; i < n; i++)
		close(fds[i]);
	close(p[0]);
	close(p[1]);

	/* 4: closed once nobody was sampled for a second */
	sleep_ms(2000);
	if (task_files(fds, 8))
		fail("task files still open 2 s after the last long hold");
	printf("kept_files: %d files kept during the hold; the program's takeover left alone "
	       "(%lld ns in clock_nanosleep after it); none in the child; none after 2 s\n",
	       n, ns);
	return 0;
}
