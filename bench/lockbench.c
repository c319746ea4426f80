/*
 * lockbench.c - the atomic_add-bench -m pattern of QEMU, for syncprof.
 *
 * N threads increment M mutex-protected counters picked at random for a
 * fixed time.  One invocation measures, round after round so that machine
 * noise falls on every mode alike:
 *   plain  pthread_mutex_lock/unlock, no syncprof;
 *   off    the same loop compiled with syncprof/instrument.h, profiling off;
 *   on     the same instrumented loop, profiling on.
 *   libc   the plain loop calling glibc's own functions, found with dlsym()
 *          in libc.so.6 itself: never interposed;
 *   floor  libc, plus the least any profiler that counts acquisitions per
 *          (site, object) must do inline: find the object's counter in a
 *          thread-local direct-mapped table (its slot from the lock's
 *          address, the key compared, no site lookup: one site), and
 *          increment it.  No flag test, no function call, no trylock
 *          first, no collision handling: a lower bound, for the cost goals
 *          (docs/cost.md), not a design;
 *   floorhold  floor, plus the least hold tracking must do: publish the
 *          lock as held by this thread (object, site and the coarse tick
 *          in a thread-local list, the list's length stored last) and
 *          take it off at the unlock (compare, store the length);
 *   floortry  floor, plus what a probe needs that can be switched on and
 *          off at run time and tells a contended acquisition from an
 *          uncontended one without reading a clock: a flag tested before
 *          the lock and before the unlock, the lock tried first (a failed
 *          try would be timed), a key of two words (object and site),
 *          and the thread's counters reached through TLS on every
 *          operation, as a probe called per lock call must - syncprof's
 *          compiled-in fast path with one site field where it compares
 *          three;
 *   floortryhold  floortry, plus a held list reached through TLS (object,
 *          site, tick, the state word stored last; the pop compares
 *          object and tick) after the unlock (LOCKBENCH_POP=before: inside
 *          the critical section), and one hold in 64 (LOCKBENCH_HOLD_SAMPLE=N:
 *          in N; 0: none) timed with two TSC reads (syncprof's sample
 *          of a row past its first 256 holds; 16 until 2026-11-28):
 *          the floor of the hold=1 goal compiled in;
 *          LOCKBENCH_OWNER=1 adds each lock's last owner in a table by
 *          the lock's address, read in the critical section and written
 *          when it changes: the least exact owner changes cost;
 *          LOCKBENCH_OWNER=2: the same read and write after the unlock;
 *          LOCKBENCH_OWNER=3: in the critical section, but in a word of
 *          the lock's own cache line (glibc's __count, unused by a mutex
 *          that is not recursive) instead of a table;
 *   floorlock  floortry with the lock called, not tried first: it cannot
 *          tell a contended acquisition (so it is no profiler's floor);
 *          floortry against it is what the try first costs, floorlock
 *          against floor what the flag, the key and TLS cost;
 *   floornear  floor with the counter found through a table of pointers
 *          (slot from the lock's address) to counters allocated in order
 *          of first use: what one more dependent load costs, the shape of
 *          syncprof's near[] cache (record.h);
 * and prints the median ns per operation (lock + increment + unlock) and
 * throughput of each mode, and each mode's ratio to the baseline: libc if
 * it is measured, else plain; and, last, the median number of times a
 * thread went to sleep per 1,000 operations (voluntary context switches,
 * getrusage(): with several threads on one lock, mostly futex waits, each
 * a system call for the waiter and one for its waker - where the time of
 * a slower hand-off goes).  Run it under LD_PRELOAD=libsyncprof-preload.so
 * with -M libc,plain to measure the interposer in one process: "plain" is
 * then the interposed loop, "libc" the unprofiled one (bench/README.md).
 *
 * With -o, every operation takes one more mutex, the same for all, around
 * the counter's: each lock is then taken inside another (what lock-order
 * checking looks at: one edge per counter, known after its first use).
 * With -T, the counter's mutex is taken by spinning on trylock (the
 * failed-trylock case: with 2 threads on 1 lock most tries fail).
 *
 * Usage: lockbench [-t THREADS] [-m LOCKS] [-o] [-T] [-d MS] [-r ROUNDS] [-M MODES]
 */
