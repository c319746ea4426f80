/*
 * registry.c - the threads the profiler knows, and what is left of those
 * that exited.
 *
 * Design: a thread gets a record (struct sp_thread, in one mapping with
 * its table's home arrays and first index: record_bytes()) at its first
 * profiled lock call, found afterwards through an
 * initial-exec TLS pointer.  Records are linked into a list under
 * registry_lock.  A pthread key destructor runs when the thread exits: it
 * folds the thread's table into the retired aggregate (one table, owned by
 * whoever holds registry_lock) and unlinks the record; the record, its
 * table emptied in place, goes on a free list (at most
 * SP_FREE_RECORDS_MAX) for the next thread, so that a short thread maps
 * and unmaps nothing.  Memory thus stays bounded by live threads, the
 * free list, plus the distinct keys ever seen.
 *
 * Reuse, not unmapping: each thread mapped its record (25 KB), index
 * (2 KB), home slots (128 + 212 KB) and a histogram slab (64 KB) and
 * unmapped them at exit; in a multithreaded process every munmap shoots
 * down the TLBs of the other CPUs running it (IPIs, costly in a VM), and
 * the fresh pages fault in again.  bench/parts/thread_churn.sh, 2000 threads,
 * 4 at a time, preloaded, on the loaded 2-core VM: ~2100 us per thread
 * with map/unmap, ~550 us with reuse (bare ~130-190 us).  A table of more
 * than SP_TABLE_REUSE_MAX entries is freed as before (emptying it would
 * cost more than mapping a fresh one).
 *
 * sp_tls_self is NULL both before registration and while the thread is
 * inside the profiler (a report, an exit fold) or has been torn down; the
 * probe's hot path only tests it for NULL and the slow path tells the cases
 * apart through tls_state.
 *
 * Lock order: report_lock (runtime/lifecycle.c) before registry_lock.  Nothing else is
 * taken while registry_lock is held; it is never held across a call the
 * host program could observe.
 *
 * fork(): the child inherits the records of threads that do not exist in
 * it.  pthread_atfork handlers hold registry_lock across fork so the child
 * does not inherit it locked; the child then folds the records of the
 * vanished threads into the retired aggregate, so their statistics (from
 * before the fork) are kept and reported once.
 *
 * The time account (account.c): at exit, before its table is folded, a
 * thread reads its own schedstat and stat and adds its figures to the
 * retired totals, and to a ring of the last SP_ACCOUNT_EXITED_KEPT exits
 * (tid, name, figures) that reports list one by one; the /proc reads are
 * made before registry_lock is taken.  The vanished threads of a fork
 * child were the parent's: their time is not the child's, and is not
 * added.  Measured: see docs/accounting.md (about 4 reads' worth of
 * system calls per exit).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>

#include "record/hold.h"
#include "record/lockorder.h"
#include "record/record.h"
#include "record/registry.h"

enum tls_state {
	TLS_NEW = 0, /* no record yet */
	TLS_LIVE,    /* record in sp_tls_self */
	TLS_DEAD,    /* record folded at thread exit */
};

SP_TLS struct sp_thread *sp_tls_self;
SP_TLS uint64_t sp_thread_start_ns;
SYNCPROF_API SP_TLS struct syncprof__entry *syncprof__home;
__attribute__((weak)) const int sp_home_inline = 1; /* record.h */
static SP_TLS struct sp_thread *tls_record; /* kept while busy */
static SP_TLS int tls_state;


/* Set once lock-order checking is set up (lockorder.c); a thread's record
 * then has an order cache to clear. */
int sp_order_ready;

static sp_lock_t registry_lock = SP_LOCK_INIT;
/* Records of exited threads, emptied, for the next threads: a short
 * thread then maps and unmaps nothing. */
#define SP_FREE_RECORDS_MAX 64
/* The record's part of its mapping, whole pages: its table's home arrays
 * follow, page-aligned (record_bytes()). */
#define RECORD_HEAD ((sizeof(struct sp_thread) + 4095) & ~(size_t)4095)
/* Written under registry_lock: the live threads, what the exited ones
 * left (their entries folded into retired, their time account), and the
 * free records. */
