/*
 * vmcost.c - what this machine charges for the things a profiled process
 * pays per process and per page: a system call, a /proc file read, the
 * first touch of an anonymous page, the same page populated ahead by
 * madvise(MADV_POPULATE_WRITE) and touched after, and an idle thread's
 * creation and join.  docs/cost.md ("Per process") reads start-up costs
 * in these units; on a VM they differ from bare metal by tens of times.
 *
 * Usage: vmcost [PAGES]   (default 1024; medians of 5 rounds)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#define ROUNDS 5

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *idle(void *arg)
{
	return arg;
}

/* One round of every measurement, per unit, into @r[0..5]. */
static int round_of(long pages, double *r)
{
	size_t len = (size_t)pages * 4096;
	char buf[4096];
	double t;
	char *p, *q;

	t = now_us();
	for (int i = 0; i < 2000; i++)
		getppid();
	r[0] = (now_us() - t) / 2000;
	t = now_us();
	for (int i = 0; i < 200; i++) {
		int fd = open("/proc/self/stat", O_RDONLY);

		if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
			return -1;
		close(fd);
	}
	r[1] = (now_us() - t) / 200;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || q == MAP_FAILED)
		return -1;
	t = now_us();
	for (long i = 0; i < pages; i++)
		p[i * 4096] = 1;
	r[2] = (now_us() - t) / (double)pages;
	t = now_us();
	if (madvise(q, len, MADV_POPULATE_WRITE))
		r[3] = -1;
	else
		r[3] = (now_us() - t) / (double)pages;
	t = now_us();
	for (long i = 0; i < pages; i++)
		q[i * 4096] = 1;
	r[4] = (now_us() - t) / (double)pages;
	munmap(p, len);
	munmap(q, len);
	t = now_us();
	for (int i = 0; i < 50; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, idle, NULL))
			return -1;
		pthread_join(th, NULL);
	}
	r[5] = (now_us() - t) / 50;
	return 0;
}

int main(int argc, char **argv)
{
	static const char *what[] = {
		"system call (getppid)",
		"open+read+close /proc/self/stat",
		"first touch of an anonymous page",
		"MADV_POPULATE_WRITE, per page",
		"first touch of a populated page",
		"pthread_create+join, idle thread",
	};
	long pages = argc > 1 ? atol(argv[1]) : 1024;
	double r[6][ROUNDS];

	if (pages < 1 || argc > 2) {
		fprintf(stderr, "usage: vmcost [PAGES]\n");
		return 2;
	}
	for (int k = 0; k < ROUNDS; k++) {
		double one[6];

		if (round_of(pages, one)) {
			perror("vmcost");
			return 1;
		}
		for (int i = 0; i < 6; i++)
			r[i][k] = one[i];
	}
	for (int i = 0; i < 6; i++) {
		qsort(r[i], ROUNDS, sizeof(double), cmp);
		if (r[i][ROUNDS / 2] < 0)
			printf("%-36s refused (kernel before 5.14)\n", what[i]);
		else
			printf("%-36s %8.2f us (min %.2f, max %.2f)\n", what[i], r[i][ROUNDS / 2],
			       r[i][0], r[i][ROUNDS - 1]);
	}
	return 0;
}
