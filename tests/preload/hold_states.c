/*
 * hold_states.c - locks held long while the holder does known things, for
 * the hold states of issue 24 (record/holdstate.c).  One mode per run; the
 * holder takes its mutex HOLDS times (LINE_HOLD) and, inside:
 *
 *   sleep     nanosleep 100 ms                 -> syscall:clock_nanosleep
 *   cpu       computes 100 ms (wall)           -> running (+ preempted)
 *   preempt   computes 100 ms pinned to CPU 0 with three threads spinning
 *             there too (~3/4 of it on the run queue) -> preempted, running
 *   pipe      write()s 64 KiB to a full pipe that a reader drains after
 *             100 ms                           -> syscall:write
 *   fsync     writes 1 MiB to a file and fsync()s it, again and again for
 *             100 ms -> syscall:fsync, syscall:write, running (their
 *             shares depend on the file system; the program measures the
 *             time blocked in fsync: its wall time less its CPU time and
 *             its run-queue time, from its own schedstat)
 *   lock      waits for a second mutex another thread holds 100 ms
 *             (LINE_INNER)                     -> lock
 *   condwait  a condition wait of 100 ms (it times out) on the held
 *             mutex, which the wait releases: not a long hold, no state
 *
 * Live views (hold_states.sh checks their text, not the figures):
 *   watch     sleep, with a second thread waiting for the mutex meanwhile
 *             (for the long-wait warning, which names the holder's state)
 *   status    one hold of 3 s, sleeping; "holding" is printed once the lock
 *             is taken (for syncprof ctl PID status)
 *
 * Robustness (hold_states.sh checks that they end as they should):
 *   signal    sleep, interrupted by signals (a handler without SA_RESTART:
 *             EINTR) and resumed for what is left
 *   exit      a thread takes the mutex, sleeps 100 ms holding it and exits
 *             holding it (the sampler must let go of it)
 *   fork      sleep; another thread forks while the hold is long and
 *             sampled; the child takes a lock of its own and exits 0
 *
 * The program measures the truth: the wall time of its holds, the thread
 * CPU time within them (CLOCK_THREAD_CPUTIME_ID), and the time inside the
 * named call, and its run-queue time within them (its own schedstat).
 * Prints "truth hold_ns N cpu_ns N call_ns N delay_ns N".  Built
 * preloaded, and compiled in with -include syncprof/instrument.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOLDS 5
#define HOLD_NS 100000000ull

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static volatile int stop;
static int pipe_fd[2];
static uint64_t call_ns;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* This thread's run-queue time so far (schedstat's second field), ns. */
static uint64_t my_delay_ns(void)
{
	char path[64], buf[128];
	unsigned long long run = 0, delay = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", gettid());
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%llu %llu", &run, &delay) != 2)
		delay = 0;
	fclose(f);
	return delay;
}

static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void compute(uint64_t ns)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + ns;

	while (clock_ns(CLOCK_MONOTONIC) < end)
		;
}

static void *spinner(void *arg)
{
	(void)arg;
	pin_cpu0();
	while (!stop)
		;
	return NULL;
}

/* Drains the pipe 100 ms after each write began to block. */
static void *drainer(void *arg)
{
	char buf[65536];

	(void)arg;
	for (int i = 0; i < HOLDS; i++) {
		usleep(100000);
		for (size_t got = 0; got < sizeof(buf);) {
			ssize_t n = read(pipe_fd[0], buf, sizeof(buf) - got);

			if (n <= 0)
				return NULL;
			got += (size_t)n;
		}
	}
	return NULL;
}

/* Holds the inner lock 100 ms at a time while the holder waits for it. */
static void *inner_holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < HOLDS; i++) {
		pthread_mutex_lock(&inner);
		usleep(100000);
		pthread_mutex_unlock(&inner);
		usleep(20000);
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
}

/* Signals the main thread now and then while it holds (mode signal). */
static void *signaller(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;

	while (!stop) {
		usleep(15000);
		pthread_kill(main_thread, SIGUSR1);
	}
	return NULL;
}

/* Takes the mutex and exits holding it (mode exit). */
static void *exit_holding(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&inner);
	usleep(100000);
	return NULL;
}

/* Forks while the main thread's hold is long (mode fork). */
static void *forker(void *arg)
{
	pid_t child;
	int status = 0;

	(void)arg;
	usleep(50000);
	child = fork();
	if (child == 0) {
		pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

		pthread_mutex_lock(&m);
		usleep(5000);
		pthread_mutex_unlock(&m);
		_exit(0);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		exit(4);
	return NULL;
}

/* Waits for the mutex while the holder sleeps with it (mode watch). */
static void *waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < HOLDS; i++) {
		usleep(20000);
		pthread_mutex_lock(&outer);
		pthread_mutex_unlock(&outer);
	}
	return NULL;
}

