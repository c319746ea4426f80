/*
 * ctl_target.c - a profiled program for the control and watchdog tests,
 * compiled with -include syncprof/instrument.h (exact file:line sites).
 *
 *   ctl_target serve      two threads contend on one mutex until stdin
 *                         reaches end of file; prints "ready\n" first.
 *   ctl_target hold MS    a holder thread keeps a mutex MS ms while the
 *                         main thread waits for it; prints the two sites.
 *   ctl_target idle       no lock activity; waits for end of file on stdin.
 *   ctl_target fork       forks; the child prints "child PID\n", takes the
 *                         lock once and waits for end of file on stdin.
 *   ctl_target condwait MS  the main thread waits on a condition variable
 *                         that another thread signals after MS ms.
 *   ctl_target churn N    heavy locking and thread churn until end of file on
 *                         stdin: rounds of 4 short-lived threads, each taking
 *                         N distinct mutexes and a shared hot one (so reports
 *                         have many rows to render); prints "ready\n" after
 *                         the first round.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t hot = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static int stop;
static unsigned long counter;
static int hold_ms = 300;
static int holder_has_it;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&hot); /* SITE_HOT */
		for (volatile int i = 0; i < 200; i++)
			;
		counter++;
		pthread_mutex_unlock(&hot);
		sleep_ms(1);
	}
	return NULL;
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held); /* SITE_HOLDER */
	__atomic_store_n(&holder_has_it, 1, __ATOMIC_RELEASE);
	sleep_ms(hold_ms);
	pthread_mutex_unlock(&held);
	return NULL;
}

static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int signalled;

static void *signaller(void *arg)
{
	(void)arg;
	sleep_ms(hold_ms);
	pthread_mutex_lock(&held);
	signalled = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&held);
	return NULL;
}

static pthread_mutex_t *churn_locks;
static int churn_n;

static void *churner(void *arg)
{
	(void)arg;
	for (int i = 0; i < churn_n; i++) {
		pthread_mutex_lock(&churn_locks[i]);
		pthread_mutex_unlock(&churn_locks[i]);
		pthread_mutex_lock(&hot);
		counter++;
		pthread_mutex_unlock(&hot);
	}
	return NULL;
}

static void *churn_main(void *arg)
{
	pthread_t th[4];

	(void)arg;
	for (int round = 0; !__atomic_load_n(&stop, __ATOMIC_RELAXED); round++) {
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, churner, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		if (round == 0)
			printf("ready\n");
	}
	return NULL;
}

static void wait_eof(void)
{
	char buf[64];

	while (fread(buf, 1, sizeof(buf), stdin) > 0)
		;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc >= 2 && !strcmp(argv[1], "serve")) {
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		printf("ready\n");
		wait_eof();
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "hold")) {
		if (argc >= 3)
			hold_ms = atoi(argv[2]);
		pthread_create(&t[0], NULL, holder, NULL);
		while (!__atomic_load_n(&holder_has_it, __ATOMIC_ACQUIRE))
			sleep_ms(1);
		pthread_mutex_lock(&held); /* SITE_WAITER */
		pthread_mutex_unlock(&held);
		pthread_join(t[0], NULL);
		printf("done\n");
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "idle")) {
		printf("ready\n");
		wait_eof();
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "fork")) {
		pid_t child = fork();

		if (child == 0) {
			pthread_mutex_lock(&hot);
			pthread_mutex_unlock(&hot);
			printf("child %d\n", (int)getpid());
			wait_eof();
			_exit(0);
		}
		waitpid(child, NULL, 0);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "condwait")) {
		hold_ms = atoi(argv[2]);
		pthread_create(&t[0], NULL, signaller, NULL);
		pthread_mutex_lock(&held);
		while (!signalled)
			pthread_cond_wait(&cond, &held); /* SITE_CONDWAIT */
		pthread_mutex_unlock(&held);
		pthread_join(t[0], NULL);
		printf("done\n");
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "churn")) {
		churn_n = atoi(argv[2]);
		churn_locks = calloc((size_t)churn_n, sizeof(*churn_locks));
		for (int i = 0; i < churn_n; i++)
			pthread_mutex_init(&churn_locks[i], NULL);
		pthread_create(&t[0], NULL, churn_main, NULL);
		wait_eof();
		__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
		pthread_join(t[0], NULL);
		return 0;
	}
	fprintf(stderr, "usage: ctl_target serve|hold [MS]|idle|fork|condwait MS|churn N\n");
	return 2;
}
