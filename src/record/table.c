/*
 * table.c - per-thread table of lock statistics, one entry per
 * (call site, object, op).
 *
 * Design: entries are appended to chunks that never move; chunk k holds
 * SP_CHUNK0 << k entries, so 24 chunks hold about a billion entries and no
 * entry is ever copied.  An open-addressing index (linear probing, load at
 * most 1/2) maps a key to its entry; only the owning thread reads or writes
 * the index, so it needs no synchronisation and is simply rebuilt into a
 * larger mapping when it fills.  A reader in another thread (a report) sees
 * the first n_entries entries, n_entries being stored with release after an
 * entry's key is written, and loaded with acquire.
 *
 * A thread's table (use_home) puts the first entry of a lock in the home
 * slot its address picks, when free: SP_LOCK_SLOTS entries mapped at the
 * first insertion, pages touched as used, published one by one (the
 * entry's live byte, stored with release after its key); readers see
 * them as the first SP_LOCK_SLOTS indices of sp_table_at(), NULL where
 * free.  The probe's fast path then finds such an entry from the lock's
 * address with one load, where the near[] cache needs two, dependent
 * (lockbench -t 1 -m 1024: ~1.54x -> ~1.33x, compiled in and preloaded).
 *
 * Memory comes from mmap, never malloc (see util.c).
 *
 * Invariants: index slots point into the chunks or the home slots; every
 * entry is in the index exactly once; n_entries and n_home only grow; a
 * home slot, once live, keeps its key.
 *
 * Function names of instrumented sites (__func__) are not kept per entry:
 * a site's file and line name its function, so one process-wide table of
 * (file, line) -> function, filled when an entry of the site is inserted,
 * serves every entry of that site.  An entry's cold part is then written
 * only when it has something to say (a wait, a hold, a reset), and a
 * program that locks a million locks once each touches only their hot
 * parts (bench/membench: 185 bytes of RSS per lock before, compiled in and
 * preloaded; docs/layout.md has the figures after).  When that table is
 * full (SITE_FUNCS sites), the name goes in the entry's cold part as before.
 *
 * Alternatives considered: one concurrent hash table shared by all threads
 * (QSP's qht) puts a shared cache line on every acquisition; a per-thread
 * table with entries inside the index needs the index to stay put for
 * readers, so growing it would need RCU-like reclamation.
 */
#include <errno.h>
#include <string.h>

#include "record/record.h"

/* Bumped by a reset (runtime); an entry zeroes its maxima when its epoch
 * is older (record.h, sp_entry_refresh_epoch()). */
uint32_t sp_reset_epoch;

#define INDEX_MIN 256

/* ---- function names of instrumented sites ---------------------------------- */

#define SITE_FUNCS 8192 /* sites; 24 bytes each, pages touched as used */
#define SITE_FUNC_PROBES 32

struct site_func {
	const char *file; /* claimed with a CAS; then line and func, then ready */
	const char *func;
	uint32_t line;
	uint32_t ready;
};

static struct site_func *site_funcs;

static size_t site_func_hash(const char *file, uint32_t line)
{
	return (size_t)((((uintptr_t)file * 0x9E3779B97F4A7C15ull) ^ line * 0xC2B2AE3Dull) >> 17);
}

static struct site_func *site_funcs_get(void)
{
	struct site_func *tab = sp_load_acquire(&site_funcs), *none = NULL;

