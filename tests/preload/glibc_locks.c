/*
 * glibc_locks.c - waits on glibc's own locks (record/glibc_lock.c), with
 * holders that hold them for known times, checked against what the
 * program measures around its own calls.
 *
 *   glibc_locks stdio     a thread holds a FILE with flockfile() 3 x 150 ms,
 *                         sleeping inside, while 3 threads fprintf() to it
 *                         (log_line()); each times its own calls.  The
 *                         glibc_lock rows at log_line must hold those waits
 *                         (within 10% of the program's own total), be named
 *                         "stdio lock of FILE 0x... (fd N)", and fprintf
 *                         return what it returns bare, errno untouched.
 *   glibc_locks malloc    (MALLOC_ARENA_MAX=1) a thread in malloc_stats()
 *                         holds the main arena's lock while its write to
 *                         stderr (a full pipe) blocks, for ~200 ms; 3 threads
 *                         malloc(4096) meanwhile (malloc_worker()); rows at
 *                         malloc_worker, named "malloc arena 0x...
 *                         (main arena)", within 10% of their own timing.
 *   glibc_locks signals   the stdio case with SIGUSR1 sent again and again
 *                         to the waiting threads, handler with and without
 *                         SA_RESTART: fprintf still returns its count, never
 *                         EINTR (glibc's wait retries, as ours must).
 *   glibc_locks fork      the stdio case in a forked child, reported there.
 *   glibc_locks exec      a fork+exec child of this program with the preload
 *                         taken out of its environment runs the stdio case
 *                         bare (no profiler, no patch) and exits 0.
 *   glibc_locks bare      the stdio case without the profiler: semantics only.
 *   glibc_locks off       the stdio case under glibc_locks=0: no glibc_lock row.
 *
 * Run preloaded (LD_PRELOAD), or built with -DLINKED against libsyncprof
 * (compiled in: SYNCPROF_OPTIONS=enabled=1), where the report comes from
 * syncprof_report() directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "preload_util.h"
#include "../now_ns.h"

#define WORKERS 3
#define ROUNDS 3
#define HOLD_MS 150

static FILE *out;
static atomic_int held;     /* the holder has the lock (round number) */
static atomic_int arrived;  /* workers that are about to call */
static atomic_int finished; /* calls made */
static atomic_llong measured_ns;
static atomic_int handler_runs;
static pid_t worker_tids[WORKERS];
static int with_signals;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000l };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The program's call site of the stdio rows. */
__attribute__((noinline)) static void log_line(int worker, int round)
{
	long long t0;
	int rc, expect = snprintf(NULL, 0, "worker %d round %d\n", worker, round);

	errno = EDOM;
	t0 = now_ns();
	rc = fprintf(out, "worker %d round %d\n", worker, round);
	atomic_fetch_add(&measured_ns, now_ns() - t0);
	T_ASSERT_INT(rc, ==, expect);
	T_ASSERT_INT(errno, ==, EDOM);
}

static void *stdio_worker(void *arg)
{
	int w = (int)(long)arg;

	worker_tids[w] = gettid();
	for (int r = 1; r <= ROUNDS; r++) {
		while (atomic_load(&held) != r)
			sched_yield();
		atomic_fetch_add(&arrived, 1);
		log_line(w, r);
		atomic_fetch_add(&finished, 1);
	}
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	atomic_fetch_add(&handler_runs, 1);
}

static void install_usr1(int restart)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigemptyset(&sa.sa_mask);
	T_ASSERT_INT(sigaction(SIGUSR1, &sa, NULL), ==, 0);
}

