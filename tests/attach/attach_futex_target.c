/*
 * attach_futex_target.c - a program started without syncprof whose
 * threads wait where pthread is never called: on a futex lock of its own
 * through libc's syscall(SYS_futex) (as Rust std, parking_lot and Abseil
 * do), and on a stdio FILE lock inside fprintf() (glibc's internal lock,
 * __lll_lock_wait_private).  A holder thread keeps each lock 20 ms at a
 * time, sleeping inside; two threads take both in a loop.  Every
 * syscall() result is checked (0, or EAGAIN when the word changed first).
 * Prints "ready", runs until "quit" on stdin, then prints
 * "done LOCKS errors N" and exits 0 (1 with errors).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static uint32_t word; /* 0 free, 1 locked, 2 locked with waiters */
static int stop, errors;
static long locks;
static FILE *out;

static __attribute__((noinline)) void word_lock(void)
{
	uint32_t c = 0;

	if (__atomic_compare_exchange_n(&word, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&word, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		long rc = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0); /* LINE_FUTEX */

		if (rc != 0 && errno != EAGAIN && errno != EINTR)
			__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
		c = __atomic_exchange_n(&word, 2, __ATOMIC_ACQUIRE);
	}
}

static __attribute__((noinline)) void word_unlock(void)
{
	if (__atomic_exchange_n(&word, 0, __ATOMIC_RELEASE) == 2 &&
	    syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) < 0)
		__atomic_add_fetch(&errors, 1, __ATOMIC_RELAXED);
}

static void *holder(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		word_lock();
		usleep(20000);
		word_unlock();
		flockfile(out);
		usleep(20000);
		funlockfile(out);
		usleep(2000);
	}
	return NULL;
}

static void *taker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		word_lock();
		word_unlock();
		fprintf(out, "line\n"); /* LINE_STDIO */
		__atomic_add_fetch(&locks, 1, __ATOMIC_RELAXED);
		usleep(1000);
	}
	return NULL;
}

int main(void)
{
	pthread_t h, t[2];
	char line[64];

	out = fopen("/dev/null", "w");
	if (!out)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_create(&h, NULL, holder, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, taker, NULL);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "quit", 4))
		;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(h, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	fclose(out);
	printf("done %ld errors %d\n", locks, errors);
	return errors ? 1 : 0;
}
