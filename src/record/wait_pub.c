/*
 * wait_pub.c - a thread's wait in progress, published for the watchdog,
 * and what the watchdog asks about it: who holds a lock for reading, and
 * which call sites signalled a condition variable last
 * (src/runtime/watchdog.c and deadlock.c have the reading side).
 *
 * Waits.  The contended slow path of the probe, which already reads the
 * clock before blocking, publishes "waiting since t0 on entry" in the
 * thread's own record (struct sp_wait_pub, a cache line only the owner
 * writes) under a sequence count, and clears it when the wait ends; only
 * while sp_watch_on is set (warn_wait=MS or deadlock=1).  With frames=N,
 * the first contended wait of an interposed entry keeps its callers
 * before it blocks rather than after (hold.c does it after): a wait that
 * never ends - a deadlock - still shows its stack.  Same unwind, same
 * cost, once per entry.
 *
 * Readers.  sp_hold_lookup() (hold.c) knows exclusive holders only; a
 * writer that waits for an rwlock waits for its readers.  sp_hold_readers()
 * walks the same published held lists (hold.h) lock-free and says which
 * thread holds the lock for reading, and how many do.
 *
 * Signals.  A thread stuck in a condition wait waits for a signal; the
 * watchdog names the call sites that signalled or broadcast that
 * condition variable last, as a hint of which one should have.  While
 * sp_watch_on is set, pthread_cond_signal/broadcast (preloaded or compiled
 * in) record their site in a direct-mapped table of SP_SIGNAL_SLOTS slots
 * keyed by the condition variable's address (two sites per slot, the
 * latest first).  A signal from the site already in front writes nothing
 * (a load and a compare: a producer that signals in a loop does not bounce
 * the slot's line); another site takes the slot with a CAS on its
 * sequence (odd while written) and moves the front site back.  A writer
 * that finds the slot being written skips its update: the table is a hint
 * and may be a signal late.  Two condition variables that share a slot
 * evict each other (the reader checks the key).  Off (no watchdog), a
 * signal costs one load and a branch.
 *
 * Alternatives considered: a per-thread "last signal" (the watchdog would
 * walk every thread per condition variable, and a signal's thread has no
 * record when it takes no profiled lock); a hash table with chaining
 * (needs an allocator on the signal path).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "base/lock_calls.h"
#include "hold.h"
#include "record/wait_pub.h"

unsigned sp_watch_on;

void sp_watch_begin(struct sp_thread *t, struct sp_entry *e, uint64_t t0, int mode, int timed)
{
	struct sp_wait_pub *w = &t->wait;
	uint32_t s = w->seq;

	sp_entry_keep_stack(t, e);
	sp_store_relaxed(&w->seq, s + 1); /* odd: being written */
	/* Release stores (plain moves on x86): a reader that sees one of
	 * them also sees the odd seq above, and retries.  The wait's own
	 * start (TSC ticks or ns, clock.c): no extra clock read here; the
	 * watchdog converts it with the same mode. */
	sp_store_release(&w->t0, t0);
	sp_store_release(&w->mode, mode);
	sp_store_release(&w->timed, timed);
	sp_store_release(&w->entry, e);
	sp_store_release(&w->seq, s + 2); /* even: a wait, identified by s + 2 */
}

const struct sp_site *sp_watch_end(struct sp_thread *t, uint64_t wait_ns)
{
	struct sp_wait_pub *w = &t->wait;
	uint32_t id = w->seq;
	const struct sp_site *root = NULL;

	/* Acquire: @root was written before @root_id (sp_watch_set_root()). */
	if (SP_UNLIKELY(sp_load_acquire(&w->root_id) == id))
		root = sp_load_relaxed(&w->root);

	sp_store_relaxed(&w->seq, id + 1);
	sp_store_release(&w->entry, NULL);
	/* Sequentially consistent store then load, as scan_thread() does
	 * with @warned and seq (Dekker): one of us sees the other. */
	__atomic_store_n(&w->seq, id + 2, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&w->warned, __ATOMIC_SEQ_CST) == id) {
		sp_store_relaxed(&w->done_ns, wait_ns);
		sp_store_release(&w->done_seq, id);
	}
	return root;
}

