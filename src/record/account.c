/*
 * account.c - where the threads' time went, from the kernel's own
 * per-thread accounting: running, preempted (runnable, not running) and
 * blocked, and how much of blocked the profile's waits explain.
 *
 * Design: the kernel keeps, per thread, the time it ran on a CPU and the
 * time it waited on a run queue (/proc/self/task/TID/schedstat, in ns,
 * CONFIG_SCHED_INFO), and its start (/proc/self/task/TID/stat, field 22,
 * in clock ticks since boot, CLOCK_BOOTTIME).  A thread's lifetime is the
 * boot clock now (or at its exit) minus its start; blocked is what is
 * left of the lifetime after running and preempted.  Its waits seen by
 * the profiler (sync_wait) are the wait totals of its table's entries.
 * These files are read at thread exit (registry.c, from the exit key's
 * destructor) and at report time (report/collect.c), never on the lock
 * path: no probe calls anything here.
 *
 * The running time is read from the thread's CPU clock rather than from
 * schedstat, whose figure for a thread on a CPU lags by up to a tick.
 *
 * A thread that the preload's pthread_create() started has its exact
 * start (sp_thread_start_ns, the boot clock read first thing in the new
 * thread): its stat is not read.  For any other thread (the first one,
 * threads made by clone(), by libc itself, before the library loaded,
 * under attach or compiled in) stat gives the start to a clock tick (10
 * ms at USER_HZ 100), truncated.  Taken as the tick's middle, it is off
 * by at most half a tick either way; a thread that registered (its first
 * profiled call) started no later than that (born_ns, the boot clock read
 * at registration), which bounds it from above too.  Half a tick is much
 * for a short thread: the 548 threads read of 2,000 of about 50 us each
 * (bench/thread_churn 2000) were said to have lived 0.73 s, 1.3 ms each,
 * 0.64 s of it "blocked", before the exact start; 0.09 s after, 0.03 s
 * blocked.
 *
 * Invariants: errno is kept (the exit destructor runs in the host's
 * thread); no allocation, no lock; a read that fails says why (-errno)
 * and produces nothing.
 *
 * Alternatives considered: getrusage(RUSAGE_THREAD) and
 * CLOCK_THREAD_CPUTIME_ID give the running time in one system call but
 * no run-queue time, so preempted would be folded into blocked; taskstats
 * (netlink) gives both but needs a socket per read and CAP_NET_ADMIN for
 * some fields.  Measured here (a VM where a bare getppid() costs
 * 10-13 us): one open+read+close of a /proc file 30-48 us.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"

int sp_account_on = 1;

uint64_t sp_boottime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sp_task_path(char *buf, pid_t tid, const char *leaf)
{
	static const char head[] = "/proc/self/task/";
	char digits[16];
	size_t n = 0, k = 0;
	unsigned long v = (unsigned long)tid;

	do
		digits[k++] = (char)('0' + v % 10);
	while ((v /= 10) && k < sizeof(digits));
	for (const char *s = head; *s; s++)
		buf[n++] = *s;
	while (k)
		buf[n++] = digits[--k];
	buf[n++] = '/';
	for (const char *s = leaf; *s; s++)
		buf[n++] = *s;
	buf[n] = 0;
}

/* The file's first @size - 1 bytes, NUL-terminated: length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

ssize_t sp_task_file(pid_t tid, const char *leaf, char *buf, size_t size)
{
	char path[64];

	sp_task_path(path, tid, leaf);
	return read_small(path, buf, size);
}

static const char *parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return NULL;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	*out = v;
	return s;
}

/* stat: "tid (comm) state ppid ..." - comm may hold spaces and ')', so
 * the fields are counted from the last ')'; starttime is field 22. */
static int parse_stat(const char *s, struct sp_sched *out)
{
	const char *open_paren = NULL, *close_paren = NULL;
	uint64_t v = 0;
	size_t n = 0;

	for (const char *c = s; *c; c++) {
		if (*c == '(' && !open_paren)
			open_paren = c;
		if (*c == ')')
			close_paren = c;
	}
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EINVAL;
	for (const char *c = open_paren + 1; c < close_paren && n < sizeof(out->name) - 1; c++)
		out->name[n++] = *c;
	out->name[n] = 0;
	s = close_paren + 1;
	/* fields 3 (state) to 21 are skipped: 19 of them */
	for (int field = 3; field < 22; field++) {
		while (*s == ' ')
			s++;
		while (*s && *s != ' ')
			s++;
	}
	if (!parse_u64(s, &v))
		return -EINVAL;
	out->start_ticks = v;
	return 0;
}

/*
 * The thread's CPU time from its CPU clock (the clock id glibc's
 * pthread_getcpuclockid() makes from a tid: ~tid << 3 | CPUCLOCK_SCHED |
 * CPUCLOCK_PERTHREAD), which brings a running thread's figure up to date;
 * schedstat's is as of its last tick or switch, up to a tick behind (a
 * thread reading its own at exit read 0 after 300 us of work).  @fallback
 * when the clock cannot be read.
 */