/* Hold @out ROUNDS times for HOLD_MS while the workers fprintf to it. */
static void stdio_case(void)
{
	pthread_t t[WORKERS];

	out = fopen("/dev/null", "w");
	T_ASSERT(out != NULL);
	atomic_store(&held, 0);
	atomic_store(&finished, 0);
	atomic_store(&measured_ns, 0);
	for (long i = 0; i < WORKERS; i++)
		T_ASSERT_INT(pthread_create(&t[i], NULL, stdio_worker, (void *)i), ==, 0);
	for (int r = 1; r <= ROUNDS; r++) {
		flockfile(out);
		atomic_store(&arrived, 0);
		atomic_store(&held, r);
		while (atomic_load(&arrived) < WORKERS)
			sched_yield();
		if (!with_signals) {
			sleep_ms(HOLD_MS);
		} else { /* interrupt the waiters' futex waits, odd rounds SA_RESTART */
			install_usr1(r % 2);
			for (int k = 0; k < 10; k++) {
				sleep_ms(HOLD_MS / 10);
				for (int i = 0; i < WORKERS; i++)
					tgkill(getpid(), worker_tids[i], SIGUSR1);
			}
		}
		funlockfile(out);
		while (atomic_load(&finished) < WORKERS * r)
			sched_yield();
	}
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
}

/* The sum of @key over the JSON rows that contain both needles. */
static long long rows_sum2(const char *json, const char *a, const char *b, const char *key)
{
	char pat[64];
	long long sum = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (const char *row = strstr(json, "{\"type\""); row; row = strstr(row + 1, "{\"type\"")) {
		const char *end = strstr(row + 1, "{\"type\"");
		size_t len = end ? (size_t)(end - row) : strlen(row);
		char *copy = strndup(row, len);
		const char *k = strstr(copy, pat);

		if (strstr(copy, a) && strstr(copy, b) && k)
			sum += atoll(k + strlen(pat));
		free(copy);
	}
	return sum;
}

/* The rows of @func: glibc_lock, named @name, within 10% of the program's
 * own timing. */
static void check_rows(const char *func, const char *name, int min_waits)
{
	char fn[128];
	char *json = t_report(1, 1);
	long long wait, measured = atomic_load(&measured_ns);
	long long waits;

	snprintf(fn, sizeof(fn), "\"function\":\"%s\"", func);
	wait = rows_sum2(json, fn, "\"type\":\"glibc_lock\"", "wait_ns");
	waits = rows_sum2(json, fn, "\"type\":\"glibc_lock\"", "contended");
	if (waits < min_waits || wait < measured * 9 / 10 || wait > measured * 11 / 10 ||
	    !strstr(json, name))
		fprintf(stderr, "%s\n", json);
	T_ASSERT_INT(waits, >=, min_waits);
	T_ASSERT_INT(wait, >=, measured * 9 / 10);
	T_ASSERT_INT(wait, <=, measured * 11 / 10);
	T_ASSERT_CONTAINS(json, name);
	printf("%s: %lld waits, %.1f ms recorded, %.1f ms measured by the program\n", func, waits,
	       wait / 1e6, measured / 1e6);
	free(json);
}

static void stdio_checked(void)
{
	char name[96];

	stdio_case();
	snprintf(name, sizeof(name), "\"lock_name\":\"stdio lock of FILE %p (fd %d)\"",
		 (void *)out, fileno(out));
	/* each worker waited at least once per round */
	check_rows("log_line", name, WORKERS * ROUNDS);
	fclose(out);
}

/* ---- malloc --------------------------------------------------------------- */

static atomic_int ready, go;
static atomic_int stats_tid;

__attribute__((noinline)) static void malloc_worker_call(void)
{
	long long t0 = now_ns();
	void *p = malloc(4096); /* past the tcache: the arena's lock */

	atomic_fetch_add(&measured_ns, now_ns() - t0);
	T_ASSERT(p != NULL);
	free(p);
}

static void *malloc_worker(void *arg)
{
	(void)arg;
	free(malloc(4096)); /* its tcache and arena, before the hold */
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		sched_yield();
	atomic_fetch_add(&arrived, 1);
	malloc_worker_call();
	return NULL;
}

static void *stats_thread(void *arg)
{
	(void)arg;
	atomic_store(&stats_tid, gettid());
	malloc_stats(); /* the main arena locked while it writes to the full pipe */
	return NULL;
}

/* 1 while thread @tid sits in write(2) (/proc: its system call number);
 * open and read, no stdio: no malloc while the arena may be held. */