	if (tab)
		return tab;
	tab = sp_mmap(SITE_FUNCS * sizeof(*tab));
	if (!tab)
		return NULL;
	if (!__atomic_compare_exchange_n(&site_funcs, &none, tab, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		sp_munmap(tab, SITE_FUNCS * sizeof(*tab));
		tab = none;
	}
	return tab;
}

/* The function of the instrumented site @file:@line, or NULL. Any thread. */
const char *sp_site_func(const char *file, uint32_t line)
{
	const struct site_func *tab = sp_load_acquire(&site_funcs);
	size_t h = site_func_hash(file, line);

	if (!tab || !file)
		return NULL;
	for (unsigned i = 0; i < SITE_FUNC_PROBES; i++) {
		const struct site_func *s = &tab[(h + i) & (SITE_FUNCS - 1)];
		const char *f = sp_load_acquire(&s->file);

		if (!f)
			return NULL;
		if (f == file && sp_load_acquire(&s->ready) && s->line == line)
			return s->func;
	}
	return NULL;
}

/* Remember @func as the function of @file:@line: 0 when the table has no
 * room for it.  Two threads adding one site at once may both add it (a
 * later lookup finds either); a slot being filled is passed by. */
static int site_func_put(const char *file, uint32_t line, const char *func)
{
	struct site_func *tab = site_funcs_get();
	size_t h = site_func_hash(file, line);

	if (!tab)
		return 0;
	for (unsigned i = 0; i < SITE_FUNC_PROBES; i++) {
		struct site_func *s = &tab[(h + i) & (SITE_FUNCS - 1)];
		const char *f = sp_load_acquire(&s->file);

		if (!f && __atomic_compare_exchange_n(&s->file, &f, file, 0, __ATOMIC_ACQ_REL,
						      __ATOMIC_ACQUIRE)) {
			s->line = line;
			s->func = func;
			sp_store_release(&s->ready, 1);
			return 1;
		}
		if (f == file && sp_load_acquire(&s->ready) && s->line == line)
			return 1;
	}
	return 0;
}

const struct sp_entry_cold sp_entry_cold_zero;

const char *sp_entry_func(const struct sp_entry *e)
{
	const char *f = sp_load_relaxed(&sp_entry_cold_r(e)->func);

	return f ? f : e->file ? sp_site_func(e->file, e->line) : NULL;
}

static size_t chunk_cap(unsigned k)
{
	return (size_t)SP_CHUNK0 << k;
}

static size_t chunk_bytes(unsigned k)
{
	return chunk_cap(k) * sizeof(struct sp_entry);
}

static size_t cold_chunk_bytes(unsigned k)
{
	return chunk_cap(k) * sizeof(struct sp_entry_cold);
}

/* Chunk and offset of entry i: chunk k starts at SP_CHUNK0 * (2^k - 1). */
static void entry_locate(size_t i, unsigned *k, size_t *off)
{
	size_t q = i / SP_CHUNK0 + 1;
	unsigned kk = 63u - (unsigned)__builtin_clzll(q);

	*k = kk;
	*off = i - (size_t)SP_CHUNK0 * (((size_t)1 << kk) - 1);
}

void sp_table_init(struct sp_table *t)
{
	memset(t, 0, sizeof(*t));
}

/* The home arrays, then the cold parts, then the first index: each part
 * starts a cache line (entries are 64 bytes, cold parts 104). */
size_t sp_table_lent_bytes(void)
{
	return SP_LOCK_SLOTS * (sizeof(struct sp_entry) + sizeof(struct sp_entry_cold)) +
	       INDEX_MIN * sizeof(struct sp_entry *);
}

/*
 * Issue 25: a new thread's table mapped its home arrays, their cold parts
 * and its index apart from its record - four mappings per thread, at ~10
 * us a system call on this project's VM.  Lent by the record's mapping
 * instead, they cost no call; their untouched pages stay unresident all
 * the same.
 */
void sp_table_init_in(struct sp_table *t, void *mem)
{
	unsigned char *m = mem;

	sp_table_init(t);
	t->use_home = 1;
	t->home_lent = (struct sp_entry *)m;
	m += SP_LOCK_SLOTS * sizeof(struct sp_entry);
	t->home_cold = (struct sp_entry_cold *)m;
	m += SP_LOCK_SLOTS * sizeof(struct sp_entry_cold);
	t->index = (struct sp_entry **)m;
	/* Written before any lookup reads it: a fresh page read first is the
	 * shared zero page, and the first insert's write then replaces it,
	 * which costs a second fault and, in a process with more than one
	 * thread, a TLB shootdown of the other CPUs (an interrupt each). */
	*(volatile uintptr_t *)(void *)t->index = 0;
	t->index_mask = INDEX_MIN - 1;
	t->index_shift = 64u - (unsigned)__builtin_ctzll((unsigned long long)INDEX_MIN);
	t->index_lent = t->index;
}

void sp_table_destroy(struct sp_table *t)
{
	if (t->home && !t->index_lent) {
		sp_munmap(t->home, SP_LOCK_SLOTS * sizeof(*t->home));
		sp_munmap(t->home_cold, SP_LOCK_SLOTS * sizeof(*t->home_cold));
	}
	for (unsigned k = 0; k < SP_MAX_CHUNKS; k++) {
		sp_munmap(t->chunks[k], chunk_bytes(k));
		sp_munmap(t->cold_chunks[k], cold_chunk_bytes(k));
	}
	sp_hist_pool_destroy(&t->hist_pool);
	if (t->index && t->index != t->index_lent)
		sp_munmap(t->index, (t->index_mask + 1) * sizeof(*t->index));
	memset(t, 0, sizeof(*t));
}

/*
 * Reuse (registry.c): an exited thread's table, emptied in place, serves
 * the next thread, so that a short thread maps and unmaps nothing (each
 * munmap of a multithreaded process shoots down the other CPUs' TLBs).
 * Its entries are found through the index, not by walking the home slots,
 * whose untouched pages would then be faulted in.
 */
int sp_table_reset(struct sp_table *t, struct sp_entry **near)
{
	size_t slots = t->index ? t->index_mask + 1 : 0;

	if (sp_table_count(t) > SP_TABLE_REUSE_MAX)
		return 0;
	for (size_t i = 0; i < slots; i++) {
		struct sp_entry *e = t->index[i];

		if (!e)
			continue;
		if (near) {
			struct sp_entry **n =
				&near[sp_near_slot(e->obj, sp_site_salt(e->file, e->pc, e->line))];

			/* Only where it is e: a page of near[] that lookups
			 * only read stays the shared zero page (home_alloc()). */
			if (*n == e)
				*n = NULL;
		}
		if (e->cold_set)
			memset(e->cold, 0, sizeof(*e->cold));
		memset(e, 0, sizeof(*e));
		t->index[i] = NULL;
	}
	sp_hist_pool_reset(&t->hist_pool);
	t->n_entries = 0;
	t->n_home = 0;
	memset(t->home_live, 0, sizeof(t->home_live));
	return 1;
}

size_t sp_table_count(const struct sp_table *t)
{
	return sp_load_acquire(&t->n_home) + sp_load_acquire(&t->n_entries);
}

size_t sp_table_span(const struct sp_table *t)
{
	return (t->use_home ? SP_LOCK_SLOTS : 0) + sp_load_acquire(&t->n_entries);
}

size_t sp_table_next(const struct sp_table *t, size_t i)
{
	if (!t->use_home || i >= SP_LOCK_SLOTS)
		return i;
	for (size_t w = i / 64; w < SP_LOCK_SLOTS / 64; w++) {
		uint64_t bits = sp_load_acquire(&t->home_live[w]);

		if (w == i / 64)
			bits &= ~0ull << (i % 64);
		if (bits)
			return w * 64 + (size_t)__builtin_ctzll(bits);
	}
	return SP_LOCK_SLOTS;
}

struct sp_entry *sp_table_at(const struct sp_table *t, size_t i)
{
	unsigned k;
	size_t off;