#include <dlfcn.h>
#include <sys/resource.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floor_held.h"
#include "xorshift.h"
#include <time.h>

struct counter {
	pthread_mutex_t lock;
	unsigned long value;
} __attribute__((aligned(64)));

struct worker {
	pthread_t thread;
	unsigned seed;
	unsigned long ops;
	int mode;
	int tid; /* floortryhold's owner, LOCKBENCH_OWNER */
	unsigned long owner_changes;
} __attribute__((aligned(64)));

static struct counter *counters;
static unsigned n_locks = 1;
static int nested;                 /* -o: take outer around each counter's lock */
static int spin_try;               /* -T: take the counter's lock by spinning on trylock */
static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static int stop;
static int go;
static int initially_enabled; /* profiling state before main() */


static void wait_go(void)
{
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
}

/* The plain loop: compiled before instrument.h is included. */
static void *loop_plain(void *arg)
{
	struct worker *w = arg;
	unsigned long ops = 0;

	wait_go();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct counter *c = &counters[xorshift(&w->seed) % n_locks];

		if (nested)
			pthread_mutex_lock(&outer);
		if (spin_try)
			while (pthread_mutex_trylock(&c->lock))
				;
		else
			pthread_mutex_lock(&c->lock);
		c->value++;
		pthread_mutex_unlock(&c->lock);
		if (nested)
			pthread_mutex_unlock(&outer);
		ops++;
	}
	w->ops = ops;
	return NULL;
}

/* glibc's own lock and unlock, bypassing any interposer. */
static int (*libc_lock)(pthread_mutex_t *);
static int (*libc_trylock)(pthread_mutex_t *);
static int (*libc_unlock)(pthread_mutex_t *);

