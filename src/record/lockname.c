/*
 * lockname.c - what a lock is called and where it was created: the names
 * given with syncprof_name_lock() and the site of each lock's first init
 * (pthread_mutex_init & co., interposed or instrumented) or, failing that,
 * of its first recorded use.  Read by reports (src/report/collect.c).
 *
 * Why a table of its own: an entry belongs to one (site, object, op) of
 * one thread, and a lock has many; the name is a fact of the object.  So
 * one process-wide table behind one sp_lock_t: an open-addressed index
 * keyed by the lock's address (its keys, and beside them the number of
 * each lock's record), which starts at 1,024 slots and doubles when half
 * full, and the records themselves, dense, in the order the locks came,
 * in an anonymous mapping made at the first write.  The index's pages are
 * touched at random, the records' in order.  The first design kept the
 * records in the slots of a fixed 65,536-slot table, so 4,096 locks of
 * sysbench mutex touched ~1,700 pages of its 7 MiB, each a page fault
 * (3,728 faults against 2,003 with lock names off and 1,155 bare); a
 * fixed index beside dense records, 2,307; this one, 1,920 (with the
 * threads' indexes, table.c, mapped whole at each growth).
 *
 * Costs.  Nothing on the lock hot path: the table is written by the naming
 * call, by the init and destroy calls of locks while profiling is on, and
 * when a thread creates an entry for a new (site, object) - a slow path
 * already (probe.c).  The lock is never waited for without bound, so that
 * a signal handler that locks a new mutex while its thread holds it cannot
 * deadlock (the write is then counted lost); after fork() the child frees
 * it.  SP_LOCKNAME_SLOTS locks at most: a record is 112 bytes (7 MiB of
 * address space), an index slot 12 (1.5 MiB at most).
 *
 * Reuse.  A destroyed lock keeps its slot, marked dead, so that the report
 * made at exit still names the rows it left; the next init, name or first
 * use at that address starts a new lock there (no name, its own site).
 * When the table is full, or a probe sequence is too long, the write is
 * counted in sp_lockname_lost() and reports say so: never silently.
 *
 * Traces.  While a trace file is open (sp_trace_names_on), a change of a
 * lock's name - named, renamed, or a named address that gets a new lock
 * (its init, or its first use after a destroy) - is written to it as a
 * LOCK_NAME record, by the naming thread once it dropped the table's lock
 * (the trace's io_lock is never taken under names_lock; the trace's
 * start walks this table under io_lock: sp_lockname_each_named()).  A
 * destroy alone writes nothing: the trace's track of that address keeps
 * the name its events had.  Creation sites travel with names only: an
 * init of an unnamed lock, frequent in some programs, costs the trace
 * nothing.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "record.h"
#include "trace/trace.h"

#define SP_LOCKNAME_SLOTS (1u << 16)
#define SP_LOCKNAME_PROBES 256
#define SP_LOCKNAME_INDEX_MIN 1024u /* slots; doubled at half full */

struct lockname_slot {
	uintptr_t obj; /* 0: free */
	struct sp_site created;
	uint8_t how;  /* enum sp_lock_created */
	uint8_t dead; /* destroyed; the slot waits for the address's next lock */
	char name[SP_LOCK_NAME_MAX];
};

/* Written under names_lock; mapped at the first write, then published
 * (release): readers test recs outside the lock (a NULL check). */
static struct {
	uintptr_t *keys;           /* the index: a lock's address, 0 free */
	uint32_t *rec;             /* ... and its record's number */
	size_t cap;                /* the index's slots, a power of 2 */
	struct lockname_slot *recs; /* the records, n of them */
	uint32_t n;
} table;
static sp_lock_t names_lock = SP_LOCK_INIT;
static uint64_t names_lost;

/*
 * Take names_lock without ever waiting without bound.  A signal handler
 * that interrupted this thread while it held the lock (names_held) gives
 * up at once: its holder cannot go on until it returns.  Anyone else
 * waits for another thread's short copy - GRAB_YIELDS yields, then naps
 * of GRAB_NAP_NS, GRAB_TRIES tries in all (about 0.2 s) - and gives up
 * only past that (a holder stopped for good, as under a debugger), the
 * write then counted lost.  Until 2026-11-28 every caller gave up after
 * 1,000 yields (about a millisecond), which a loaded machine could reach
 * under TSan with no handler in sight (tests/test_lock_names.c).
 */
#define GRAB_TRIES 2100
#define GRAB_YIELDS 100
#define GRAB_NAP_NS 100000
static SP_TLS int names_held;

/* names_held is set before the lock is tried and cleared after it is
 * dropped, so that a handler that interrupts either step gives up at
 * once (a write counted lost) instead of waiting for its own thread. */