static struct {
	struct sp_thread *live; /* list of live records */
	size_t n_live;
	struct sp_thread *free;
	size_t n_free;
	struct sp_table retired;
	struct sp_account_retired account;
	struct sp_account_thread exited[SP_ACCOUNT_EXITED_KEPT]; /* last: a page each */
} registry SP_LARGE;
static uint64_t lost_events;
static pthread_key_t exit_key;
static uint64_t account_seq; /* = registry.account.threads, read without the lock */
static int key_state; /* 0: none, 1: creating, 2: ready, 3: failed */

void sp_lost_add(uint64_t n)
{
	sp_add_relaxed(&lost_events, n);
}

uint64_t sp_lost_get(void)
{
	return sp_load_relaxed(&lost_events);
}

static void registry_unlink_locked(struct sp_thread *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		registry.live = t->next;
	if (t->next)
		t->next->prev = t->prev;
	registry.n_live--;
}

/* A record and its table's home arrays and first index: one mapping. */
static size_t record_bytes(void)
{
	return RECORD_HEAD + sp_table_lent_bytes();
}

static void record_free(struct sp_thread *t)
{
	sp_table_destroy(&t->table);
	sp_munmap(t, record_bytes());
}

/*
 * An unlinked, folded record made ready for the next thread: its table
 * emptied in place (entries, cold parts, histograms, stacks, index), its
 * caches cleared; the mappings stay.  0 when it is too big to keep (its
 * table has more than SP_TABLE_REUSE_MAX entries): the caller frees it.
 * Its wait publication keeps counting (wait_pub.c's seq only grows), so
 * that a watchdog scan that saw the last owner's wait never takes the
 * next owner's for it.  No one else can see @t (unlinked).
 */
static int record_reset(struct sp_thread *t)
{
	if (!sp_table_reset(&t->table, t->near))
		return 0;
	t->last = NULL;
	/* Written only with lock_order=1 (lockorder.c); 8 KiB. */
	if (sp_load_relaxed(&sp_order_ready))
		memset(t->order_cache, 0, sizeof(t->order_cache));
	t->tid = 0;
	t->born_ns = 0;
	t->start_ns = 0;
	memset(t->name, 0, sizeof(t->name));
	return 1;
}

/* Keep a folded, unlinked record for the next thread, or free it. */
static void record_recycle(struct sp_thread *t)
{
	if (record_reset(t)) {
		sp_lock(&registry_lock);
		if (registry.n_free < SP_FREE_RECORDS_MAX) {
			t->next = registry.free;
			t->prev = NULL;
			registry.free = t;
			registry.n_free++;
			t = NULL;
		}
		sp_unlock(&registry_lock);
		if (!t)
			return;
	}
	record_free(t);
}

/* Fold a record into the retired aggregate and unlink it: the caller
 * recycles or frees it. */
static void record_retire_locked(struct sp_thread *t)
{
	if (sp_table_fold(&registry.retired, &t->table))
		sp_lost_add(1);
	registry_unlink_locked(t);
}

/*
 * Whether an exit that reads @files /proc files may read them now: at most
 * SP_ACCOUNT_FILES_PER_S files a second, after a burst of as many (a
 * generic cell rate: the time at which the next read would be on schedule
 * moves on by one interval per file, and a read more than the burst ahead
 * of it is refused).  Lock-free: exits of several threads race on one
 * word.
 */
static uint64_t account_tat;