	if (t->use_home) {
		if (i < SP_LOCK_SLOTS) {
			struct sp_entry *home;

			if (!(sp_load_acquire(&t->home_live[i / 64]) >> (i % 64) & 1))
				return NULL;
			home = sp_load_acquire(&t->home);
			return home && (sp_load_acquire(&home[i].flags) & SP_ENTRY_LIVE) ? &home[i] : NULL;
		}
		i -= SP_LOCK_SLOTS;
	}
	entry_locate(i, &k, &off);
	return &t->chunks[k][off];
}

static void index_put(struct sp_entry **index, size_t mask, struct sp_entry *e)
{
	unsigned shift = 64u - (unsigned)__builtin_ctzll((unsigned long long)mask + 1);
	size_t i = sp_key_slot(e->file, e->pc, e->line, e->obj, e->op, shift);

	while (index[i])
		i = (i + 1) & mask;
	index[i] = e;
}

/* Doubled, rehashed into a new mapping whose pages are mapped at once:
 * the rehash writes all over it, and a page fault each cost more
 * (sysbench mutex, 4,096 locks on 2 threads: 192 faults fewer). */
static int index_grow(struct sp_table *t)
{
	size_t cap = t->index ? (t->index_mask + 1) * 2 : INDEX_MIN;
	struct sp_entry **nidx = sp_mmap_filled(cap * sizeof(*nidx));
	size_t n = sp_table_span(t);

	if (!nidx)
		return -ENOMEM;
	for (size_t i = sp_table_next(t, 0); i < n; i = sp_table_next(t, i + 1)) {
		struct sp_entry *e = sp_table_at(t, i);

		if (e)
			index_put(nidx, cap - 1, e);
	}
	if (t->index && t->index != t->index_lent)
		sp_munmap(t->index, (t->index_mask + 1) * sizeof(*t->index));
	t->index = nidx;
	t->index_mask = cap - 1;
	t->index_shift = 64u - (unsigned)__builtin_ctzll((unsigned long long)cap);
	return 0;
}

/* The home slot of @obj when it is free (its home arrays mapped at the
 * first use), else NULL. */
static struct sp_entry *home_alloc(struct sp_table *t, uintptr_t obj)
{
	size_t i = sp_lock_slot(obj);

