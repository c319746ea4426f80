/*
 * registry.h - the calling thread's record as the probes use it
 * (registry.c): the thread-local pointer and the instrumented fast path's
 * home slots, the thread's entry for a call (found, or inserted), and its
 * histograms' counts.  Private to src/record, src/runtime (control.c),
 * preload/ (through probe.h) and the tests.
 */
#ifndef SP_RECORD_REGISTRY_H
#define SP_RECORD_REGISTRY_H

#include "record.h"

static inline void sp_tls_home_sync(const struct sp_thread *t)
{
	syncprof__home =
		t && sp_home_inline ? (struct syncprof__entry *)(void *)t->table.home : NULL;
}

static inline void sp_tls_self_set(struct sp_thread *t)
{
	sp_tls_self = t;
	sp_tls_home_sync(t);
}

/* The calling thread @t's entry for (@site, @obj, @op): from its caches,
 * its table, or inserted (registry.c); NULL when its table is full. */
struct sp_entry *sp_entry_insert__slowpath(struct sp_thread *t, const struct sp_site *site,
					   uintptr_t obj, int op);
static SP_ALWAYS_INLINE struct sp_entry *sp_entry_get(struct sp_thread *t,
						      const struct sp_site *site, uintptr_t obj,
						      int op)
{
#define IS_CALLS(e) sp_entry_matches((e), site, obj, op)
	uintptr_t salt = sp_site_salt(site->file, site->pc, site->line);
	struct sp_entry *e = SP_ENTRY_CACHED(t, obj, salt, IS_CALLS);
#undef IS_CALLS

	if (SP_LIKELY(e))
		return e;
	e = sp_table_find(&t->table, site, obj, op);
	if (SP_UNLIKELY(!e))
		return sp_entry_insert__slowpath(t, site, obj, op);
	t->near[sp_near_slot(obj, salt)] = e;
	t->last = e;
	return e;
}

/*
 * The calling thread @t's entry for its join of @thread at @site.  A
 * joined thread is no lock: its pthread_t, an address on its own stack,
 * would pick a home and a near slot (sp_entry_get()) on pages no lock of
 * the thread touches - a page fault or two per join, a new thread's cost
 * (issue 25).  Its entries live in the chunks, found by the index
 * (sp_table_insert() gives them no home slot).
 */
static inline struct sp_entry *sp_join_entry_get(struct sp_thread *t, const struct sp_site *site,
						 uintptr_t thread)
{
	struct sp_entry *e = t->last;

	if (!e || !sp_entry_matches(e, site, thread, SP_TYPE_JOIN))
		e = sp_table_find(&t->table, site, thread, SP_TYPE_JOIN);
	if (SP_UNLIKELY(!e))
		return sp_entry_insert__slowpath(t, site, thread, SP_TYPE_JOIN);
	t->last = e;
	return e;
}

/*
 * The owner of @e, the calling thread, adds @weight to the bucket of @ns in
 * @e's histogram @which: in the common case a 32-bit load, add and relaxed
 * store.  A count that cannot be stored (no memory for its block) is
 * counted as lost.
 */
static inline void sp_entry_hist_add(struct sp_entry *e, enum sp_hist_which which, uint64_t ns,
				     uint32_t weight)
{
	uintptr_t *slot = &sp_entry_cold_w(e)->hist[which];
	uintptr_t h = *slot;
	unsigned b = sp_hist_bucket(ns);
	struct sp_thread *t;

	if (SP_LIKELY(h && !(h & SP_HIST_TAGS))) {
		uint32_t *c = &((struct sp_hist32 *)h)->n[b];
		uint32_t v = *c + weight;

		if (SP_LIKELY(v >= *c)) { /* no wrap */
			sp_store_relaxed(c, v);
			return;
		}
	}
	t = sp_tls_self;
	if (sp_hist_add__slowpath(t ? &t->table : NULL, slot, b, weight))
		sp_lost_add(1);
}

#endif