static int libc_resolve(void)
{
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);

	if (!libc)
		return -1;
	libc_lock = (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_lock");
	libc_trylock = (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_trylock");
	libc_unlock = (int (*)(pthread_mutex_t *))dlsym(libc, "pthread_mutex_unlock");
	return libc_lock && libc_trylock && libc_unlock ? 0 : -1;
}


/* floor: a thread's counters, slot by lock address (4096 slots: no
 * collisions for -m up to 4096 counters 64 bytes apart). */
#define FLOOR_SLOTS 4096
struct floor_entry {
	const void *obj;
	const void *site;
	unsigned long acquisitions;
} __attribute__((aligned(64)));
static int floor_flags = 1; /* floortry's "profiling on" */

static uint64_t floor_tick; /* stands for the hold ticker's tick */

/* floortry and floortryhold reach the thread's counters and held list
 * through TLS on every operation, as a probe called per lock must (the
 * other floors keep them in the loop's registers and on its stack). */
static __thread struct floor_entry *floor_tls_table __attribute__((tls_model("initial-exec")));
static __thread struct floor_block *floor_tls_block __attribute__((tls_model("initial-exec")));
/* floortryhold pops after the unlock, as syncprof does (hold.h,
 * sp_hold_release_begin()); LOCKBENCH_POP=before: inside the critical
 * section, as syncprof did until 2026-11-28. */
static int floor_pop_before;
/* LOCKBENCH_OWNER=1: floortryhold also keeps each lock's last owner in a
 * table by address, as syncprof does for its owner changes; 2: after the
 * unlock; 3: in the mutex's own __count instead. */
static int floor_owner;
#define FLOOR_OWNERS 16384
static int floor_owners[FLOOR_OWNERS] __attribute__((aligned(64)));
static unsigned floor_sample = 64; /* floortryhold: 1 in this many timed; 0: none
				    * (LOCKBENCH_HOLD_SAMPLE) */

/* What libc_loop() adds to glibc's own calls (lockbench's modes). */
enum floor_kind {
	LIBC,          /* nothing */
	FLOOR,         /* the counter, in a table by the lock's address */
	FLOOR_HOLD,    /* and a held list on the loop's stack */
	FLOOR_NEAR,    /* the counter through a table of pointers */
	FLOOR_TRY,     /* FLOOR with a flag, the try first, a site, TLS */
	FLOOR_TRYHOLD, /* FLOOR_TRY with a held list through TLS, sampled */
	FLOOR_LOCK,    /* FLOOR_TRY with the lock called, not tried first */
};

/* glibc's own calls and what @kind adds (a constant: each caller gets its
 * own copy, so the libc baseline has none of the rest). */
static inline __attribute__((always_inline)) void *libc_loop(struct worker *w,
							     enum floor_kind kind)
{
	struct floor_block stack_block = { 0 };
	unsigned long ops = 0;
	struct floor_entry *t = NULL;
	struct floor_entry **nearp = NULL;
	unsigned n_used = 0, left = floor_sample, no_left = 0;

	if (kind != LIBC && !(t = calloc(FLOOR_SLOTS, sizeof(*t))))
		return NULL;
	if (kind == FLOOR_NEAR && !(nearp = calloc(FLOOR_SLOTS, sizeof(*nearp)))) {
		free(t);
		return NULL;
	}
	if (kind >= FLOOR_TRY) {
		floor_tls_table = t;
		if (!(floor_tls_block = calloc(1, sizeof(*floor_tls_block)))) {
			free(t);
			return NULL;
		}
	}
	wait_go();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct counter *c = &counters[xorshift(&w->seed) % n_locks];

		if (nested)
			libc_lock(&outer);
		if (spin_try) {
			while (libc_trylock(&c->lock))
				;
		} else if (kind >= FLOOR_TRY) {
			if (__atomic_load_n(&floor_flags, __ATOMIC_RELAXED)) {
				struct floor_entry *e =
					&__atomic_load_n(&floor_tls_table, __ATOMIC_RELAXED)
						 [((uintptr_t)&c->lock >> 6) & (FLOOR_SLOTS - 1)];

				if (__builtin_expect(e->obj != &c->lock || e->site != (void *)libc_loop, 0)) {
					e->obj = &c->lock; /* first use of the slot */
					e->site = (void *)libc_loop;
				}
				if (kind == FLOOR_LOCK)
					libc_lock(&c->lock); /* no contention told */
				else if (__builtin_expect(libc_trylock(&c->lock), 0))
					libc_lock(&c->lock); /* contended: would be timed */
				e->acquisitions++;
			} else {
				libc_lock(&c->lock);
			}
		} else {
			libc_lock(&c->lock);
		}
		if (kind == FLOOR_NEAR) {
			struct floor_entry **np = &nearp[((uintptr_t)&c->lock >> 6) & (FLOOR_SLOTS - 1)];
			struct floor_entry *e = *np;

			if (__builtin_expect(!e || e->obj != &c->lock, 0)) {
				e = *np = &t[n_used++];
				e->obj = &c->lock;
			}
			e->acquisitions++;
		} else if (kind == FLOOR || kind == FLOOR_HOLD) {
			struct floor_entry *e = &t[((uintptr_t)&c->lock >> 6) & (FLOOR_SLOTS - 1)];

			if (__builtin_expect(e->obj != &c->lock, 0))
				e->obj = &c->lock; /* first use of the slot */
			e->acquisitions++;
		}
		if (kind == FLOOR_HOLD)
			floor_push(&stack_block, &c->lock, (uintptr_t)libc_loop, &floor_tick, &no_left, 0);
		if (kind == FLOOR_TRYHOLD && (floor_owner == 1 || floor_owner == 3)) {
			/* the last owner of the lock, by its address: an owner
			 * change is counted and written (syncprof's
			 * sp_hold_last_owner, hold.h); 3: in the lock's own
			 * cache line instead, glibc's __count, which a mutex
			 * that is not recursive leaves unused */
			int *o = floor_owner == 3 ? (int *)&c->lock.__data.__count
						  : &floor_owners[((uintptr_t)&c->lock >> 5) &
								  (FLOOR_OWNERS - 1)];

			if (__builtin_expect(__atomic_load_n(o, __ATOMIC_RELAXED) != w->tid, 0)) {
				__atomic_store_n(o, w->tid, __ATOMIC_RELAXED);
				w->owner_changes++;
			}
		}
		if (kind == FLOOR_TRYHOLD && __atomic_load_n(&floor_flags, __ATOMIC_RELAXED))
			floor_push(__atomic_load_n(&floor_tls_block, __ATOMIC_RELAXED), &c->lock,
				   (uintptr_t)libc_loop, &floor_tick, &left, floor_sample);
		c->value++;
		if (kind == FLOOR_TRYHOLD && floor_pop_before &&
		    __atomic_load_n(&floor_flags, __ATOMIC_RELAXED))
			floor_pop(__atomic_load_n(&floor_tls_block, __ATOMIC_RELAXED), &c->lock,
				  &floor_tick);
		if (kind == FLOOR_HOLD)
			floor_pop(&stack_block, &c->lock, &floor_tick);
		if ((kind == FLOOR_TRY || kind == FLOOR_LOCK) &&
		    __builtin_expect(__atomic_load_n(&floor_flags, __ATOMIC_RELAXED) & 2, 0))
			__atomic_store_n(&floor_tick, 0, __ATOMIC_RELAXED); /* stands for an unlock hook */
		libc_unlock(&c->lock);
		if (kind == FLOOR_TRYHOLD && !floor_pop_before &&
		    __atomic_load_n(&floor_flags, __ATOMIC_RELAXED))
			floor_pop(__atomic_load_n(&floor_tls_block, __ATOMIC_RELAXED), &c->lock,
				  &floor_tick);
		if (kind == FLOOR_TRYHOLD && floor_owner == 2) {
			/* the table's, after the unlock */
			int *o = &floor_owners[((uintptr_t)&c->lock >> 5) & (FLOOR_OWNERS - 1)];

			if (__builtin_expect(__atomic_load_n(o, __ATOMIC_RELAXED) != w->tid, 0)) {
				__atomic_store_n(o, w->tid, __ATOMIC_RELAXED);
				w->owner_changes++;
			}
		}
		if (nested)
			libc_unlock(&outer);
		ops++;
	}
	w->ops = ops;
	free(t);
	free(nearp);
	if (kind >= FLOOR_TRY) {
		free(floor_tls_block);
		floor_tls_block = NULL;
		floor_tls_table = NULL;
	}
	return NULL;
}

