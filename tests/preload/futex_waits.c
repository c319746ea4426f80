/*
 * futex_waits.c - a lock of the test's own that waits through libc's
 * syscall(SYS_futex), as Rust std, parking_lot and Abseil do: a holder
 * thread keeps it for 4 x 60 ms (sleeping inside) while 3 threads take it;
 * each waiter measures its own waits around its lock calls.  Then the
 * calls whose results the interposer must not change: a wait on a word
 * that changed (EAGAIN), a bad address (EFAULT), a bad op (ENOSYS or
 * EINVAL), a timed-out wait (ETIMEDOUT), a non-futex syscall, futex_waitv
 * with bad arguments, and a wait interrupted by a signal whose handler was
 * installed without SA_RESTART (EINTR) and with it (the kernel restarts
 * the wait, which a wake then ends: 0).
 * Prints "measured_wait_ns N" and one "rc ..." line per check, which
 * futex_waits.sh compares with the bare run's and the profile's rows.
 * With "--linger FILE" it then stays alive until FILE exists (at most 60
 * s), so that futex_outputs.sh can read its rows live ('syncprof top').
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../now_ns.h"

static uint32_t lock_word; /* 0 free, 1 locked, 2 locked with waiters */
static uint64_t measured_ns;
static pthread_mutex_t measured_lock = PTHREAD_MUTEX_INITIALIZER;

/* The lock slow path of a futex mutex (Drepper's "Futexes are tricky"). */
static __attribute__((noinline)) void word_lock(void)
{
	uint32_t c = 0;

	if (__atomic_compare_exchange_n(&lock_word, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&lock_word, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		syscall(SYS_futex, &lock_word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0); /* LINE_WAIT */
		c = __atomic_exchange_n(&lock_word, 2, __ATOMIC_ACQUIRE);
	}
}

static __attribute__((noinline)) void word_unlock(void)
{
	if (__atomic_exchange_n(&lock_word, 0, __ATOMIC_RELEASE) == 2)
		syscall(SYS_futex, &lock_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); /* LINE_WAKE */
}

static void *holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++) {
		word_lock();
		usleep(60000);
		word_unlock();
		usleep(5000);
	}
	return NULL;
}

static void *waiter(void *arg)
{
	uint64_t mine = 0;

	(void)arg;
	usleep(10000);
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = now_ns();

		word_lock();
		mine += now_ns() - t0;
		word_unlock();
		usleep(20000);
	}
	pthread_mutex_lock(&measured_lock);
	measured_ns += mine;
	pthread_mutex_unlock(&measured_lock);
	return NULL;
}

/* The signal checks: a thread asleep in a futex wait gets a signal. */
static uint32_t intr_word;
static long intr_rc;
static int intr_errno;
static pid_t intr_tid;
static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
	(void)sig;
	handled = 1;
}

static void *intr_waiter(void *arg)
{
	long rc;

	__atomic_store_n(&intr_tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	if (arg)
		rc = syscall(SYS_futex, &intr_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0); /* LINE_RESTART */
	else
		rc = syscall(SYS_futex, &intr_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0); /* LINE_EINTR */
	intr_errno = rc == -1 ? errno : 0;
	intr_rc = rc;
	return NULL;
}

/* Whether thread @tid sleeps (state S in /proc: inside the futex wait). */
static int sleeping(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/* A wait interrupted by SIGUSR1, its handler with SA_RESTART or without;
 * a wake ends a restarted wait. */
static void interrupted(const char *what, int restart)
{
	struct sigaction sa;
	pthread_t t;
	pid_t tid;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
	intr_word = 0;
	intr_tid = 0;
	handled = 0;
	pthread_create(&t, NULL, intr_waiter, restart ? (void *)1 : NULL);
	while (!(tid = __atomic_load_n(&intr_tid, __ATOMIC_ACQUIRE)) || !sleeping(tid))
		usleep(1000);
	pthread_kill(t, SIGUSR1);
	while (!handled)
		usleep(1000);
	usleep(20000); /* restarted meanwhile, or returned */
	__atomic_store_n(&intr_word, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &intr_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	pthread_join(t, NULL);
	printf("rc %s %ld errno %d\n", what, intr_rc, intr_errno);
}

static void check(const char *what, long rc)
{
	printf("rc %s %ld errno %d\n", what, rc, rc == -1 ? errno : 0);
}

int main(int argc, char **argv)
{
	pthread_t h, w[3];
	uint32_t word = 5;
	struct timespec short_wait = { 0, 20 * 1000 * 1000 };

	/* A process's first futex call under the profiler pays for its
	 * one-time scan of symbol tables (record/locklib.c): taken here,
	 * before the waits are measured (a wait on a word that differs: no
	 * sleep, no row). */
	syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0);
	pthread_create(&h, NULL, holder, NULL);
	for (int i = 0; i < 3; i++)
		pthread_create(&w[i], NULL, waiter, NULL);
	pthread_join(h, NULL);
	for (int i = 0; i < 3; i++)
		pthread_join(w[i], NULL);
	printf("measured_wait_ns %llu\n", (unsigned long long)measured_ns);

	errno = 0;
	check("eagain", syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0));
	errno = 0;
	check("efault", syscall(SYS_futex, (void *)8, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	errno = 0;
	check("badop", syscall(SYS_futex, &word, 99, 0, NULL, NULL, 0));
	errno = 0;
	check("timedout", syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 5, &short_wait, NULL, 0));
	errno = 0;
	check("wake_none", syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
	errno = 0;
	check("getppid", syscall(SYS_getppid) == getppid());
	errno = 0;
	check("badnr", syscall(-1L));
	errno = 0;
	check("waitv_null", syscall(SYS_futex_waitv, NULL, 1, 0, NULL, CLOCK_MONOTONIC));
	errno = 0;
	check("waitv_badflags", syscall(SYS_futex_waitv, NULL, 0, 1, NULL, CLOCK_MONOTONIC));
	interrupted("eintr", 0);
	interrupted("restart", 1);
	if (argc == 3 && !strcmp(argv[1], "--linger")) {
		printf("lingering\n");
		fflush(stdout);
		for (int i = 0; i < 1200 && access(argv[2], F_OK); i++)
			usleep(50000);
	}
	return 0;
}