static int account_admit(unsigned files)
{
	const uint64_t interval = 1000000000u / SP_ACCOUNT_FILES_PER_S;
	const uint64_t burst = interval * SP_ACCOUNT_FILES_PER_S;
	uint64_t now = sp_boottime_ns(), tat = sp_load_relaxed(&account_tat);

	for (;;) {
		uint64_t t = tat > now ? tat : now;

		if (t - now > burst)
			return 0;
		if (__atomic_compare_exchange_n(&account_tat, &tat, t + files * interval, 1,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return 1;
	}
}

/* An exiting thread's account into the retired totals and the ring
 * (@rc 1: skipped, past the rate; < 0: unread). */
static void account_exit_locked(const struct sp_thread *t, int rc,
				const struct sp_account_figs *f)
{
	struct sp_account_retired *r = &registry.account;
	struct sp_account_thread *a;

	if (rc > 0) {
		r->skipped++;
		return;
	}
	if (rc) {
		if (!r->unread++)
			r->unread_err = rc;
		return;
	}
	r->threads++;
	sp_account_figs_add(&r->sum, f);
	a = &registry.exited[(r->threads - 1) % SP_ACCOUNT_EXITED_KEPT];
	a->tid = t->tid;
	memcpy(a->name, t->name, sizeof(a->name));
	a->seq = r->threads;
	a->f = *f;
	sp_store_relaxed(&account_seq, r->threads);
}

static void thread_exit(void *arg)
{
	struct sp_thread *t = arg;
	struct sp_account_figs f;
	struct sp_sched s;
	int want = sp_load_relaxed(&sp_account_on), rc = 0;

	sp_tls_self_set(NULL);
	tls_state = TLS_DEAD;
	tls_record = NULL;
	/* Its own table, read by its owner; the name as the kernel has it now
	 * (the thread may have renamed itself after registering). */
	if (want && sp_sched_self_unswitched(t->start_ns, &s))
		rc = 0; /* never left its CPU: no file to read */
	else if (want && !account_admit(t->start_ns ? 1 : 2))
		rc = 1; /* past the rate: counted, not read */
	else if (want)
		rc = sp_sched_read(t->tid, t->start_ns, &s); /* its own */
	if (want && !rc && !s.name[0]) /* stat not read: the name from the kernel */
		prctl(PR_GET_NAME, s.name, 0, 0, 0);
	if (want && !rc)
		sp_account_figures(&s, t->born_ns, sp_table_sync_wait(&t->table), &f);
	sp_lock(&registry_lock);
	/* Under the lock: the watchdog copies the names of registered threads
	 * under it (a race TSan saw when the copy came before). */
	if (want && !rc)
		memcpy(t->name, s.name, sizeof(t->name));
	if (want)
		account_exit_locked(t, rc, &f);
	record_retire_locked(t);
	sp_unlock(&registry_lock);
	record_recycle(t);
}

void sp_registry_fork_prepare(void)
{
	sp_lock(&registry_lock);
}

void sp_registry_fork_parent(void)
{
	sp_unlock(&registry_lock);
}

void sp_registry_fork_child(void)
{
	struct sp_thread *self = tls_record;
	struct sp_thread *t = registry.live, *next;

	for (; t; t = next) {
		next = t->next;
		if (t != self) {
			record_retire_locked(t);
			record_free(t); /* single-threaded here: no reset needed to free */
		}
	}
	if (self) {
		self->tid = sp_gettid();
		self->born_ns = sp_boottime_ns(); /* the child's thread starts now */
		self->start_ns = self->born_ns;
	}
	/* The parent's exited threads were not the child's. */
	memset(&registry.account, 0, sizeof(registry.account));
	sp_store_relaxed(&account_seq, 0);
	sp_unlock(&registry_lock);
}

void (*sp_registry_after_fork)(void);

/* Create the exit key once; any thread, any time, lock-free. */
static int exit_key_ready(void)
{
	return sp_key_once(&key_state, &exit_key, thread_exit, NULL);
}

/* A thread's first profiled call, and the first one after fork() in the
 * child: the runtime's hook (restart the helper thread, control.c). */
static void after_fork_hook(void)
{
	void (*fn)(void) = sp_load_acquire(&sp_registry_after_fork);

	if (fn)
		fn();
}

struct sp_thread *sp_thread_self__slowpath(void)
{
	struct sp_thread *t;

	if (sp_tls_busy)
		return NULL; /* the profiler's own calls */
	if (tls_state == TLS_LIVE && tls_record) {
		/* First call after fork() in the child: control.c cleared
		 * sp_tls_self to get here and restart its helper thread now,
		 * outside the atfork handler. */
		sp_tls_self_set(tls_record);
		after_fork_hook();
		return tls_record;
	}
	if (tls_state != TLS_NEW || !exit_key_ready()) {
		sp_lost_add(1); /* a call during thread teardown */
		return NULL;
	}
	sp_lock(&registry_lock);
	t = registry.free;
	if (t) {
		registry.free = t->next;
		registry.n_free--;
	}
	sp_unlock(&registry_lock);
	if (!t) {
		t = sp_mmap(record_bytes());
		if (!t) {
			sp_lost_add(1);
			return NULL;
		}
		/* a thread's own table (use_home: the probe's fast path) */
		sp_table_init_in(&t->table, (unsigned char *)t + RECORD_HEAD);
	}
	t->tid = sp_gettid();
	t->born_ns = sp_boottime_ns();
	t->start_ns = sp_thread_start_ns;
	prctl(PR_GET_NAME, t->name, 0, 0, 0);
	if (pthread_setspecific(exit_key, t)) {
		record_free(t); /* it may have been a reused one */
		sp_lost_add(1);
		return NULL;
	}
	sp_lock(&registry_lock);
	t->next = registry.live;
	if (registry.live)
		registry.live->prev = t;
	registry.live = t;
	registry.n_live++;
	sp_unlock(&registry_lock);
	tls_record = t;
	tls_state = TLS_LIVE;
	sp_tls_self_set(t);
	after_fork_hook(); /* a new thread in a forked child, see above */
	return t;
}

struct sp_thread *sp_thread_enter(void)
{
	struct sp_thread *saved = sp_tls_self;

	sp_tls_busy++;
	sp_tls_self_set(NULL);
	return saved;
}

void sp_thread_leave(struct sp_thread *saved)
{
	if (--sp_tls_busy == 0 && tls_state == TLS_LIVE)
		sp_tls_self_set(saved ? saved : tls_record);
}

void sp_registry_foreach(void (*fn)(const struct sp_table *t, void *arg), void *arg)
{
	sp_lock(&registry_lock);
	for (struct sp_thread *t = registry.live; t; t = t->next)
		fn(&t->table, arg);
	fn(&registry.retired, arg);
	sp_unlock(&registry_lock);
}

void sp_registry_foreach_thread(void (*fn)(struct sp_thread *t, void *arg), void *arg)
{
	sp_lock(&registry_lock);
	for (struct sp_thread *t = registry.live; t; t = t->next)
		fn(t, arg);
	sp_unlock(&registry_lock);
}

size_t sp_registry_thread_count(void)
{
	size_t n;

	sp_lock(&registry_lock);
	n = registry.n_live;
	sp_unlock(&registry_lock);
	return n;
}

void sp_registry_account(void (*live)(const struct sp_thread *t, void *arg),
			 void (*exited)(const struct sp_account_thread *a, void *arg), void *arg,
			 struct sp_account_retired *out)
{
	uint64_t first;

	sp_lock(&registry_lock);
	for (struct sp_thread *t = registry.live; t; t = t->next)
		live(t, arg);
	*out = registry.account;
	first = out->threads > SP_ACCOUNT_EXITED_KEPT ? out->threads - SP_ACCOUNT_EXITED_KEPT : 0;
	for (uint64_t k = first; k < out->threads; k++)
		exited(&registry.exited[k % SP_ACCOUNT_EXITED_KEPT], arg);
	sp_unlock(&registry_lock);
}

uint64_t sp_registry_account_seq(void)
{
	return sp_load_relaxed(&account_seq);
}

/*
 * A thread's new entry for (@site, @obj, @op), the slow path of the
 * probes' lookup (probe.h, sp_entry_get()): inserted into its table,
 * cached, and the lock's creation site noted when no init was seen.
 */
SP_NOINLINE struct sp_entry *sp_entry_insert__slowpath(struct sp_thread *t,
						      const struct sp_site *site, uintptr_t obj,
						      int op)
{
	int type = op == SP_TYPE_MUTEX ? sp_mutex_type((const void *)obj) : op;
	struct sp_entry *e = sp_table_insert(&t->table, site, obj, op, type);

	if (!e) {
		sp_lost_add(1);
		return NULL;
	}
	/* Its key's row has a sample: no ramp (hold.c, "The ramp").  Read
	 * by this thread only, in the sample's test. */
	if (sp_hold_times_on_fast() && sp_op_holds(op) && sp_hold_ramp_known(e))
		sp_store_release(&e->flags, e->flags | SP_ENTRY_NO_RAMP);
	t->last = e;
	/* Not for joins (sp_join_entry_get()), nor for an entry in its
	 * lock's home slot, where every lookup looks before near[]
	 * (SP_ENTRY_CACHED()): a fresh thread's near[] page stays unwritten,
	 * and its first read (the shared zero page) is not followed by a
	 * write that replaces it (table.c, home_alloc(), says what that
	 * costs). */
	if (op != SP_TYPE_JOIN && !sp_table_is_home(&t->table, e))
		t->near[sp_near_slot(obj, sp_site_salt(site->file, site->pc, site->line))] = e;
	if (t == sp_tls_self)
		sp_tls_home_sync(t); /* home slots mapped by the insert */
	/* The lock's creation site when no init was seen (lockname.c); a
	 * joined thread is no lock. */
	if (op != SP_TYPE_JOIN)
		sp_lockname_first_use(obj, site);
	return e;
}
