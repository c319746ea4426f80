/*
 * tracebench.c - cost of one trace event: syncprof's per-thread buffers
 * against the seed design (QEMU simpletrace, 2011: one ring shared by all
 * threads, a compare-and-swap on its shared write index per event), in the
 * same run.
 *
 * Workload: each of T threads emits bursts of B events with A u64
 * arguments; between bursts every buffer is drained to a file (outside the
 * timed part), so the bursts measure emitting, not dropping.  A burst is
 * larger than half a buffer, so the writer thread is woken during it and
 * drains concurrently, as in a real run.  Modes, interleaved round after
 * round so that machine noise falls on each alike:
 *   off     SYNCPROF_TRACE() on a disabled event (the cost when off);
 *   percpu  syncprof: SYNCPROF_TRACE() into the thread's own ring;
 *   shared  the seed design, implemented here: CAS on one shared index,
 *           timestamp after the reservation, a per-record "valid" flag the
 *           writer waits for; same record layout, same clock (TSC), same
 *           total buffer memory (1 MiB per thread), writer woken likewise.
 * Prints the median ns per event of each mode and shared/percpu.
 *
 * Usage: tracebench [-t N[,N...]] [-b BURST] [-n BURSTS] [-a ARGS] [-r ROUNDS] [-s BYTES]
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "syncprof.h"

#define MAX_THREADS 64

enum { MODE_OFF, MODE_PERCPU, MODE_SHARED, N_MODES };
static const char *const mode_names[N_MODES] = { "off", "percpu", "shared" };

static unsigned ring_bytes = 1u << 20; /* the library default */
static unsigned n_threads = 1, burst = 0, n_bursts = 20, n_args = 4, rounds = 7;
static int ev_on, ev_off;
static pthread_barrier_t barrier;      /* the workers */
static pthread_barrier_t mode_barrier; /* the workers and main */
static pthread_t workers[MAX_THREADS];
static int cur_mode;
static double burst_ns[MAX_THREADS];

/* ---- the seed design: one shared ring -------------------------------- */

static struct {
	uint8_t *buf;
	uint64_t size, mask;
	uint64_t write_idx __attribute__((aligned(64))); /* shared by all writers */
	uint64_t read_idx __attribute__((aligned(64)));  /* the writer thread's */
	uint64_t dropped __attribute__((aligned(64)));
	uint32_t kick;
	int sleeping, stop;
	int fd;
	pthread_t thread;
} sr;

static long futex(uint32_t *u, int op, uint32_t v, const struct timespec *ts)
{
	return syscall(SYS_futex, u, op, v, ts, NULL, 0);
}

static uint8_t out_buf[1 << 20];

/* Drain whatever is committed, in order; returns bytes written. */
static size_t shared_drain(void)
{
	uint64_t r = sr.read_idx, w = __atomic_load_n(&sr.write_idx, __ATOMIC_ACQUIRE);
	size_t n = 0, total = 0;

	while (r < w) {
		uint64_t *hdr = (uint64_t *)(sr.buf + (r & sr.mask));
		uint64_t h;
		uint32_t size;

		/* Wait for the record's writer to mark it valid (bit 63): a
		 * preempted writer stalls the drain here (seed behaviour). */
		while (!((h = __atomic_load_n(hdr, __ATOMIC_ACQUIRE)) >> 63))
			;
		size = (uint32_t)(h >> 32) & 0x7fffffff;
		if ((h & 0xffff) == 0) { /* padding */
			__atomic_store_n(hdr, 0, __ATOMIC_RELAXED);
			r += size;
			__atomic_store_n(&sr.read_idx, r, __ATOMIC_RELEASE);
			continue;
		}
		if (n + size > sizeof(out_buf)) {
			if (write(sr.fd, out_buf, n) < 0)
				perror("tracebench: write");
			total += n;
			n = 0;
		}
		memcpy(out_buf + n, hdr, size);
		n += size;
		__atomic_store_n(hdr, 0, __ATOMIC_RELAXED);
		r += size;
		__atomic_store_n(&sr.read_idx, r, __ATOMIC_RELEASE);
	}
	if (n && write(sr.fd, out_buf, n) < 0)
		perror("tracebench: write");
	return total + n;
}