static int grab(unsigned tries)
{
	if (names_held)
		return 0;
	names_held = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < tries; i++) {
		int free_ = 0;

		if (__atomic_compare_exchange_n(&names_lock.state, &free_, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 1;
		if (i + 1 == tries)
			break;
		if (i < GRAB_YIELDS) {
			sched_yield();
		} else {
			struct timespec nap = { 0, GRAB_NAP_NS };

			nanosleep(&nap, NULL);
		}
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	names_held = 0;
	return 0;
}

static void drop(void)
{
	sp_unlock(&names_lock);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	names_held = 0;
}

static void lost(void)
{
	__atomic_add_fetch(&names_lost, 1, __ATOMIC_RELAXED);
}

static size_t slot_hash(uintptr_t obj, size_t cap)
{
	uint64_t h = (uint64_t)obj * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 40) & (cap - 1);
}

/* An index of @cap slots (its pages mapped at once: a rehash fills it at
 * random), with the keys of the old one put in; 0 or -ENOMEM. */
static int index_make(size_t cap)
{
	uintptr_t *keys = sp_mmap_filled(cap * sizeof(*keys));
	uint32_t *rec = sp_mmap_filled(cap * sizeof(*rec));

	if (!keys || !rec) {
		sp_munmap(keys, cap * sizeof(*keys));
		sp_munmap(rec, cap * sizeof(*rec));
		return -ENOMEM;
	}
	for (size_t j = 0; j < table.cap; j++) {
		size_t i;

		if (!table.keys[j])
			continue;
		for (i = slot_hash(table.keys[j], cap); keys[i]; i = (i + 1) & (cap - 1))
			;
		keys[i] = table.keys[j];
		rec[i] = table.rec[j];
	}
	sp_munmap(table.keys, table.cap * sizeof(*table.keys));
	sp_munmap(table.rec, table.cap * sizeof(*table.rec));
	table.keys = keys;
	table.rec = rec;
	table.cap = cap;
	return 0;
}

static int table_map(void)
{
	struct lockname_slot *recs = sp_mmap(SP_LOCKNAME_SLOTS * sizeof(*recs));

	if (!recs || index_make(SP_LOCKNAME_INDEX_MIN)) {
		sp_munmap(recs, SP_LOCKNAME_SLOTS * sizeof(*recs));
		return 0;
	}
	__atomic_store_n(&table.recs, recs, __ATOMIC_RELEASE);
	return 1;
}

/* The record of @obj, or NULL; with @add, a new one claimed for it (the
 * index doubled first when it would be half full). */
static struct lockname_slot *slot_of(uintptr_t obj, int add)
{
	size_t i;

	if (!__atomic_load_n(&table.recs, __ATOMIC_ACQUIRE) && (!add || !table_map()))
		return NULL;
	if (add && (table.n + 1) * 2 > table.cap && table.cap < SP_LOCKNAME_SLOTS * 2)
		(void)index_make(table.cap * 2); /* on failure the old one serves */
	i = slot_hash(obj, table.cap);
	for (unsigned k = 0; k < SP_LOCKNAME_PROBES; k++, i = (i + 1) & (table.cap - 1)) {
		struct lockname_slot *s;

		if (table.keys[i] == obj)
			return &table.recs[table.rec[i]];
		if (table.keys[i])
			continue;
		if (!add || table.n >= SP_LOCKNAME_SLOTS)
			return NULL;
		table.keys[i] = obj;
		table.rec[i] = table.n;
		s = &table.recs[table.n++];
		memset(s, 0, sizeof(*s));
		s->obj = obj;
		return s;
	}
	return NULL;
}

static void start_lock(struct lockname_slot *s, const struct sp_site *site, int how)
{
	s->dead = 0;
	s->name[0] = '\0';
	memset(&s->created, 0, sizeof(s->created));
	s->how = SP_CREATED_UNKNOWN;
	if (site) {
		s->created = *site;
		s->how = (uint8_t)how;
	}
}

/* Copy at most SP_LOCK_NAME_MAX - 1 bytes, not splitting a UTF-8 sequence. */
static void copy_name(char *dst, const char *src)
{
	size_t n = strnlen(src, SP_LOCK_NAME_MAX);

	if (n == SP_LOCK_NAME_MAX) {
		n = SP_LOCK_NAME_MAX - 1;
		while (n && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A name change for the trace, copied under names_lock, written after. */
struct name_change {
	struct sp_trace_lock_name n;
	char name[SP_LOCK_NAME_MAX];
};

static void change_note(struct name_change *c, const struct lockname_slot *s)
{
	c->n.obj = s->obj;
	memcpy(c->name, s->name, sizeof(c->name));
	c->n.name = c->name;
	c->n.created = s->created;
	c->n.how = s->how;
}

static void change_write(const struct name_change *c)
{
	if (c->n.obj)
		sp_trace_lock_named(&c->n);
}

/* Tracing, and the slot's live lock has a name that start_lock() ends. */
static int name_ends(const struct lockname_slot *s)
{
	return s->name[0] && sp_load_relaxed(&sp_trace_names_on);
}

int sp_lockname_set(uintptr_t obj, const char *name)
{
	struct name_change c = { .n = { .obj = 0 } };
	struct lockname_slot *s;

	if (!obj || !name)
		return -EINVAL;
	if (!grab(GRAB_TRIES)) {
		lost();
		return -EBUSY;
	}
	s = slot_of(obj, 1);
	if (s) {
		if (s->dead)
			start_lock(s, NULL, 0);
		copy_name(s->name, name);
		if (sp_load_relaxed(&sp_trace_names_on))
			change_note(&c, s);
	}
	drop();
	if (!s) {
		lost();
		return -ENOSPC;
	}
	change_write(&c);
	return 0;
}

void sp_lockname_init(uintptr_t obj, const struct sp_site *site)
{
	struct name_change c = { .n = { .obj = 0 } };
	struct lockname_slot *s;

	if (!obj)
		return;
	if (!grab(GRAB_TRIES)) {
		lost();
		return;
	}
	s = slot_of(obj, 1);
	if (s) {
		int ends = name_ends(s);

		start_lock(s, site, SP_CREATED_INIT);
		if (ends)
			change_note(&c, s);
	}
	drop();
	if (!s)
		lost();
	change_write(&c);
}

void sp_lockname_destroyed(uintptr_t obj)
{
	struct lockname_slot *s;

	if (!obj || !__atomic_load_n(&table.recs, __ATOMIC_RELAXED))
		return;
	if (!grab(GRAB_TRIES)) {
		lost();
		return;
	}
	s = slot_of(obj, 0);
	if (s)
		s->dead = 1;
	drop();
}

void sp_lockname_first_use(uintptr_t obj, const struct sp_site *site)
{
	struct name_change c = { .n = { .obj = 0 } };
	struct lockname_slot *s;

	if (!obj)
		return;
	if (!grab(GRAB_TRIES)) {
		lost();
		return;
	}
	s = slot_of(obj, 1);
	if (s && s->dead) {
		int ends = name_ends(s);

		start_lock(s, site, SP_CREATED_USE);
		if (ends)
			change_note(&c, s);
	} else if (s && s->how == SP_CREATED_UNKNOWN) {
		s->created = *site;
		s->how = SP_CREATED_USE;
	}
	drop();
	if (!s)
		lost();
	change_write(&c);
}

/*
 * For the trace's start (file.c, under its io_lock): @emit for every live
 * named lock, one at a time, each copied under names_lock and emitted
 * after dropping it, so that naming threads wait for one slot's copy at
 * most.  A walk that cannot take the lock (its holder was lost to fork,
 * or starves it) stops there, counted lost.
 */
#define WALK_STRIDE 4096u
void sp_lockname_each_named(sp_trace_lock_name_fn emit)
{
	size_t i = 0;

	while (__atomic_load_n(&table.recs, __ATOMIC_ACQUIRE)) {
		struct name_change c = { .n = { .obj = 0 } };
		size_t end;

		if (!grab(GRAB_TRIES)) {
			lost();
			return;
		}
		if (i >= table.n) {
			drop();
			return;
		}
		end = i + WALK_STRIDE < table.n ? i + WALK_STRIDE : table.n;
		for (; i < end && !c.n.obj; i++)
			if (!table.recs[i].dead && table.recs[i].name[0])
				change_note(&c, &table.recs[i]);
		drop();
		if (c.n.obj)
			emit(&c.n);
	}
}
#undef WALK_STRIDE

int sp_lockname_get(uintptr_t obj, char *name, struct sp_site *created)
{
	struct lockname_slot *s;
	int how = SP_CREATED_UNKNOWN;

	name[0] = '\0';
	memset(created, 0, sizeof(*created));
	if (!obj || !__atomic_load_n(&table.recs, __ATOMIC_RELAXED) || !grab(GRAB_TRIES))
		return how;
	s = slot_of(obj, 0);
	if (s) {
		memcpy(name, s->name, SP_LOCK_NAME_MAX);
		*created = s->created;
		how = s->how;
	}
	drop();
	return how;
}

void sp_lockname_fork_child(void)
{
	names_held = 0;
	__atomic_store_n(&names_lock.state, 0, __ATOMIC_RELAXED);
}

uint64_t sp_lockname_lost(void)
{
	return __atomic_load_n(&names_lost, __ATOMIC_RELAXED);
}
