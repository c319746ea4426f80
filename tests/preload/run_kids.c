/*
 * run_kids.c - a small program that waits for a lock at a known line, for
 * run_kids.sh: 'syncprof run' names and renders the reports of every
 * process under it, not only the program's.
 *
 * A helper thread takes the lock and holds it while main's trylock fails
 * (told through a pipe, which syncprof does not profile): one contended
 * attempt at WAIT_SITE's line, every run, with no timing involved.  Built
 * twice, with WAIT_SITE named site_alpha and site_beta and the code of
 * the second moved by a padding function, so that an address of one
 * build names another function, or none, in the other: a report named
 * from the wrong build shows it.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#ifndef WAIT_SITE
#define WAIT_SITE site_alpha
#endif

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int to_main[2], to_helper[2];

static void *helper(void *arg)
{
	char c = 'x';

	(void)arg;
	pthread_mutex_lock(&m);
	if (write(to_main[1], &c, 1) != 1 || read(to_helper[0], &c, 1) != 1)
		return NULL;
	pthread_mutex_unlock(&m);
	return NULL;
}

#ifdef PADDING
/* moves what follows: the two builds' addresses differ */
__attribute__((noinline, used)) int padding(volatile int *p)
{
	for (int i = 0; i < 64; i++)
		p[i & 7] += i * p[(i + 3) & 7];
	return p[1] * p[2] - p[3] / (p[4] | 1) + p[5] % (p[6] | 1);
}
#endif

__attribute__((noinline)) static int WAIT_SITE(void)
{
	return pthread_mutex_trylock(&m);
}

int main(void)
{
	pthread_t th;
	char c = 'x';
	int rc;

	if (pipe(to_main) || pipe(to_helper) || pthread_create(&th, NULL, helper, NULL) ||
	    read(to_main[0], &c, 1) != 1)
		return 1;
	rc = WAIT_SITE(); /* held by the helper: busy */
	if (write(to_helper[1], &c, 1) != 1 || pthread_join(th, NULL))
		return 1;
	return rc ? 0 : 1;
}
