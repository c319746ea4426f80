/*
 * test_trace_accounting - exact drop accounting under load.
 *
 * Many threads emit into tiny buffers while the writer thread is slowed
 * down on purpose, so most events are dropped.  For every thread: events
 * in the file + events counted in its DROPPED records == events emitted,
 * exactly; the events that did arrive are in emission order (a sequence
 * number per thread never goes down); per-thread timestamps, DROPPED spans
 * included, never go backwards; syncprof_trace_dropped() equals the drops
 * in the file.  The main thread emits too and never exits before the
 * close (its drops are written by the close, not a thread exit).
 *
 * Usage: test_trace_accounting [THREADS [EVENTS_PER_THREAD [BUFFER_BYTES]]]
 */
#include <pthread.h>

#include "trace_util.h"

#define MAX_THREADS 64

struct per_thread {
	uint32_t tid;
	uint64_t in_file, dropped, last_ts, next_seq_min;
	int seen;
};

static unsigned n_threads = 8, n_events = 20000;
static int ev_id;
static struct per_thread pt[MAX_THREADS + 1];
static uint64_t drops_in_file;

static void *worker(void *arg)
{
	uint64_t idx = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < n_events; i++) {
		SYNCPROF_TRACE(ev_id, idx, i, 0xabcdef);
		if (i % 256 == 0) {
			/* Pauses let the slow writer catch up now and then, so
			 * the stream mixes kept events and losses. */
			struct timespec d = { 0, 200000 };

			nanosleep(&d, NULL);
		}
	}
	return NULL;
}

static struct per_thread *by_tid(uint32_t tid)
{
	for (unsigned i = 0; i <= n_threads; i++)
		if (pt[i].seen && pt[i].tid == tid)
			return &pt[i];
	return NULL;
}

static void check(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	struct per_thread *p;

	(void)r, (void)arg;
	if (rec->type == SP_REC_EVENT && (int)rec->id == ev_id) {
		T_ASSERT_UINT(rec->nargs, ==, 3);
		T_ASSERT_UINT(rec->args[0], <=, n_threads);
		p = &pt[rec->args[0]];
		if (!p->seen) {
			p->seen = 1;
			p->tid = rec->tid;
		}
		T_ASSERT_UINT(p->tid, ==, rec->tid);
		T_ASSERT_UINT(rec->args[1], >=, p->next_seq_min);
		p->next_seq_min = rec->args[1] + 1;
		T_ASSERT_UINT(rec->ts, >=, p->last_ts);
		p->last_ts = rec->ts;
		p->in_file++;
	} else if (rec->type == SP_REC_DROPPED) {
		p = by_tid(rec->tid);
		T_ASSERT(p != NULL); /* a thread drops only after it wrote one */
		T_ASSERT_UINT(rec->ts, >=, p->last_ts);
		T_ASSERT_UINT(rec->ts2, >=, rec->ts);
		p->last_ts = rec->ts2;
		p->dropped += rec->count;
		drops_in_file += rec->count;
	}
}

int main(int argc, char **argv)
{
	static const char *const args[] = { "thread", "seq", "magic" };
	pthread_t th[MAX_THREADS];
	unsigned buffer = 1024;
	char dir[256], path[512];
	uint64_t total_in = 0, total_drop = 0;

	if (argc > 1)
		n_threads = (unsigned)atoi(argv[1]);
	if (argc > 2)
		n_events = (unsigned)atoi(argv[2]);
	if (argc > 3)
		buffer = (unsigned)atoi(argv[3]);
	T_ASSERT(n_threads >= 1 && n_threads <= MAX_THREADS);
	t_tmpdir(dir, sizeof(dir), "acct");
	snprintf(path, sizeof(path), "%s/acct.trace", dir);

	T_ASSERT_INT(syncprof_trace_set_buffer_size(buffer), ==, 0);
	/* a deliberately slow writer */
	__atomic_store_n(&sp_trace_test_writer_delay_us, 1000, __ATOMIC_RELAXED);
	ev_id = syncprof_trace_register("acct", args, 3);
	T_ASSERT_INT(ev_id, >, 0);
	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);

	/* The main thread is thread index n_threads. */
	for (unsigned i = 0; i < n_threads; i++)
		T_ASSERT_INT(pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i), ==, 0);
	for (uint64_t i = 0; i < n_events; i++)
		SYNCPROF_TRACE(ev_id, n_threads, i, 0xabcdef);
	for (unsigned i = 0; i < n_threads; i++)
		pthread_join(th[i], NULL);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);

	T_ASSERT_INT(t_trace_read(path, check, NULL), ==, SP_TRACE_READ_OK);
	for (unsigned i = 0; i <= n_threads; i++) {
		if (pt[i].in_file + pt[i].dropped != n_events)
			T_FAIL("thread %u: %llu in file + %llu dropped != %u emitted", i,
			       (unsigned long long)pt[i].in_file, (unsigned long long)pt[i].dropped,
			       n_events);
		total_in += pt[i].in_file;
		total_drop += pt[i].dropped;
	}
	T_ASSERT_UINT(total_drop, ==, drops_in_file);
	T_ASSERT_UINT(syncprof_trace_dropped(), ==, drops_in_file);
	printf("test_trace_accounting: %u threads + main x %u events, buffer %u B: %llu in file, "
	       "%llu dropped (exact)\n",
	       n_threads, n_events, buffer, (unsigned long long)total_in,
	       (unsigned long long)total_drop);
	/* Some drops must have happened, or the test proved nothing. */
	T_ASSERT_UINT(total_drop, >, 0);
	unlink(path);
	rmdir(dir);
	return 0;
}