uint64_t sp_thread_cpu_ns(pid_t tid, uint64_t fallback)
{
	clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 6);
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return fallback;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int sp_sched_read(pid_t tid, uint64_t start_ns, struct sp_sched *out)
{
	int saved = errno;
	char path[64], buf[1024];
	const char *s;
	ssize_t n;
	int rc = 0;

	sp_task_path(path, tid, "schedstat");
	n = read_small(path, buf, sizeof(buf));
	if (n < 0) {
		rc = (int)n;
		goto out;
	}
	s = parse_u64(buf, &out->running_ns);
	if (!s || !parse_u64(s, &out->preempted_ns)) {
		rc = -EINVAL;
		goto out;
	}
	out->running_ns = sp_thread_cpu_ns(tid, out->running_ns);
	out->start_ns = start_ns;
	out->start_ticks = 0;
	out->name[0] = 0;
	if (!start_ns) {
		sp_task_path(path, tid, "stat");
		n = read_small(path, buf, sizeof(buf));
		rc = n < 0 ? (int)n : parse_stat(buf, out);
	}
	out->now_ns = sp_boottime_ns();
out:
	errno = saved;
	return rc;
}

/*
 * A thread that had no context switch since it began ran all along: its
 * lifetime is running time, nothing preempted, nothing blocked - what
 * schedstat would say, less the wait for its first CPU, which came
 * before its life as the preload's trampoline clocks it (start_ns, read
 * on its CPU) and which schedstat counts as preempted all the same.  Its
 * life starts at its CPU time ago (glibc's start of a thread, its first
 * page faults: tens of us before the trampoline's clock), or at start_ns
 * when that is earlier (a CPU clock that leaves out a hypervisor's
 * steal time); so a thread whose start is unknown (compiled in, under
 * attach) is accounted so too.  A voluntary switch (a sleep, a futex
 * wait) or an involuntary one (preempted, a yield) sends it to the
 * files.  Short threads mostly have none: their exits then cost two
 * system calls (~1 us) instead of the open, read and close of a /proc
 * file that the kernel makes for a new thread on first use (~20 us each,
 * 2026-11-28; docs/accounting.md).
 */
int sp_sched_self_unswitched(uint64_t start_ns, struct sp_sched *out)
{
	int saved = errno;
	struct rusage ru;
	struct timespec cpu;

	if (getrusage(RUSAGE_THREAD, &ru) || ru.ru_nvcsw || ru.ru_nivcsw ||
	    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu)) {
		errno = saved;
		return 0;
	}
	out->now_ns = sp_boottime_ns();
	out->running_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
	if ((!start_ns || out->now_ns - start_ns < out->running_ns) &&
	    out->now_ns > out->running_ns)
		start_ns = out->now_ns - out->running_ns;
	out->start_ns = start_ns;
	out->start_ticks = 0;
	out->preempted_ns = 0;
	out->name[0] = 0;
	errno = saved;
	return 1;
}

/* Clock ticks per second of stat's times (USER_HZ), read once. */
static uint64_t ticks_per_s(void)
{
	static long hz;
	long v = sp_load_relaxed(&hz);

	if (v <= 0) {
		int saved = errno;

		v = sysconf(_SC_CLK_TCK);
		errno = saved;
		if (v <= 0)
			v = 100;
		sp_store_relaxed(&hz, v);
	}
	return (uint64_t)v;
}

void sp_account_figures(const struct sp_sched *s, uint64_t born_ns, uint64_t sync_wait_ns,
			struct sp_account_figs *f)
{
	uint64_t hz = ticks_per_s(), tick = 1000000000u / hz;
	uint64_t start = s->start_ticks / hz * 1000000000u + s->start_ticks % hz * tick + tick / 2;

	if (s->start_ns)
		start = s->start_ns; /* exact: the preload started it */
	else if (born_ns && born_ns < start)
		start = born_ns; /* it was registered then: it had started */
	f->lifetime_ns = s->now_ns > start ? s->now_ns - start : 0;
	f->running_ns = s->running_ns;
	f->preempted_ns = s->preempted_ns;
	f->blocked_ns = f->lifetime_ns > s->running_ns + s->preempted_ns
				? f->lifetime_ns - s->running_ns - s->preempted_ns
				: 0;
	f->sync_wait_ns = sync_wait_ns;
}

void sp_account_figs_add(struct sp_account_figs *into, const struct sp_account_figs *f)
{
	into->lifetime_ns += f->lifetime_ns;
	into->running_ns += f->running_ns;
	into->preempted_ns += f->preempted_ns;
	into->blocked_ns += f->blocked_ns;
	into->sync_wait_ns += f->sync_wait_ns;
}

uint64_t sp_table_sync_wait(const struct sp_table *t)
{
	size_t n = sp_table_span(t);
	uint64_t sum = 0;

	for (size_t i = sp_table_next(t, 0); i < n; i = sp_table_next(t, i + 1)) {
		const struct sp_entry *e = sp_table_at(t, i);

		/* a spinlock's wait spins: it is running time, not blocked */
		if (e && e->type != SP_TYPE_SPINLOCK)
			sum += sp_load_relaxed(&sp_entry_cold_r(e)->wait_ns);
	}
	return sum;
}
