/*
 * writer.c - the trace's writer thread: it sleeps on a futex, 1 ms while
 * there is traffic and backing off to 100 ms when idle, and each time it
 * wakes drains every ring into the file (the round of the ops file.c
 * starts it with); an emitter whose ring is 3/4 full kicks it
 * (sp_trace_writer_kick(), buffer.c).  Its state is its own: the thread,
 * whether it runs and in which process, its ops and its wake-up word;
 * file.c starts and stops it under sp_trace_ctl_lock.
 *
 * In a fork child the writer of the parent is gone: the child's first
 * event (or kick) starts its own (sp_trace_writer_wanted), never the
 * atfork handler, so a child that only execs starts no thread.  The
 * writer blocks every signal, and its own lock calls go unrecorded.
 */
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "base/lock_calls.h"
#include "trace.h"

#define WRITER_PERIOD_MS 100

unsigned sp_trace_test_writer_delay_us;
int sp_trace_writer_wanted;

/* Written under sp_trace_ctl_lock (start, stop, fork): the thread, and
 * the process it runs in. */
static struct {
	pthread_t thread;
	int running;
	pid_t pid;
	const struct sp_trace_writer_ops *ops; /* kept for a fork child's start */
} started;

/* Its wake-up: the futex word emitters bump, whether it sleeps on it, and
 * the request to end. */
static struct {
	uint32_t seq;
	int sleeping;
	int stop;
} wake;

static void *writer_main(void *arg)
{
	(void)arg;
	sp_tls_busy++; /* its own lock calls (none expected) go unrecorded */
	long period_ms = WRITER_PERIOD_MS;

	while (!sp_load_acquire(&wake.stop)) {
		struct timespec ts = { period_ms / 1000, period_ms % 1000 * 1000000L };
		uint32_t seq = sp_load_acquire(&wake.seq);
		uint64_t drained;

		sp_store_relaxed(&wake.sleeping, 1);
		sp_futex(&wake.seq, FUTEX_WAIT_PRIVATE, seq, &ts);
		sp_store_relaxed(&wake.sleeping, 0);
		if (sp_load_relaxed(&sp_trace_test_writer_delay_us)) {
			unsigned us = sp_load_relaxed(&sp_trace_test_writer_delay_us);
			struct timespec d = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000L };

			nanosleep(&d, NULL);
		}
		drained = started.ops->round();
		/* Busy: poll every millisecond, so that emitters seldom need
		 * to wake us (a wake-up costs them a system call, and the
		 * scheduler tends to put the woken writer on the waker's
		 * CPU); idle: back off to the 100 ms timer. */
		period_ms = drained > 4096 ? 1
			    : period_ms * 2 > WRITER_PERIOD_MS ? WRITER_PERIOD_MS
							       : period_ms * 2;
	}
	return NULL;
}

/* In a fork child, the first event (or kick) starts the child's writer:
 * not in the atfork handler, so a child that only execs never starts a
 * thread.  The exchange makes a recursive call (pthread_create's own lock
 * calls, traced) a no-op. */
static SP_NOINLINE void writer_start_lazy__slowpath(void)
{
	if (!__atomic_exchange_n(&sp_trace_writer_wanted, 0, __ATOMIC_ACQ_REL))
		return;
	sp_lock(&sp_trace_ctl_lock);
	if (started.ops && started.ops->file_open())
		sp_trace_writer_start_locked(started.ops);
	sp_unlock(&sp_trace_ctl_lock);
}

void sp_trace_writer_kick(void)
{
	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_writer_wanted)))
		writer_start_lazy__slowpath();
	if (sp_load_relaxed(&wake.sleeping)) {
		sp_add_relaxed(&wake.seq, 1);
		sp_futex(&wake.seq, FUTEX_WAKE_PRIVATE, 1, NULL);
	}
}

/* sp_trace_ctl_lock held.  Signals blocked so the writer never runs a handler. */
void sp_trace_writer_start_locked(const struct sp_trace_writer_ops *ops)
{
	sigset_t all, old;

	if (started.running)
		return; /* its ops are these: file.c has one set */
	started.ops = ops; /* read by the thread created below, and by a fork
			    * child's lazy start, under sp_trace_ctl_lock */
	sp_store_relaxed(&wake.stop, 0);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (sp_born_named(&started.thread, NULL, writer_main, "syncprof-trace") == 0) {
		started.running = 1;
		started.pid = getpid();
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Without a writer, rings drain at thread exit, flush and close. */
}

void sp_trace_writer_stop_locked(void)
{
	sp_store_relaxed(&sp_trace_writer_wanted, 0);
	if (!started.running)
		return;
	started.running = 0;
	if (started.pid != getpid())
		return; /* a fork child: the parent's writer is not ours */
	sp_store_release(&wake.stop, 1);
	sp_add_relaxed(&wake.seq, 1);
	sp_futex(&wake.seq, FUTEX_WAKE_PRIVATE, 1, NULL);
	/* The real join (base/lock_calls.h): in the preload library, the
	 * interposed one would record the profiler's own join as a program's
	 * "join" row. */
	SP_REAL(pthread_join)(started.thread, NULL);
}

/* In a fork child (file.c's, sp_trace_ctl_lock held): the writer thread
 * stayed in the parent. */
void sp_trace_writer_fork_child(void)
{
	started.running = 0;
	wake.seq = 0;
	wake.sleeping = 0;
}