/* ---- root holders of wait chains ------------------------------------------- */

/*
 * Sites of root holders, interned: blame keeps a pointer, so a site once
 * here never changes or goes.  Written by the watchdog's thread only
 * (under its scan lock); read by waiting threads through the pointer
 * they were handed.  Few distinct root sites exist in a program; past
 * SP_ROOT_SITES, chains are not remembered for blame (counted).
 */
#define SP_ROOT_SITES 256

static struct {
	struct sp_site sites[SP_ROOT_SITES];
	unsigned n;
	uint64_t lost;
} roots SP_LARGE;

static const struct sp_site *root_intern(const struct sp_site *s)
{
	for (unsigned i = 0; i < roots.n; i++)
		if (roots.sites[i].pc == s->pc && roots.sites[i].file == s->file &&
		    roots.sites[i].line == s->line && roots.sites[i].func == s->func)
			return &roots.sites[i];
	if (roots.n == SP_ROOT_SITES) {
		sp_add_relaxed(&roots.lost, 1);
		return NULL;
	}
	roots.sites[roots.n] = *s;
	return &roots.sites[roots.n++];
}

void sp_watch_set_root(struct sp_thread *t, uint32_t id, const struct sp_site *root)
{
	const struct sp_site *r = root_intern(root);

	if (!r)
		return;
	sp_store_relaxed(&t->wait.root, r);
	sp_store_release(&t->wait.root_id, id);
}

uint64_t sp_root_sites_lost(void)
{
	return sp_load_relaxed(&roots.lost);
}

/* ---- readers of an rwlock --------------------------------------------------- */

int sp_hold_readers(uintptr_t obj, pid_t *tid, struct sp_site *site, unsigned *n_threads)
{
	unsigned n = 0;

	if (!obj || !sp_hold_is_on_acquire())
		return -ENOENT;
	for (struct sp_hold_pub *p = sp_hold_pubs(); p; p = p->next) {
		for (int attempt = 0; attempt < 16; attempt++) {
			uint64_t q = sp_load_acquire(&p->state);
			uint32_t k = SP_PUB_N(q);
			pid_t who = sp_load_acquire(&p->tid);
			struct sp_site st = { 0 };
			int found = 0;

			if ((q >> 32) & 1)
				continue;
			for (unsigned i = 0; i < k && i < SP_HELD_MAX; i++) {
				uint64_t info;

				if (sp_load_acquire(&p->e[i].obj) != obj)
					continue;
				info = sp_load_acquire(&p->e[i].info);
				if (info & SP_HELD_EXCLUSIVE)
					break;
				if (info & SP_HELD_INSTRUMENTED) {
					st.file = (const char *)sp_load_acquire(&p->e[i].where);
					st.func = sp_load_acquire(&p->e[i].func);
					st.line = (uint32_t)info;
				} else {
					st.pc = sp_load_acquire(&p->e[i].where);
				}
				found = 1;
				break;
			}
			if (sp_load_acquire(&p->state) != q)
				continue;
			if (found && who) {
				if (!n++) {
					*tid = who < 0 ? -who : who;
					*site = st;
				}
			}
			break;
		}
	}
	*n_threads = n;
	return n ? 0 : -ENOENT;
}

/* ---- who signalled a condition variable ------------------------------------- */

#define SP_SIGNAL_SLOTS 1024

struct signal_site {
	uintptr_t where; /* pc, or __FILE__ of an instrumented call */
	const char *func;
	uint32_t line;   /* 0: interposed */
	uint32_t broadcast;
};

struct signal_slot {
	uint32_t seq; /* odd: being written */
	uintptr_t cond;
	struct signal_site s[2];
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct signal_slot) == 64, "a signal slot is one cache line");

static struct signal_slot signal_table[SP_SIGNAL_SLOTS] SP_LARGE;

static size_t signal_slot_of(uintptr_t cond)
{
	return (size_t)((cond * 0x9E3779B97F4A7C15ull) >> 54) & (SP_SIGNAL_SLOTS - 1);
}

