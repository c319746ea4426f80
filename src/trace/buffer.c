/*
 * buffer.c - per-thread trace buffers: the emit hot path.
 *
 * Design: each emitting thread owns one ring (struct sp_trace_buf, trace.h)
 * in its own mmap'd pages, found through an initial-exec TLS pointer.  An
 * event is written in its final file layout (format.h) at head, and
 * head is published with one release store; the writer thread
 * (writer.c, draining through file.c) reads head with acquire and copies
 * the bytes out.  The list of rings is kept here too (trace.h): a ring is
 * linked at its owner's first event and handed to the file's exit hook at
 * its owner's exit.  So an
 * event writes only the thread's own cache lines: no shared index, no
 * atomic read-modify-write, no lock, no system call.
 *
 * Reserve, then timestamp: the space check comes first and the clock is
 * read only once the record has a place, and a thread's records are
 * committed in program order, so timestamps are ordered within a thread's
 * stream.  A timestamp lower than the previous one (TSC read out of order,
 * migration between cores whose counters differ by a few cycles) is raised
 * to the previous one: per-thread order is an invariant, not a hope.
 *
 * Full ring (discard mode): the new event is dropped, counted in the
 * owner's private drop state with the time of the first and last drop.  The
 * next event that finds room for a DROPPED record plus itself writes the
 * DROPPED record first, so the loss appears in the stream where it happened.
 * Nothing is ever overwritten (the seed design overwrote unread records).
 *
 * Waking the writer: when head passes wake_at (3/4 of the ring past the
 * last known tail) the owner re-reads tail and, if the ring really is 3/4
 * full, kicks the writer (a futex wake only if the writer sleeps).  The
 * writer also polls every millisecond while there is traffic, so a kick is
 * the exception: with a kick at half full, tracebench measured 35 ns per
 * event instead of 18, because the futex wake-up placed the writer on the
 * emitting thread's CPU (the same figure as pinning both to one CPU).  A
 * slow or preempted writer never blocks an emitter: its ring fills and
 * drops.
 *
 * Clock: the TSC (rdtsc, ~12 ns here) when the CPU says it is invariant,
 * otherwise CLOCK_MONOTONIC (~26 ns here, which alone nearly used the 30 ns
 * budget).  The file header gives the tick rate and a (tick, monotonic,
 * realtime) triple, so readers convert.
 *
 * Alternatives considered: the seed's single shared ring (one atomic add on
 * a shared index per event): bench/tracebench measures it in the same run;
 * a double-mapped ring (memfd mapped twice so records never wrap) costs a
 * file descriptor per thread; records that wrap are instead split in two
 * copies on a rare branch.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "trace.h"

int sp_trace_use_tsc;
size_t sp_trace_buf_size = SP_TRACE_BUF_DEFAULT;

enum { BUF_NEW = 0, BUF_CREATING, BUF_LIVE, BUF_DEAD };

static SP_TLS struct sp_trace_buf *tls_buf;
static SP_TLS int tls_buf_state;
static uint64_t lost; /* events not even counted in a ring */
static uint64_t dropped_total; /* drops of all rings (slow path only) */
static pthread_key_t exit_key;
static int key_state; /* 0 none, 1 creating, 2 ready, 3 failed */

uint64_t sp_trace_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
	if (SP_LIKELY(sp_trace_use_tsc))
		return __rdtsc();
#endif
	return sp_now_ns();
}

uint64_t sp_trace_lost_get(void)
{
	return sp_load_relaxed(&lost);
}

struct sp_trace_buf *sp_trace_buf_self(void)
{
	return tls_buf;
}

/* ---- the list of rings (trace.h) ---------------------------------------- */

sp_lock_t sp_trace_list_lock = SP_LOCK_INIT;
struct sp_trace_buf *sp_trace_bufs;
static void (*exit_hook)(struct sp_trace_buf *b); /* sp_trace_list_lock */

void sp_trace_buf_set_exit_hook(void (*hook)(struct sp_trace_buf *b))
{
	sp_lock(&sp_trace_list_lock);
	exit_hook = hook;
	sp_unlock(&sp_trace_list_lock);
}

static void buf_link(struct sp_trace_buf *b)
{
	sp_lock(&sp_trace_list_lock);
	b->prev = NULL;
	b->next = sp_trace_bufs;
	if (sp_trace_bufs)
		sp_trace_bufs->prev = b;
	/* Release: a walker that reads the head sees b's fields. */
	sp_store_release(&sp_trace_bufs, b);
	sp_unlock(&sp_trace_list_lock);
}

