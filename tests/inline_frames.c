/*
 * inline_frames.c - a lock call inside a static function that the
 * compiler inlines into a named caller, for tests/check_inline_frames.py
 * (built -O2 -g, run preloaded under 'syncprof run').
 *
 * deposit() is static and always_inline: its pthread_mutex_lock() call's
 * return address lies in depositor()'s code, and only DWARF's inline
 * records say that deposit() was inlined there.  Four depositor threads
 * hold one mutex for 2 ms each turn, so every run has waits at that site
 * (the folded output has lines for rows that waited only).  depositor()
 * is noinline: it is the named caller the reports must show as a frame.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define THREADS 4
#define TURNS 10

static pthread_mutex_t vault = PTHREAD_MUTEX_INITIALIZER;
static long balance;

static inline __attribute__((always_inline)) void deposit(long amount)
{
	pthread_mutex_lock(&vault);
	usleep(2000);
	balance += amount;
	pthread_mutex_unlock(&vault);
}

static __attribute__((noinline)) void *depositor(void *arg)
{
	for (int i = 0; i < TURNS; i++)
		deposit((long)arg);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, depositor, (void *)(i + 1));
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("inline_frames: balance %ld\n", balance);
	return balance == TURNS * (1 + 2 + 3 + 4) ? 0 : 1;
}