#define LIBC_LOOP(name, kind)                                                         \
	static void *loop_##name(void *arg)                                           \
	{                                                                             \
		return libc_loop(arg, kind);                                          \
	}
LIBC_LOOP(libc, LIBC)
LIBC_LOOP(floor, FLOOR)
LIBC_LOOP(floorhold, FLOOR_HOLD)
LIBC_LOOP(floornear, FLOOR_NEAR)
LIBC_LOOP(floortry, FLOOR_TRY)
LIBC_LOOP(floortryhold, FLOOR_TRYHOLD)
LIBC_LOOP(floorlock, FLOOR_LOCK)
#undef LIBC_LOOP

#include <syncprof/instrument.h>

/* The same loop, instrumented: lock calls go through syncprof. */
static void *loop_instrumented(void *arg)
{
	struct worker *w = arg;
	unsigned long ops = 0;

	wait_go();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct counter *c = &counters[xorshift(&w->seed) % n_locks];

		if (nested)
			pthread_mutex_lock(&outer);
		if (spin_try)
			while (pthread_mutex_trylock(&c->lock))
				;
		else
			pthread_mutex_lock(&c->lock);
		c->value++;
		pthread_mutex_unlock(&c->lock);
		if (nested)
			pthread_mutex_unlock(&outer);
		ops++;
	}
	w->ops = ops;
	return NULL;
}

enum { MODE_PLAIN, MODE_OFF, MODE_ON, MODE_LIBC, MODE_FLOOR, MODE_FLOORHOLD, MODE_FLOORNEAR,
       MODE_FLOORTRY, MODE_FLOORTRYHOLD, MODE_FLOORLOCK, N_MODES };
static const char *const mode_names[N_MODES] = { "plain", "off", "on", "libc", "floor",
						 "floorhold", "floornear", "floortry",
						 "floortryhold", "floorlock" };
static void *(*const loops[N_MODES])(void *) = { loop_plain,	     loop_instrumented,
						 loop_instrumented, loop_libc,
						 loop_floor,	     loop_floorhold, loop_floornear,
						 loop_floortry, loop_floortryhold, loop_floorlock };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The process's voluntary context switches so far, exited threads'
 * included. */
