/*
 * test_trace_switch - switching the trace file while threads trace.
 *
 * Threads emit numbered events without pause while the main thread
 * switches among several files.  Afterwards, over all files together, for
 * every thread: each sequence number appears at most once, events in the
 * files + events counted as dropped == emitted, and within each file a
 * thread's events are in order.  Each file is complete and readable on its
 * own: header, event definitions, and a THREAD record naming every thread
 * before its first event in that file.
 */
#include <pthread.h>

#include "trace_util.h"

#define THREADS 4
#define EVENTS 200000
#define FILES 6

static int ev_id;
static uint8_t *seen[THREADS];
static uint64_t in_files[THREADS], dropped[THREADS];
static uint32_t tids[THREADS];
static int go;

struct file_state {
	uint64_t next_min[THREADS];
	int named[THREADS];
	uint64_t events;
};

static void *worker(void *arg)
{
	uint64_t idx = (uint64_t)(uintptr_t)arg;

	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		;
	for (uint64_t i = 0; i < EVENTS; i++)
		SYNCPROF_TRACE(ev_id, idx, i);
	return NULL;
}

static int idx_of_tid(uint32_t tid)
{
	for (int i = 0; i < THREADS; i++)
		if (tids[i] == tid)
			return i;
	return -1;
}

static void check(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	struct file_state *fs = arg;

	if (rec->type == SP_REC_EVENT && (int)rec->id == ev_id) {
		uint64_t t = rec->args[0], seq = rec->args[1];

		T_ASSERT_UINT(t, <, THREADS);
		T_ASSERT_UINT(seq, <, EVENTS);
		T_ASSERT(rec->def && !strcmp(rec->def->name, "switch_ev"));
		T_ASSERT(sp_trace_reader_thread(r, rec->tid) != NULL); /* named in this file */
		if (!tids[t])
			tids[t] = rec->tid;
		T_ASSERT_UINT(tids[t], ==, rec->tid);
		if (seen[t][seq])
			T_FAIL("thread %llu event %llu appears twice", (unsigned long long)t,
			       (unsigned long long)seq);
		seen[t][seq] = 1;
		T_ASSERT_UINT(seq, >=, fs->next_min[t]);
		fs->next_min[t] = seq + 1;
		in_files[t]++;
		fs->events++;
	} else if (rec->type == SP_REC_DROPPED) {
		int t = idx_of_tid(rec->tid);

		T_ASSERT_INT(t, >=, 0);
		dropped[t] += rec->count;
	}
}

int main(void)
{
	static const char *const args[] = { "thread", "seq" };
	pthread_t th[THREADS];
	char dir[256], path[FILES][512];
	uint64_t total = 0;

	t_tmpdir(dir, sizeof(dir), "switch");
	for (int f = 0; f < FILES; f++)
		snprintf(path[f], sizeof(path[f]), "%s/switch-%d.trace", dir, f);
	ev_id = syncprof_trace_register("switch_ev", args, 2);
	T_ASSERT_INT(ev_id, >, 0);
	T_ASSERT_INT(syncprof_trace_set_buffer_size(64 << 10), ==, 0);
	T_ASSERT_INT(syncprof_trace_open(path[0]), ==, 0);
	for (int i = 0; i < THREADS; i++) {
		seen[i] = calloc(EVENTS, 1);
		T_ASSERT(seen[i]);
		T_ASSERT_INT(pthread_create(&th[i], NULL, worker, (void *)(uintptr_t)i), ==, 0);
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (int f = 1; f < FILES; f++) {
		struct timespec d = { 0, 3000000 };

		nanosleep(&d, NULL);
		T_ASSERT_INT(syncprof_trace_open(path[f]), ==, 0);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);
	T_ASSERT_INT(syncprof_trace_close(), ==, -EBADF);

	for (int f = 0; f < FILES; f++) {
		struct file_state fs;

		memset(&fs, 0, sizeof(fs));
		T_ASSERT_INT(t_trace_read(path[f], check, &fs), ==, SP_TRACE_READ_OK);
		printf("file %d: %llu events\n", f, (unsigned long long)fs.events);
		unlink(path[f]);
	}
	for (int i = 0; i < THREADS; i++) {
		if (in_files[i] + dropped[i] != EVENTS)
			T_FAIL("thread %d: %llu in files + %llu dropped != %d", i,
			       (unsigned long long)in_files[i], (unsigned long long)dropped[i],
			       EVENTS);
		total += in_files[i];
	}
	printf("test_trace_switch: %d threads x %d events over %d files: %llu in files, exact\n",
	       THREADS, EVENTS, FILES, (unsigned long long)total);
	rmdir(dir);
	return 0;
}