void sp_trace_buf_unlink_locked(struct sp_trace_buf *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		sp_trace_bufs = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

/* The owner exits: its ring goes to the file's hook, which writes it out
 * and unlinks it under the file's io_lock; with no hook no walker can
 * exist (the file installs the hook under this lock before it opens), so
 * the ring is unlinked here. */
static void buf_thread_exit(void *arg)
{
	struct sp_trace_buf *b = arg;
	void (*hook)(struct sp_trace_buf *b);

	tls_buf = NULL;
	tls_buf_state = BUF_DEAD;
	sp_lock(&sp_trace_list_lock);
	hook = exit_hook;
	if (!hook)
		sp_trace_buf_unlink_locked(b);
	sp_unlock(&sp_trace_list_lock);
	if (hook)
		hook(b);
	else
		sp_munmap(b, b->map_size);
}

static int exit_key_ready(void)
{
	return sp_key_once(&key_state, &exit_key, buf_thread_exit, NULL);
}

/* The calling thread's first event: map and link its ring. */
static SP_NOINLINE struct sp_trace_buf *buf_create__slowpath(void)
{
	size_t ring = sp_load_relaxed(&sp_trace_buf_size);
	size_t hdr = (sizeof(struct sp_trace_buf) + 4095) & ~(size_t)4095;
	struct sp_trace_buf *b;

	if (tls_buf_state != BUF_NEW || !exit_key_ready())
		return NULL; /* during teardown, or recursion from below */
	tls_buf_state = BUF_CREATING;
	b = sp_mmap(hdr + ring);
	if (!b) {
		tls_buf_state = BUF_NEW;
		return NULL;
	}
	b->map_size = hdr + ring;
	b->ring = (uint8_t *)b + hdr;
	b->mask = ring - 1;
	b->wake_at = ring / 4 * 3;
	b->tid = (uint32_t)sp_gettid();
	prctl(PR_GET_NAME, b->name, 0, 0, 0);
	if (pthread_setspecific(exit_key, b)) {
		sp_munmap(b, b->map_size);
		tls_buf_state = BUF_NEW;
		return NULL;
	}
	buf_link(b);
	tls_buf = b;
	tls_buf_state = BUF_LIVE;
	return b;
}

void sp_trace_buf_fork_child(struct sp_trace_buf *self)
{
	/* Only the forking thread exists in the child; its ring's unwritten
	 * events and drops belong to the parent, which writes them. */
	if (self) {
		self->tail = self->head;
		self->tail_cache = self->head;
		self->wake_at = self->head; /* next event: fill check, kick */
		self->drop_count = 0;
		self->file_gen = 0;
		self->tid = (uint32_t)sp_gettid();
	}
}

static SP_ALWAYS_INLINE uint64_t stamp(struct sp_trace_buf *b)
{
	uint64_t ts = sp_trace_now();

	if (SP_UNLIKELY(ts < b->last_ts))
		ts = b->last_ts;
	b->last_ts = ts;
	return ts;
}

static inline uint64_t rec_header(uint16_t type, uint16_t aux, uint32_t size)
{
	return (uint64_t)type | (uint64_t)aux << 16 | (uint64_t)size << 32;
}

/* Copy a record that straddles the end of the ring (rare). */
static SP_NOINLINE void ring_copy_wrapped(struct sp_trace_buf *b, uint64_t pos, const void *src,
					  size_t n)
{
	size_t first = b->mask + 1 - pos;

	memcpy(b->ring + pos, src, first);
	memcpy(b->ring, (const uint8_t *)src + first, n - first);
}

static SP_ALWAYS_INLINE void write_event(struct sp_trace_buf *b, uint64_t head, unsigned id,
					 unsigned nargs, const uint64_t *args, uint32_t size)
{
	uint64_t pos = head & b->mask;
	uint64_t ts = stamp(b);
	uint64_t *w;

	if (SP_LIKELY(pos + size <= b->mask + 1)) {
		w = (uint64_t *)(b->ring + pos);
		w[0] = rec_header(SP_REC_EVENT, (uint16_t)nargs, size);
		w[1] = ts;
		w[2] = (uint64_t)b->tid | (uint64_t)id << 32;
		for (unsigned i = 0; i < nargs; i++)
			w[3 + i] = args[i];
	} else {
		uint64_t tmp[3 + SP_TRACE_MAX_ARGS];

		tmp[0] = rec_header(SP_REC_EVENT, (uint16_t)nargs, size);
		tmp[1] = ts;
		tmp[2] = (uint64_t)b->tid | (uint64_t)id << 32;
		for (unsigned i = 0; i < nargs; i++)
			tmp[3 + i] = args[i];
		ring_copy_wrapped(b, pos, tmp, size);
	}
	/* Publishes the record to the writer, which loads head with acquire. */
	sp_store_release(&b->head, head + size);
}

/* head passed wake_at: kick the writer if the ring is really 3/4 full. */
static SP_NOINLINE void fill_check__slowpath(struct sp_trace_buf *b)
{
	uint64_t ring = b->mask + 1, threshold = ring / 4 * 3;

	b->tail_cache = sp_load_acquire(&b->tail);
	if (b->head - b->tail_cache >= threshold) {
		sp_trace_writer_kick();
		b->wake_at = b->head + ring / 16; /* kick again if it stays behind */
	} else {
		b->wake_at = b->tail_cache + threshold;
		if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_writer_wanted)))
			sp_trace_writer_kick(); /* first event of a fork child */
	}
}