	if (!t->home) {
		struct sp_entry_cold *cold = t->home_cold;
		struct sp_entry *home = t->home_lent;

		if (!home) {
			cold = sp_mmap(SP_LOCK_SLOTS * sizeof(*cold));
			home = cold ? sp_mmap(SP_LOCK_SLOTS * sizeof(*home)) : NULL;
		}
		if (!home) {
			if (cold)
				sp_munmap(cold, SP_LOCK_SLOTS * sizeof(*cold));
			t->home_failed = 1; /* the span stays: its slots are NULL */
			return NULL;
		}
		/* Nothing has read these pages: the fast paths look at the
		 * home slots only once @home is published, reports only at
		 * live slots.  So the first touch of this slot's page is a
		 * write, not a read of the shared zero page that the insert
		 * would then replace: a second fault and, with more than
		 * one thread, a TLB shootdown of the other CPUs (14 us
		 * against 2 us on the VM of docs/cost.md, "Per process"). */
		home[i].cold = &cold[i];
		t->home_cold = cold;
		sp_store_release(&t->home, home);
	}
	if (t->home[i].flags & SP_ENTRY_LIVE)
		return NULL;
	t->home[i].cold = &t->home_cold[i];
	return &t->home[i];
}

static struct sp_entry *entry_alloc(struct sp_table *t)
{
	size_t n = t->n_entries;
	unsigned k;
	size_t off;