static void *shared_writer(void *arg)
{
	long period_ms = 100;

	(void)arg;
	while (!__atomic_load_n(&sr.stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts = { period_ms / 1000, period_ms % 1000 * 1000000L };
		uint32_t seq = __atomic_load_n(&sr.kick, __ATOMIC_ACQUIRE);

		__atomic_store_n(&sr.sleeping, 1, __ATOMIC_RELAXED);
		futex(&sr.kick, FUTEX_WAIT_PRIVATE, seq, &ts);
		__atomic_store_n(&sr.sleeping, 0, __ATOMIC_RELAXED);
		/* the same wake-up policy as syncprof's writer (src/trace/file.c) */
		period_ms = shared_drain() > 4096 ? 1 : period_ms * 2 > 100 ? 100 : period_ms * 2;
	}
	return NULL;
}

static inline void shared_emit(uint32_t tid, unsigned id, unsigned nargs, const uint64_t *args)
{
	uint32_t size = 24 + 8 * nargs;
	uint64_t old = __atomic_load_n(&sr.write_idx, __ATOMIC_RELAXED), pos, pad;
	uint64_t *w;

	do {
		/* A record that would straddle the end is preceded by padding
		 * up to the end (the writer skips it). */
		pos = old & sr.mask;
		pad = pos + size > sr.size ? sr.size - pos : 0;
		if (old + pad + size - __atomic_load_n(&sr.read_idx, __ATOMIC_ACQUIRE) > sr.size) {
			__atomic_fetch_add(&sr.dropped, 1, __ATOMIC_RELAXED);
			return;
		}
	} while (!__atomic_compare_exchange_n(&sr.write_idx, &old, old + pad + size, 1,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	if (pad)
		__atomic_store_n((uint64_t *)(sr.buf + pos), pad << 32 | 1ull << 63,
				 __ATOMIC_RELEASE);
	w = (uint64_t *)(sr.buf + ((old + pad) & sr.mask));
	w[1] = __rdtsc(); /* timestamp after the reservation, as the seed */
	w[2] = tid | (uint64_t)id << 32;
	for (unsigned i = 0; i < nargs; i++)
		w[3 + i] = args[i];
	__atomic_store_n(&w[0], (uint64_t)1 | (uint64_t)nargs << 16 | (uint64_t)size << 32 | 1ull << 63,
			 __ATOMIC_RELEASE);
	if (old + pad + size - __atomic_load_n(&sr.read_idx, __ATOMIC_RELAXED) > sr.size / 4 * 3 &&
	    __atomic_load_n(&sr.sleeping, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&sr.kick, 1, __ATOMIC_RELAXED);
		futex(&sr.kick, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
}

/* ---- workload ---------------------------------------------------------- */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int quit;

/* One run of the current mode: n_bursts timed bursts, drained between. */
static void run_bursts(unsigned idx, uint32_t tid)
{
	uint64_t a[6] = { idx, 0, 3, 4, 5, 6 };
	double total = 0;

	for (unsigned b = 0; b < n_bursts; b++) {
		double t0, t1;

		pthread_barrier_wait(&barrier);
		t0 = now_ns();
		switch (cur_mode) {
		case MODE_OFF:
			for (unsigned i = 0; i < burst; i++) {
				a[1] = i;
				SYNCPROF_TRACE(ev_off, a[0], a[1], a[2], a[3]);
			}
			break;
		case MODE_PERCPU:
			if (n_args == 4) {
				for (unsigned i = 0; i < burst; i++)
					SYNCPROF_TRACE(ev_on, a[0], i, a[2], a[3]);
			} else {
				for (unsigned i = 0; i < burst; i++) {
					a[1] = i;
					if (syncprof_trace_event_on((unsigned)ev_on))
						syncprof_trace_emit((unsigned)ev_on, n_args, a);
				}
			}
			break;
		case MODE_SHARED:
			for (unsigned i = 0; i < burst; i++) {
				a[1] = i;
				shared_emit(tid, (unsigned)ev_on, n_args, a);
			}
			break;
		}
		t1 = now_ns();
		total += t1 - t0;
		pthread_barrier_wait(&barrier);
		if (idx == 0) {
			/* Drain between bursts (not timed): the shared ring by
			 * its writer thread, which is the only reader. */
			if (cur_mode == MODE_SHARED) {
				while (__atomic_load_n(&sr.read_idx, __ATOMIC_ACQUIRE) !=
				       __atomic_load_n(&sr.write_idx, __ATOMIC_ACQUIRE)) {
					__atomic_fetch_add(&sr.kick, 1, __ATOMIC_RELAXED);
					futex(&sr.kick, FUTEX_WAKE_PRIVATE, 1, NULL);
					sched_yield();
				}
			} else {
				syncprof_trace_flush();
			}
		}
	}
	burst_ns[idx] = total / ((double)burst * n_bursts);
}

/* Workers live for the whole run (rings stay mapped and faulted in, as in
 * a long-running program); the main thread sequences the modes. */
static void *worker(void *arg)
{
	unsigned idx = (unsigned)(uintptr_t)arg;
	uint32_t tid = (uint32_t)syscall(SYS_gettid);

	for (;;) {
		pthread_barrier_wait(&mode_barrier); /* mode set */
		if (__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			return NULL;
		run_bursts(idx, tid);
		pthread_barrier_wait(&mode_barrier); /* mode done */
	}
}


static double run_once(int mode)
{
	double sum = 0;

	cur_mode = mode;
	pthread_barrier_wait(&mode_barrier);
	pthread_barrier_wait(&mode_barrier);
	for (unsigned i = 0; i < n_threads; i++)
		sum += burst_ns[i];
	return sum / n_threads;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void usage(FILE *f)
{
	fputs("Usage: tracebench [-t N[,N...]] [-b BURST] [-n BURSTS] [-a ARGS] [-r ROUNDS] [-s BYTES]\n"
	      "  -t  thread counts, comma-separated (default 1,2)\n"
	      "  -b  events per burst (default: 2/3 of a buffer)\n"
	      "  -n  bursts per run (default 20)     -a  u64 arguments per event, 0-6 (default 4)\n"
	      "  -r  rounds, medians taken (default 7)\n"
	      "  -s  buffer bytes per thread (default 1048576, the library default; the shared\n"
	      "      ring gets THREADS x that)\n",
	      f);
}

/* One thread count: the shared ring sized for it, a worker pool, the
 * rounds, the table.  Returns the percpu median. */
static int run_threads(unsigned threads, const char *spath)
{
	double ns[N_MODES][64], med[N_MODES];
	uint64_t dropped0 = syncprof_trace_dropped();

	n_threads = threads;
	memset(&sr.write_idx, 0, sizeof(sr.write_idx));
	sr.read_idx = 0;
	sr.dropped = 0;
	sr.stop = 0;
	sr.size = (uint64_t)ring_bytes * n_threads;
	for (sr.mask = 1; sr.mask < sr.size; sr.mask <<= 1)
		;
	sr.size = sr.mask;
	sr.mask--;
	sr.buf = calloc(1, sr.size);
	sr.fd = open(spath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (!sr.buf || sr.fd < 0 || pthread_create(&sr.thread, NULL, shared_writer, NULL)) {
		perror("tracebench");
		return -1;
	}
	printf("\n%u thread%s:\n", n_threads, n_threads == 1 ? "" : "s");
	quit = 0;
	pthread_barrier_init(&barrier, NULL, n_threads);
	pthread_barrier_init(&mode_barrier, NULL, n_threads + 1);
	for (unsigned i = 0; i < n_threads; i++)
		if (pthread_create(&workers[i], NULL, worker, (void *)(uintptr_t)i)) {
			perror("tracebench: pthread_create");
			return -1;
		}
	for (int m = 0; m < N_MODES; m++)
		run_once(m); /* warm-up: buffers mapped and faulted in */
	for (unsigned r = 0; r < rounds; r++)
		for (int m = 0; m < N_MODES; m++)
			ns[m][r] = run_once(m);
	__atomic_store_n(&quit, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&mode_barrier);
	for (unsigned i = 0; i < n_threads; i++)
		pthread_join(workers[i], NULL);
	pthread_barrier_destroy(&barrier);
	pthread_barrier_destroy(&mode_barrier);
	for (int m = 0; m < N_MODES; m++)
		med[m] = median(ns[m], rounds);
	printf("%-8s %10s\n", "mode", "ns/event");
	for (int m = 0; m < N_MODES; m++)
		printf("%-8s %10.2f\n", mode_names[m], med[m]);
	printf("shared/percpu: %.2fx   dropped: percpu %llu, shared %llu (of %llu each)\n",
	       med[MODE_SHARED] / med[MODE_PERCPU],
	       (unsigned long long)(syncprof_trace_dropped() - dropped0),
	       (unsigned long long)sr.dropped,
	       (unsigned long long)burst * n_bursts * n_threads * (rounds + 1));
	__atomic_store_n(&sr.stop, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&sr.kick, 1, __ATOMIC_RELAXED);
	futex(&sr.kick, FUTEX_WAKE_PRIVATE, 1, NULL);
	pthread_join(sr.thread, NULL);
	close(sr.fd);
	free(sr.buf);
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/tracebench-XXXXXX", path[128], spath[128];
	char thread_list[128] = "1,2";
	int c, rc = 0;

	while ((c = getopt(argc, argv, "t:b:n:a:r:s:h")) != -1) {
		switch (c) {
		case 't':
			memset(thread_list, 0, sizeof(thread_list));
			snprintf(thread_list, sizeof(thread_list) - 1, "%s", optarg);
			break;
		case 'b': burst = (unsigned)atoi(optarg); break;
		case 'n': n_bursts = (unsigned)atoi(optarg); break;
		case 'a': n_args = (unsigned)atoi(optarg); break;
		case 'r': rounds = (unsigned)atoi(optarg); break;
		case 's': ring_bytes = (unsigned)atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!burst) /* two thirds of a buffer: past the wake-up threshold */
		burst = ring_bytes / (24 + 8 * n_args) * 2 / 3;
	if (!burst || !n_bursts || n_args > 6 || !rounds || rounds > 64 || ring_bytes < 256) {
		usage(stderr);
		return 2;
	}
	for (char *t = strtok(thread_list, ","); t; t = strtok(NULL, ",")) {
		int n = atoi(t);

		if (n < 1 || n > MAX_THREADS) {
			usage(stderr);
			return 2;
		}
	}
	if (!mkdtemp(dir)) {
		perror("tracebench: mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/percpu.trace", dir);
	snprintf(spath, sizeof(spath), "%s/shared.trace", dir);

	ev_on = syncprof_trace_register("bench", NULL, n_args);
	ev_off = syncprof_trace_register("bench_off", NULL, 4);
	syncprof_trace_set_event(ev_off, 0);
	syncprof_trace_set_buffer_size(ring_bytes);
	if (syncprof_trace_open(path)) {
		fprintf(stderr, "tracebench: cannot open %s\n", path);
		return 1;
	}
	printf("tracebench: %u B buffers per thread, bursts of %u events x %u, %u args/event "
	       "(%u bytes), %u rounds (medians)\n",
	       ring_bytes, burst, n_bursts, n_args, 24 + 8 * n_args, rounds);
	/* strtok wrote NULs: walk the list again by hand */
	for (char *t = thread_list; t < thread_list + sizeof(thread_list) && *t;
	     t += strlen(t) + 1)
		if (run_threads((unsigned)atoi(t), spath)) {
			rc = 1;
			break;
		}
	syncprof_trace_close();
	unlink(path);
	unlink(spath);
	rmdir(dir);
	return rc;
}