static void drop(struct sp_trace_buf *b)
{
	uint64_t ts = stamp(b);

	if (b->drop_count == 0)
		sp_store_relaxed(&b->drop_first, ts);
	sp_store_relaxed(&b->drop_last, ts);
	/* Relaxed: read by the process-exit flush only. */
	sp_store_relaxed(&b->drop_count, b->drop_count + 1);
	sp_add_relaxed(&dropped_total, 1);
}

/* No room by the cached tail, or drops to write first. */
static SP_NOINLINE void emit__slowpath(struct sp_trace_buf *b, unsigned id, unsigned nargs,
				       const uint64_t *args, uint32_t size)
{
	uint64_t head = b->head;
	uint64_t ring = b->mask + 1;
	uint64_t need = size + (b->drop_count ? sizeof(struct sp_trace_rec_dropped) : 0);

	if (head + need - b->tail_cache > ring) {
		/* Acquire: the writer finished reading what it freed. */
		b->tail_cache = sp_load_acquire(&b->tail);
		if (head + need - b->tail_cache > ring) {
			drop(b);
			if (head >= b->wake_at)
				fill_check__slowpath(b);
			return;
		}
	}
	if (b->drop_count) {
		struct sp_trace_rec_dropped d = {
			.h = { SP_REC_DROPPED, 0, sizeof(d) },
			.first_ts = b->drop_first,
			.last_ts = b->drop_last,
			.tid = b->tid,
			.count = b->drop_count,
		};
		uint64_t pos = head & b->mask;

		if (pos + sizeof(d) <= ring)
			memcpy(b->ring + pos, &d, sizeof(d));
		else
			ring_copy_wrapped(b, pos, &d, sizeof(d));
		head += sizeof(d);
		sp_store_relaxed(&b->drop_count, 0);
	}
	write_event(b, head, id, nargs, args, size);
	if (SP_UNLIKELY(b->head >= b->wake_at))
		fill_check__slowpath(b);
}

void syncprof_trace_emit(unsigned id, unsigned nargs, const uint64_t *args)
{
	struct sp_trace_buf *b = tls_buf;
	uint32_t size;
	uint64_t head;

	if (SP_UNLIKELY(id >= SYNCPROF_TRACE_MAX_EVENTS || !sp_load_relaxed(&syncprof__trace_on[id])))
		return;
	if (SP_UNLIKELY(nargs > SP_TRACE_MAX_ARGS))
		nargs = SP_TRACE_MAX_ARGS;
	if (SP_UNLIKELY(!b)) {
		b = buf_create__slowpath();
		if (!b) {
			sp_add_relaxed(&lost, 1);
			return;
		}
	}
	size = (uint32_t)(sizeof(struct sp_trace_rec_event) + 8 * nargs);
	head = b->head;
	if (SP_UNLIKELY(head + size - b->tail_cache > b->mask + 1 || b->drop_count)) {
		emit__slowpath(b, id, nargs, args, size);
		return;
	}
	write_event(b, head, id, nargs, args, size);
	if (SP_UNLIKELY(head + size >= b->wake_at))
		fill_check__slowpath(b);
}

unsigned long long syncprof_trace_dropped(void)
{
	return sp_trace_lost_get() + sp_load_relaxed(&dropped_total) +
	       sp_load_relaxed(&sp_trace_write_lost_events);
}

int syncprof_trace_set_buffer_size(size_t bytes)
{
	size_t size = SP_TRACE_BUF_MIN;

	if (bytes == 0 || bytes > SP_TRACE_BUF_MAX)
		return -EINVAL;
	while (size < bytes)
		size *= 2;
	sp_store_relaxed(&sp_trace_buf_size, size);
	return 0;
}