static long sleeps_now(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_nvcsw;
}

/* One timed run; returns ns per operation per thread, and in *mops and
 * *sleeps the throughput and the sleeps per 1,000 operations. */
static double run_once(int mode, unsigned n_threads, unsigned ms, double *mops, double *sleeps)
{
	long s0;
	struct worker *w = calloc(n_threads, sizeof(*w));
	struct timespec d = { ms / 1000, (long)(ms % 1000) * 1000000L };
	unsigned long total = 0, check = 0;
	double t0, t1;

	if (!w) {
		perror("lockbench");
		exit(1);
	}
	for (unsigned i = 0; i < n_locks; i++)
		counters[i].value = 0;
	/* plain leaves profiling as it was at start-up: off, or - under the
	 * preload library - on unless SYNCPROF_OPTIONS says enabled=0. */
	if (mode == MODE_ON || ((mode == MODE_PLAIN || mode == MODE_LIBC) && initially_enabled))
		syncprof_enable();
	else
		syncprof_disable();
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&go, 0, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n_threads; i++) {
		w[i].seed = 2463534242u + i * 7919u;
		w[i].tid = (int)i + 1;
		w[i].mode = mode;
		if (pthread_create(&w[i].thread, NULL, loops[mode], &w[i])) {
			perror("lockbench: pthread_create");
			exit(1);
		}
	}
	s0 = sleeps_now();
	t0 = now_s();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	nanosleep(&d, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < n_threads; i++) {
		pthread_join(w[i].thread, NULL);
		total += w[i].ops;
	}
	t1 = now_s();
	syncprof_disable();
	for (unsigned i = 0; i < n_locks; i++)
		check += counters[i].value;
	if (check != total) {
		fprintf(stderr, "lockbench: counters sum to %lu, threads counted %lu\n", check, total);
		exit(1);
	}
	free(w);
	/* less the main thread's nanosleep() and joins: a few in millions */
	*sleeps = (double)(sleeps_now() - s0) * 1000.0 / (double)(total ? total : 1);
	*mops = (double)total / (t1 - t0) / 1e6;
	return (t1 - t0) * 1e9 * n_threads / (double)total;
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
	fputs("Usage: lockbench [-t THREADS] [-m LOCKS] [-o] [-T] [-d MS] [-r ROUNDS] [-M MODES]\n"
	      "  -t  threads (default 1)        -m  mutex-protected counters (default 1)\n"
	      "  -o  take one more mutex, the same for all, around each counter's\n"
	      "  -T  take each counter's mutex by spinning on trylock\n"
	      "  -d  ms per run (default 300)   -r  rounds, medians taken (default 7)\n"
	      "  -M  comma-separated modes among plain,off,on,libc,floor,floorhold,\n"
	      "      floornear,floortry,floortryhold,floorlock\n"
	      "      (default plain,off,on)\n"
	      "Ratios are against libc when it is measured, else against plain.\n"
	      "LOCKBENCH_HOLD_SAMPLE=N: floortryhold times one hold in N (default 64; 0: none).\n"
	      "LOCKBENCH_POP=before|after: floortryhold pops before or after the unlock (default after).\n"
	      "LOCKBENCH_OWNER=1|2|3: floortryhold also keeps each lock's last owner (owner changes):\n"
	      "  in a table, in the critical section (1) or after the unlock (2), or in the\n"
	      "  mutex's own unused __count word (3).\n",
	      f);
}