	entry_locate(n, &k, &off);
	if (k >= SP_MAX_CHUNKS)
		return NULL;
	if (!t->chunks[k]) {
		/* Published to readers by the release store of n_entries. */
		t->cold_chunks[k] = sp_mmap(cold_chunk_bytes(k));
		if (!t->cold_chunks[k])
			return NULL;
		t->chunks[k] = sp_mmap(chunk_bytes(k));
		if (!t->chunks[k]) {
			sp_munmap(t->cold_chunks[k], cold_chunk_bytes(k));
			t->cold_chunks[k] = NULL;
			return NULL;
		}
	}
	/* Fresh mmap pages are zero. */
	t->chunks[k][off].cold = &t->cold_chunks[k][off];
	return &t->chunks[k][off];
}

struct sp_entry *sp_table_insert(struct sp_table *t, const struct sp_site *site, uintptr_t obj,
				 int op, int type)
{
	struct sp_entry *e, *home;
	uint32_t epoch;

	if ((!t->index || (t->n_entries + t->n_home + 1) * 2 > t->index_mask + 1) &&
	    index_grow(t))
		return NULL;
	/* Joins take no home slot (sp_join_entry_get() says why). */
	home = t->use_home && !t->home_failed && op != SP_TYPE_JOIN ? home_alloc(t, obj) : NULL;
	e = home ? home : entry_alloc(t);
	if (!e)
		return NULL;
	e->obj = obj;
	e->file = site->file;
	e->pc = site->pc;
	e->line = site->line;
	e->op = (uint8_t)op;
	e->type = (uint8_t)type;
	e->cold_set = 0;
	if (!home)
		e->flags = 0; /* a chunk's entry, maybe reused: never live */
	/* The cold part is fresh mmap'd memory, all zero: written only when
	 * it is to say something, so that the cold pages of entries that
	 * never wait stay untouched (not resident: docs/layout.md). */
	if (site->func && site->file && !site_func_put(site->file, site->line, site->func))
		sp_entry_cold_w(e)->func = site->func;
	epoch = sp_load_relaxed(&sp_reset_epoch);
	if (epoch)
		sp_entry_cold_w(e)->epoch = epoch;
	index_put(t->index, t->index_mask, e);
	if (home) {
		size_t i = (size_t)(e - t->home);

		sp_store_release(&e->flags, SP_ENTRY_LIVE);
		sp_store_release(&t->home_live[i / 64], t->home_live[i / 64] | 1ull << (i % 64));
		sp_store_release(&t->n_home, t->n_home + 1);
	} else {
		sp_store_release(&t->n_entries, t->n_entries + 1);
	}
	return e;
}

/*
 * Fold the counters of @from into @into.  Maxima count only when taken in
 * the current reset epoch, so that a report after a reset does not show a
 * maximum from before it.
 */
int sp_table_fold(struct sp_table *into, const struct sp_table *from)
{
	uint32_t epoch = sp_load_relaxed(&sp_reset_epoch);
	size_t n = sp_table_span(from);
	int err = 0;

	for (size_t i = sp_table_next(from, 0); i < n; i = sp_table_next(from, i + 1)) {
		const struct sp_entry *s = sp_table_at(from, i);
		const struct sp_entry_cold *sc;
		struct sp_site site;
		struct sp_entry *d;
		struct sp_entry_cold *dc;

		if (!s)
			continue;
		site = (struct sp_site){ s->file, sp_entry_func(s), s->pc, s->line };
		d = sp_table_find(into, &site, s->obj, s->op);

		if (!d)
			d = sp_table_insert(into, &site, s->obj, s->op, s->type);
		if (!d)
			return -ENOMEM;
		d->acquisitions += sp_load_relaxed(&s->acquisitions);
		d->contended += sp_load_relaxed(&s->contended);
		d->owner_changes += sp_load_relaxed(&s->owner_changes);
		/* A cold part never written is all zero: it adds nothing, and
		 * neither page is touched. */
		if (!sp_load_relaxed(&s->cold_set))
			continue;
		sc = s->cold;
		dc = sp_entry_cold_w(d);
		if (dc->epoch != epoch) {
			dc->wait_max_ns = 0;
			dc->hold_max_ns = 0;
			dc->epoch = epoch;
		}
		dc->wait_ns += sp_load_relaxed(&sc->wait_ns);
		dc->hold_exact_ns += sp_load_relaxed(&sc->hold_exact_ns);
		dc->hold_exact_n += sp_load_relaxed(&sc->hold_exact_n);
		dc->hold_sample_ns += sp_load_relaxed(&sc->hold_sample_ns);
		dc->hold_sample_n += sp_load_relaxed(&sc->hold_sample_n);
		dc->hold_nonholds += sp_load_relaxed(&sc->hold_nonholds);
		if (sp_load_relaxed(&sc->epoch) == epoch) {
			uint64_t wm = sp_load_relaxed(&sc->wait_max_ns);
			uint64_t hm = sp_load_relaxed(&sc->hold_max_ns);

			if (wm > dc->wait_max_ns)
				dc->wait_max_ns = wm;
			if (hm > dc->hold_max_ns)
				dc->hold_max_ns = hm;
		}
		/* The row has a sample of its short holds: its key's new
		 * entries in other threads skip the ramp (hold.c). */
		if (dc->hold_sample_n)
			sp_hold_ramp_done(d);
		/* A histogram without memory loses its counts only: fold the rest. */
		if (sp_hist_fold(into, &dc->hist[SP_HIST_WAIT], &sc->hist[SP_HIST_WAIT]))
			err = -ENOMEM;
		if (sp_hist_fold(into, &dc->hist[SP_HIST_HOLD], &sc->hist[SP_HIST_HOLD]))
			err = -ENOMEM;
		if (!dc->n_frames && sc->n_frames) {
			/* @from's pool goes with it: the stack moves into ours. */
			uintptr_t *kept = sp_table_alloc(into, sc->n_frames * sizeof(*kept));

			if (kept) {
				memcpy(kept, sc->frames, sc->n_frames * sizeof(*kept));
				dc->frames = kept;
				sp_store_release(&dc->n_frames, sc->n_frames);
			}
		}
	}
	return err;
}