static int in_write(int tid)
{
	char path[64], buf[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n >= 2 && buf[0] == '1' && buf[1] == ' ';
}

/*
 * No malloc in this thread between the stats thread's start and the end
 * of the drain: the stats thread holds the arena until the pipe drains.
 */
static void malloc_case(void)
{
	int fds[2], saved_err = dup(2), fl;
	pthread_t st, t[WORKERS];
	static char buf[65536];
	char name[] = "\"lock_name\":\"malloc arena 0x";

	T_ASSERT(getenv("MALLOC_ARENA_MAX") && !strcmp(getenv("MALLOC_ARENA_MAX"), "1"));
	T_ASSERT_INT(pipe(fds), ==, 0);
	fcntl(fds[1], F_SETPIPE_SZ, 4096);
	fl = fcntl(fds[1], F_GETFL);
	fcntl(fds[1], F_SETFL, fl | O_NONBLOCK);
	while (write(fds[1], buf, 512) > 0)
		;
	while (write(fds[1], buf, 1) > 0)
		; /* full */
	fcntl(fds[1], F_SETFL, fl);
	fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
	atomic_store(&measured_ns, 0);
	for (long i = 0; i < WORKERS; i++)
		T_ASSERT_INT(pthread_create(&t[i], NULL, malloc_worker, (void *)i), ==, 0);
	while (atomic_load(&ready) < WORKERS)
		sched_yield();
	fflush(stderr);
	dup2(fds[1], 2);
	T_ASSERT_INT(pthread_create(&st, NULL, stats_thread, NULL), ==, 0);
	while (!atomic_load(&stats_tid) || !in_write(atomic_load(&stats_tid)))
		sleep_ms(1);
	atomic_store(&go, 1);
	while (atomic_load(&arrived) < WORKERS)
		sched_yield();
	sleep_ms(200);
	for (;;) { /* drain until malloc_stats() is done */
		if (read(fds[0], buf, sizeof(buf)) <= 0) {
			if (pthread_tryjoin_np(st, NULL) == 0)
				break;
			sleep_ms(1);
		}
	}
	dup2(saved_err, 2);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	check_rows("malloc_worker_call", name, WORKERS);
	{
		char *json = t_report(1, 1);

		T_ASSERT_CONTAINS(json, "(main arena)\"");
		free(json);
	}
}

/* ---- fork and exec -------------------------------------------------------- */

static int wait_child(pid_t pid)
{
	int status;

	T_ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void fork_case(void)
{
	pid_t pid = fork();

	T_ASSERT(pid >= 0);
	if (pid == 0) {
		stdio_checked();
		_exit(0);
	}
	T_ASSERT_INT(wait_child(pid), ==, 0);
}

static void exec_case(const char *self)
{
	pid_t pid = fork();

	T_ASSERT(pid >= 0);
	if (pid == 0) {
		unsetenv("LD_PRELOAD");
		unsetenv("SYNCPROF_OPTIONS");
		execl(self, self, "bare", (char *)NULL);
		_exit(127);
	}
	T_ASSERT_INT(wait_child(pid), ==, 0);
}

#ifdef LINKED
/* Compiled in: a reference that links libsyncprof (and its constructor). */
int (*volatile t_linked_report)(FILE *, const struct syncprof_report_options *) = syncprof_report;
#endif

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "stdio";

	if (!strcmp(mode, "bare")) { /* semantics only, whatever is loaded */
		stdio_case();
		with_signals = 1;
		stdio_case();
		puts("glibc_locks bare: ok");
		return 0;
	}
	t_require_preload();
	if (!strcmp(mode, "stdio")) {
		stdio_checked();
	} else if (!strcmp(mode, "off")) { /* glibc_locks=0: no such rows */
		char *json;

		stdio_case();
		json = t_report(1, 1);
		T_ASSERT(strstr(json, "\"type\":\"glibc_lock\"") == NULL);
		free(json);
	} else if (!strcmp(mode, "signals")) {
		with_signals = 1;
		stdio_case();
		T_ASSERT_INT(atomic_load(&handler_runs), >=, WORKERS);
	} else if (!strcmp(mode, "malloc")) {
		malloc_case();
	} else if (!strcmp(mode, "fork")) {
		fork_case();
	} else if (!strcmp(mode, "exec")) {
		exec_case(argv[0]);
	} else {
		T_FAIL("unknown mode");
	}
	printf("glibc_locks %s: ok\n", mode);
	return 0;
}