static int signal_site_is(const struct signal_slot *sl, const struct signal_site *x)
{
	return sp_load_relaxed(&sl->s[0].where) == x->where &&
	       sp_load_relaxed(&sl->s[0].line) == x->line &&
	       sp_load_relaxed(&sl->s[0].broadcast) == x->broadcast;
}

SP_NOINLINE void sp_cond_signalled__slowpath(const void *cond, const struct sp_site *site,
					     int broadcast)
{
	struct signal_slot *sl = &signal_table[signal_slot_of((uintptr_t)cond)];
	struct signal_site x = { site->file ? (uintptr_t)site->file : site->pc, site->func,
				 site->file ? site->line : 0, (uint32_t)broadcast };
	uint32_t s = sp_load_acquire(&sl->seq);

	if (!(s & 1) && sp_load_relaxed(&sl->cond) == (uintptr_t)cond && signal_site_is(sl, &x))
		return; /* the same site again: nothing to write */
	if ((s & 1) || !__atomic_compare_exchange_n(&sl->seq, &s, s + 1, 0, __ATOMIC_ACQUIRE,
						    __ATOMIC_RELAXED))
		return; /* another signaller writes it: a hint may be late */
	if (sl->cond == (uintptr_t)cond) {
		sp_store_release(&sl->s[1].where, sl->s[0].where);
		sp_store_release(&sl->s[1].func, sl->s[0].func);
		sp_store_release(&sl->s[1].line, sl->s[0].line);
		sp_store_release(&sl->s[1].broadcast, sl->s[0].broadcast);
	} else {
		sp_store_release(&sl->cond, (uintptr_t)cond);
		sp_store_release(&sl->s[1].where, 0);
	}
	sp_store_release(&sl->s[0].where, x.where);
	sp_store_release(&sl->s[0].func, x.func);
	sp_store_release(&sl->s[0].line, x.line);
	sp_store_release(&sl->s[0].broadcast, x.broadcast);
	sp_store_release(&sl->seq, s + 2);
}

unsigned sp_cond_signallers(const void *cond, struct sp_site *sites, int *broadcast, unsigned max)
{
	const struct signal_slot *sl = &signal_table[signal_slot_of((uintptr_t)cond)];

	for (int attempt = 0; attempt < 16; attempt++) {
		uint32_t s = sp_load_acquire(&sl->seq);
		struct signal_site c[2];
		unsigned n = 0;

		if (s & 1)
			continue;
		if (sp_load_acquire(&sl->cond) != (uintptr_t)cond)
			return 0;
		for (int i = 0; i < 2; i++) {
			c[i].where = sp_load_acquire(&sl->s[i].where);
			c[i].func = sp_load_acquire(&sl->s[i].func);
			c[i].line = sp_load_acquire(&sl->s[i].line);
			c[i].broadcast = sp_load_acquire(&sl->s[i].broadcast);
		}
		/* Acquire loads above: one that saw a newer signal's store
		 * makes this re-read see its odd or newer seq. */
		if (__atomic_load_n(&sl->seq, __ATOMIC_ACQUIRE) != s)
			continue;
		for (int i = 0; i < 2 && n < max; i++) {
			if (!c[i].where)
				continue;
			if (c[i].line) {
				sites[n] = (struct sp_site){ (const char *)c[i].where, c[i].func, 0,
							     c[i].line };
			} else {
				sites[n] = (struct sp_site){ NULL, NULL, c[i].where, 0 };
			}
			broadcast[n++] = (int)c[i].broadcast;
		}
		return n;
	}
	return 0;
}

/* The instrumented calls (syncprof/instrument.h); the preload library has
 * its own shims. */
SYNCPROF_API int syncprof_cond_signal(pthread_cond_t *c, const char *file, int line,
				      const char *func)
{
	const struct sp_site site = { file, func, 0, (uint32_t)line };

	sp_cond_signalled(c, &site, 0);
	return SP_REAL(pthread_cond_signal)(c);
}

SYNCPROF_API int syncprof_cond_broadcast(pthread_cond_t *c, const char *file, int line,
					 const char *func)
{
	const struct sp_site site = { file, func, 0, (uint32_t)line };

	sp_cond_signalled(c, &site, 1);
	return SP_REAL(pthread_cond_broadcast)(c);
}