static void timed_call(const char *mode, int fd)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

	if (!strcmp(mode, "sleep") || !strcmp(mode, "watch") || !strcmp(mode, "fork")) {
		usleep(100000);
	} else if (!strcmp(mode, "signal")) {
		struct timespec left = { 0, 100000000 };

		while (nanosleep(&left, &left) && errno == EINTR)
			;
	} else if (!strcmp(mode, "status")) {
		printf("holding %d\n", (int)getpid());
		fflush(stdout);
		sleep(3);
	} else if (!strcmp(mode, "pipe")) {
		static char buf[65536];

		if (write(pipe_fd[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			exit(3);
	} else if (!strcmp(mode, "fsync")) {
		static char buf[65536];
		uint64_t end = t0 + HOLD_NS, f0;



		t0 = 0;
		while (clock_ns(CLOCK_MONOTONIC) < end) {
			for (int k = 0; k < 16; k++)
				if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
					exit(3);
			/* Blocked in fsync: its wall time less the CPU time it
			 * used in the kernel and its time on a run queue. */
			uint64_t c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), d0 = my_delay_ns(), w;

			f0 = clock_ns(CLOCK_MONOTONIC);
			if (fsync(fd))
				exit(3);
			w = clock_ns(CLOCK_MONOTONIC) - f0;
			w -= (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0) + (my_delay_ns() - d0);
			if ((int64_t)w > 0)
				call_ns += w;
		}
		return;
	} else if (!strcmp(mode, "condwait")) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		while (pthread_cond_timedwait(&never, &outer, &until) != ETIMEDOUT)
			;
	} else if (!strcmp(mode, "lock")) {
		usleep(5000); /* the inner holder takes it first */
		t0 = clock_ns(CLOCK_MONOTONIC);
		pthread_mutex_lock(&inner); /* LINE_INNER */
		pthread_mutex_unlock(&inner);
	} else {
		compute(HOLD_NS);
	}
	call_ns += clock_ns(CLOCK_MONOTONIC) - t0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sleep";
	pthread_t helpers[3];
	int n_helpers = 0, fd = -1;
	uint64_t hold_ns = 0, cpu_ns = 0, delay_ns = 0;

	if (!strcmp(mode, "preempt")) {
		pin_cpu0();
		for (int i = 0; i < 3; i++)
			pthread_create(&helpers[n_helpers++], NULL, spinner, NULL);
	} else if (!strcmp(mode, "pipe")) {
		static char fill[65536];

		if (pipe(pipe_fd) || fcntl(pipe_fd[1], F_SETPIPE_SZ, 65536) < 0 ||
		    write(pipe_fd[1], fill, sizeof(fill)) != (ssize_t)sizeof(fill))
			return 2;
		pthread_create(&helpers[n_helpers++], NULL, drainer, NULL);
	} else if (!strcmp(mode, "fsync")) {
		fd = open("hold_states.tmp", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			return 2;
	} else if (!strcmp(mode, "lock")) {
		pthread_create(&helpers[n_helpers++], NULL, inner_holder, NULL);
	} else if (!strcmp(mode, "watch")) {
		pthread_create(&helpers[n_helpers++], NULL, waiter, NULL);
	} else if (!strcmp(mode, "signal")) {
		static pthread_t self;
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal; /* no SA_RESTART: nanosleep fails with EINTR */
		sigaction(SIGUSR1, &sa, NULL);
		self = pthread_self();
		pthread_create(&helpers[n_helpers++], NULL, signaller, &self);
	} else if (!strcmp(mode, "exit")) {
		pthread_t t;

		pthread_create(&t, NULL, exit_holding, NULL);
		pthread_join(t, NULL);
	} else if (!strcmp(mode, "fork")) {
		pthread_create(&helpers[n_helpers++], NULL, forker, NULL);
	} else if (strcmp(mode, "sleep") && strcmp(mode, "cpu") && strcmp(mode, "status") &&
		   strcmp(mode, "exit") && strcmp(mode, "condwait")) {
		fprintf(stderr, "hold_states: unknown mode '%s'\n", mode);
		return 2;
	}
	for (int i = 0; i < HOLDS; i++) {
		uint64_t w0, c0, d0;

		pthread_mutex_lock(&outer); /* LINE_HOLD */
		w0 = clock_ns(CLOCK_MONOTONIC);
		c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		d0 = my_delay_ns();
		timed_call(mode, fd);
		delay_ns += my_delay_ns() - d0;
		cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
		hold_ns += clock_ns(CLOCK_MONOTONIC) - w0;
		pthread_mutex_unlock(&outer);
		if (!strcmp(mode, "lock") || !strcmp(mode, "watch"))
			usleep(30000);
		if (!strcmp(mode, "status"))
			break;
	}
	stop = 1;
	for (int i = 0; i < n_helpers; i++)
		pthread_join(helpers[i], NULL);
	if (fd >= 0) {
		close(fd);
		unlink("hold_states.tmp");
	}
	printf("truth hold_ns %llu cpu_ns %llu call_ns %llu delay_ns %llu\n",
	       (unsigned long long)hold_ns, (unsigned long long)cpu_ns, (unsigned long long)call_ns,
	       (unsigned long long)delay_ns);
	return 0;
}
