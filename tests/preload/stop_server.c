/*
 * stop_server.c - a server-like program for run_interrupt.sh: two workers
 * contend on one mutex until the program is stopped.  With argument
 * "handler" it catches SIGTERM and SIGINT itself, prints "handler ran"
 * and exits 3 (its own status); without, those signals kill it.  It
 * writes "ready" once the workers have contended.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void *work(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&m);
		usleep(200);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1 && !strcmp(argv[1], "handler")) {
		signal(SIGTERM, on_signal);
		signal(SIGINT, on_signal);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, work, NULL);
	usleep(200000);
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		pause();
	printf("handler ran\n");
	fflush(stdout);
	exit(3);
}
