/*
 * whatif_bench.c - a program whose critical section's length is a
 * parameter, to check 'syncprof trace what-if' against real runs
 * (bench/parts/whatif_validate.sh).
 *
 * Each of T threads does N times: W ns of work outside the lock, then
 * takes one mutex in critical_section(), does H ns of work holding it, and
 * releases it.  Work is CPU work (a loop calibrated once against the
 * clock at start-up, so it scales like code, not like sleeping), and the
 * critical section has its own function so that an interposed trace names
 * the site "critical_section".  Prints the wall time from the start of
 * the threads to the last join, in ns, on stdout.
 *
 * Usage: whatif_bench [-t THREADS] [-n ITERATIONS] [-H HOLD_NS] [-W WORK_NS]
 *                     [-c LOOPS_PER_US]   (-c skips the calibration)
 * Prints "loops_per_us N" on stderr so runs can share one calibration.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long iterations = 2000;
static double hold_ns = 2000, work_ns = 4000, loops_per_ns;
static volatile unsigned long sink;

static unsigned long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long)ts.tv_sec * 1000000000ul + (unsigned long)ts.tv_nsec;
}

static void __attribute__((noinline)) spin(unsigned long loops)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < loops; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

/* Loops per ns: the best of a few 20 ms runs (the least disturbed one). */
static double calibrate(void)
{
	double best = 0;

	for (int r = 0; r < 5; r++) {
		unsigned long loops = 1000000, t0 = now_ns(), t;

		spin(loops);
		t = now_ns() - t0;
		if (t && (double)loops / (double)t > best)
			best = (double)loops / (double)t;
	}
	return best > 0 ? best : 1;
}

static void __attribute__((noinline)) critical_section(unsigned long loops)
{
	pthread_mutex_lock(&lock);
	spin(loops);
	pthread_mutex_unlock(&lock);
}

static void *worker(void *arg)
{
	unsigned long h = (unsigned long)(hold_ns * loops_per_ns);
	unsigned long w = (unsigned long)(work_ns * loops_per_ns);

	(void)arg;
	for (unsigned long i = 0; i < iterations; i++) {
		spin(w);
		critical_section(h);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned threads = 2;
	double lpus = 0;
	pthread_t tid[256];
	unsigned long t0;
	int c;

	while ((c = getopt(argc, argv, "t:n:H:W:c:")) != -1) {
		switch (c) {
		case 't':
			threads = (unsigned)strtoul(optarg, NULL, 10);
			break;
		case 'n':
			iterations = strtoul(optarg, NULL, 10);
			break;
		case 'H':
			hold_ns = strtod(optarg, NULL);
			break;
		case 'W':
			work_ns = strtod(optarg, NULL);
			break;
		case 'c':
			lpus = strtod(optarg, NULL);
			break;
		default:
			fprintf(stderr, "usage: %s [-t THREADS] [-n ITERATIONS] [-H HOLD_NS] "
					"[-W WORK_NS] [-c LOOPS_PER_US]\n", argv[0]);
			return 2;
		}
	}
	if (!threads || threads > 256 || hold_ns < 0 || work_ns < 0) {
		fprintf(stderr, "whatif_bench: 1 to 256 threads, times >= 0\n");
		return 2;
	}
	loops_per_ns = lpus > 0 ? lpus / 1000 : calibrate();
	fprintf(stderr, "loops_per_us %.3f\n", loops_per_ns * 1000);
	t0 = now_ns();
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("%lu\n", now_ns() - t0);
	return 0;
}
