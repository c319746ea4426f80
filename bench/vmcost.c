/*
 * vmcost.c - what this machine charges for the things a profiled process
 * pays per process and per page: a system call, a /proc file read, the
 * first touch of an anonymous page, the same page populated ahead by
 * madvise(MADV_POPULATE_WRITE) and touched after, an idle thread's
 * creation and join, a page read before it is written while another
 * thread runs (the shared zero page replaced: a second fault and a TLB
 * shootdown), and a Unix socket's file (bind, listen, unlink) in the two
 * directories of control sockets, /tmp/syncprof-UID and
 * /dev/shm/syncprof-UID (socket_files() says why there).
 * docs/cost.md ("Per process") reads start-up costs in these units; on a
 * VM they differ from bare metal by tens of times.
 *
 * Usage: vmcost [PAGES]   (default 1024; medians of 5 rounds)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
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

static volatile int spinning;

static void *spin(void *arg)
{
	while (spinning)
		;
	return arg;
}

/* Per socket: bind, listen, unlink and close in @root/syncprof-UID - the
 * directory of every profiled process's control socket (control_wire.h),
 * made 0700 when missing - 500 in a row as a process churn makes them:
 * ext4 skips the inodes deleted in the last seconds, so a directory with
 * a history costs more than a fresh one.  -1 when it cannot be used. */
static double socket_files(const char *root)
{
	char dir[64];
	double t;
	int n = 500;

	snprintf(dir, sizeof(dir), "%s/syncprof-%u", root, (unsigned)geteuid());
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -1;
	t = now_us();
	for (int i = 0; i < n; i++) {
		struct sockaddr_un a = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		snprintf(a.sun_path, sizeof(a.sun_path), "%s/vmcost-%d-%d.sock", dir, (int)getpid(),
			 i);
		if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 8)) {
			t = -1;
			n = 1;
		}
		unlink(a.sun_path);
		if (fd >= 0)
			close(fd);
		if (t < 0)
			break;
	}
	return t < 0 ? -1 : (now_us() - t) / n;
}

/* One round of every measurement, per unit, into @r[0..8]. */
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
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	{
		volatile char sink = 0;
		pthread_t th;

		spinning = 1;
		if (pthread_create(&th, NULL, spin, NULL))
			return -1;
		for (long i = 0; i < pages; i++)
			sink += p[i * 4096];
		t = now_us();
		for (long i = 0; i < pages; i++)
			p[i * 4096] = 1;
		r[6] = (now_us() - t) / (double)pages;
		spinning = 0;
		pthread_join(th, NULL);
		(void)sink;
	}
	munmap(p, len);
	r[7] = socket_files("/tmp");
	r[8] = socket_files("/dev/shm");
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
		"write of a page read first, 2 threads",
		"socket file in /tmp/syncprof-UID",
		"socket file in /dev/shm/syncprof-UID",
	};
	long pages = argc > 1 ? atol(argv[1]) : 1024;
	double r[9][ROUNDS];

	if (pages < 1 || argc > 2) {
		fprintf(stderr, "usage: vmcost [PAGES]\n");
		return 2;
	}
	for (int k = 0; k < ROUNDS; k++) {
		double one[9];

		if (round_of(pages, one)) {
			perror("vmcost");
			return 1;
		}
		for (int i = 0; i < 9; i++)
			r[i][k] = one[i];
	}
	for (int i = 0; i < 9; i++) {
		qsort(r[i], ROUNDS, sizeof(double), cmp);
		if (r[i][ROUNDS / 2] < 0)
			printf("%-40s %s\n", what[i],
			       i == 3 ? "refused (kernel before 5.14)" : "cannot be made here");
		else
			printf("%-40s %8.2f us (min %.2f, max %.2f)\n", what[i], r[i][ROUNDS / 2],
			       r[i][0], r[i][ROUNDS - 1]);
	}
	return 0;
}
