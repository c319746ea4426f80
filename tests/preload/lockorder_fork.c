/*
 * lockorder_fork.c - the CFI learner after fork() (record/cfi.c): under
 * lock_order=1 with frames=N, the stacks of new lock-order edges are
 * walked through rules that a learner thread ("syncprof-cfi") learns.  A
 * child of fork() has none of the parent's threads; it must start its
 * own learner when it walks, or its edges' stacks would unwind for ever
 * and its requests would wait for a thread that is not there.
 *
 * The parent takes enough new lock pairs for its learner to be asked
 * (cfi.c asks after 64 unwound captures) and waits until that thread
 * runs; then it forks, and the child takes new pairs of its own and
 * looks for a learner thread among its threads.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "preload_util.h"

#define LOCKS 256

static pthread_mutex_t locks[LOCKS];

/* Nested acquisitions of pairs (i, i + step): new lock-order edges. */
static void take_pairs(int first, int last, int step)
{
	for (int i = first; i < last && i + step < LOCKS; i++) {
		pthread_mutex_lock(&locks[i]);
		pthread_mutex_lock(&locks[i + step]);
		pthread_mutex_unlock(&locks[i + step]);
		pthread_mutex_unlock(&locks[i]);
	}
}

/* Whether a thread of this process is named @name. */
static int has_thread(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		found = !strcmp(comm, name);
	}
	closedir(d);
	return found;
}

/* Take new pairs until the learner runs, 5 s at most. */
static int learner_appears(int step)
{
	const struct timespec ms = { 0, 1000 * 1000 };

	for (int round = 0; round < 5000; round++) {
		if (has_thread("syncprof-cfi"))
			return 1;
		if (round < LOCKS)
			take_pairs(round, round + 1, step);
		nanosleep(&ms, NULL);
	}
	return 0;
}

int main(void)
{
	pid_t pid;
	int status;

	t_require_preload();
	for (int i = 0; i < LOCKS; i++)
		pthread_mutex_init(&locks[i], NULL);
	take_pairs(0, LOCKS, 1);
	if (!learner_appears(2))
		T_FAIL("the parent has no syncprof-cfi thread (lock_order=1, frames=N?)");
	pid = fork();
	T_ASSERT(pid >= 0);
	if (!pid) {
		if (has_thread("syncprof-cfi")) {
			fprintf(stderr, "child: a learner thread before any walk\n");
			_exit(2);
		}
		if (!learner_appears(3)) {
			fprintf(stderr, "child: no syncprof-cfi thread after its new edges\n");
			_exit(1);
		}
		_exit(0);
	}
	T_ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
	T_ASSERT(WIFEXITED(status));
	T_ASSERT_INT(WEXITSTATUS(status), ==, 0);
	puts("lockorder_fork: the child started its own learner");
	return 0;
}