int main(int argc, char **argv)
{
	unsigned n_threads = 1, ms = 300, rounds = 7;
	int want[N_MODES] = { 1, 1, 1, 0 };
	double ns[N_MODES][64], mops[N_MODES][64], sl[N_MODES][64], med_ns[N_MODES], med_mops[N_MODES];
	int c, base;

	while ((c = getopt(argc, argv, "t:m:oTd:r:M:h")) != -1) {
		switch (c) {
		case 'o': nested = 1; break;
		case 'T': spin_try = 1; break;
		case 't': n_threads = (unsigned)atoi(optarg); break;
		case 'm': n_locks = (unsigned)atoi(optarg); break;
		case 'd': ms = (unsigned)atoi(optarg); break;
		case 'r': rounds = (unsigned)atoi(optarg); break;
		case 'M':
			memset(want, 0, sizeof(want));
			for (char *tok = strtok(optarg, ","); tok; tok = strtok(NULL, ",")) {
				int found = 0;

				for (int m = 0; m < N_MODES; m++)
					if (!strcmp(tok, mode_names[m]))
						want[m] = found = 1;
				if (!found) {
					fprintf(stderr, "lockbench: unknown mode '%s'\n", tok);
					return 2;
				}
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!n_threads || n_threads > 256 || !n_locks || !ms || !rounds || rounds > 64) {
		fputs("lockbench: THREADS 1..256, LOCKS >= 1, MS >= 1, ROUNDS 1..64\n", stderr);
		return 2;
	}
	if ((want[MODE_LIBC] || want[MODE_FLOOR] || want[MODE_FLOORHOLD] || want[MODE_FLOORNEAR] ||
	     want[MODE_FLOORTRY] || want[MODE_FLOORTRYHOLD] || want[MODE_FLOORLOCK]) && libc_resolve()) {
		fputs("lockbench: glibc's pthread_mutex_lock not found in libc.so.6\n", stderr);
		return 1;
	}
	if (getenv("LOCKBENCH_HOLD_SAMPLE"))
		floor_sample = (unsigned)strtoul(getenv("LOCKBENCH_HOLD_SAMPLE"), NULL, 10);
	if (getenv("LOCKBENCH_OWNER")) {
		const char *o = getenv("LOCKBENCH_OWNER");

		if (strlen(o) != 1 || o[0] < '0' || o[0] > '3') {
			fputs("lockbench: LOCKBENCH_OWNER is 0, 1, 2 or 3\n", stderr);
			return 2;
		}
		floor_owner = o[0] - '0';
	}
	if (getenv("LOCKBENCH_POP")) {
		if (strcmp(getenv("LOCKBENCH_POP"), "before") && strcmp(getenv("LOCKBENCH_POP"), "after")) {
			fputs("lockbench: LOCKBENCH_POP is before or after\n", stderr);
			return 2;
		}
		floor_pop_before = !strcmp(getenv("LOCKBENCH_POP"), "before");
	}
	initially_enabled = syncprof_is_enabled();
	if (posix_memalign((void **)&counters, 64, n_locks * sizeof(*counters))) {
		perror("lockbench");
		return 1;
	}
	for (unsigned i = 0; i < n_locks; i++)
		pthread_mutex_init(&counters[i].lock, NULL);

	printf("lockbench: %u thread%s, %u lock%s%s, %u ms x %u rounds (medians)\n", n_threads,
	       n_threads == 1 ? "" : "s", n_locks, n_locks == 1 ? "" : "s",
	       nested ? " inside an outer one" : "", ms, rounds);
	for (unsigned r = 0; r < rounds; r++)
		for (int m = 0; m < N_MODES; m++)
			if (want[m])
				ns[m][r] = run_once(m, n_threads, ms, &mops[m][r], &sl[m][r]);
	base = want[MODE_LIBC] ? MODE_LIBC : MODE_PLAIN;
	printf("%-9s %12s %12s %11s %-5s %11s %-5s %12s\n", "mode", "ns/op", "Mops/s", "time vs",
	       mode_names[base], "thrpt vs", mode_names[base], "sleeps/kop");
	for (int m = 0; m < N_MODES; m++) {
		if (!want[m])
			continue;
		med_ns[m] = median(ns[m], rounds);
		med_mops[m] = median(mops[m], rounds);
	}
	for (int m = 0; m < N_MODES; m++) {
		if (!want[m])
			continue;
		printf("%-9s %12.2f %12.2f", mode_names[m], med_ns[m], med_mops[m]);
		if (want[base] && m != base)
			printf(" %16.3fx %16.3fx", med_ns[m] / med_ns[base],
			       med_mops[m] / med_mops[base]);
		else
			printf(" %17s %17s", "", "");
		printf(" %12.2f\n", median(sl[m], rounds));
	}
	return 0;
}
