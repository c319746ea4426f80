/*
 * trace_timeline_model.h - what the two passes of the timeline's build
 * share: the compact events of the first (trace_timeline.c) and the
 * threads' and locks' state that the second pairs them with
 * (trace_pairing.c).  Private to those two files.
 */
#ifndef SP_ANALYSE_TRACE_TIMELINE_MODEL_H
#define SP_ANALYSE_TRACE_TIMELINE_MODEL_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/containers.h"
#include "analyse/trace_timeline.h"

/* ---- a u64 triple -> u32 map: base/containers.h's, keyed by a hash ------ */

struct map_entry {
	uint64_t a, b, c;
	uint32_t v;
};

struct map {
	struct sp_u64map by_hash; /* hash of (a, b, c) -> index in e */
	struct map_entry *e;
	size_t n, cap;
};

struct map_key {
	const struct map *m;
	uint64_t a, b, c;
};

static inline uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull ^
		     (c + 1) * 0x94d049bb133111ebull;

	return h ^ (h >> 31);
}

static inline int map_eq(const void *ctx, uint64_t i)
{
	const struct map_key *k = ctx;
	const struct map_entry *e = &k->m->e[i];

	return e->a == k->a && e->b == k->b && e->c == k->c;
}

/* The entry of (a, b, c), or NULL. */
static inline struct map_entry *map_find(const struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
	struct map_key k = { m, a, b, c };
	uint64_t i;

	return sp_u64map_find(&m->by_hash, mix(a, b, c), map_eq, &k, &i) ? &m->e[i] : NULL;
}

static inline uint32_t map_get(const struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
	const struct map_entry *e = map_find(m, a, b, c);

	return e ? e->v : SP_TL_NONE;
}

/* Add (a, b, c) -> @v; the caller knows it is not there. */
static inline int map_put(struct map *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v)
{
	if (sp_grow(&m->e, &m->cap, m->n, sizeof(*m->e)) ||
	    sp_u64map_add(&m->by_hash, mix(a, b, c), m->n))
		return -ENOMEM;
	m->e[m->n++] = (struct map_entry){ a, b, c, v };
	return 0;
}

/* Set (a, b, c) to @v, whether or not it was there. */
static inline int map_set(struct map *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v)
{
	struct map_entry *e = map_find(m, a, b, c);

	if (!e)
		return map_put(m, a, b, c, v);
	e->v = v;
	return 0;
}

static inline void map_free(struct map *m)
{
	sp_u64map_free(&m->by_hash);
	free(m->e);
}


/* qsort() and bsearch() want a non-NULL array even when it is empty. */
static inline void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

/* ---- the events of the first pass, the state of the second ------------- */

enum { EV_LOCK, EV_USER, EV_DROPPED, EV_WRITE_LOSS, EV_STATE };

struct ev {
	int64_t ts, ts2;
	uint64_t obj, aux, ns; /* aux: type, or the mutex (cond events); ns: count;
				* EV_STATE: ns running, aux preempted */
	uint64_t seq;          /* file order */
	uint64_t off;          /* EV_USER: the record's file offset; EV_STATE: blocked */
	uint32_t tid, site;
	uint16_t id;
	uint8_t rec, has_ns;
};

struct held {
	uint64_t obj;
	int64_t start;
	uint32_t site, lock;
	uint8_t type;
};

struct pending_in {
	uint64_t obj;
	int64_t ts;
	uint32_t flow;
};

struct tstate {
	int waiting;
	uint64_t wait_obj;
	int64_t wait_start;
	uint32_t wait_site;
	int wait_begun; /* from a lock_wait / cond_wait event */
	struct held *holds;
	size_t n_holds, cap_holds;
	struct pending_in *in;
	size_t n_in, cap_in;
};

struct lstate {
	int released;
	int64_t rel_ts;
	uint32_t rel_tid, rel_slice, rel_site;
};

struct delta {
	int64_t ts;
	uint64_t seq;
	uint32_t lock;
	int32_t d;
};

struct sp_tl_private {
	struct map sites, locks, threads;
	struct map created; /* (obj, enum sp_lock_created) -> site: the latest LOCK_NAME's */
	struct ev *evs;
	size_t n_evs, cap_evs;
	struct tstate *ts;  /* parallel to tl->threads (in creation order) */
	struct lstate *ls;  /* parallel to tl->locks */
	struct delta *deltas;
	size_t n_deltas, cap_deltas;
	uint64_t seq;
	char **strs;        /* strings the sites point to */
	size_t n_strs, cap_strs;
};

/*
 * Times are kept within +-2^60 ns (36 years) and waits and holds below
 * 2^60 ns, so that no start, end or difference overflows whatever a
 * corrupt file says; a real trace is far inside.
 */
#define TS_LIMIT (INT64_C(1) << 60)

/* The second pass (trace_pairing.c): the events, sorted by time, paired
 * into slices, flows and the waiters' counts; 0 or -ENOMEM. */
int sp_tl_second_pass(struct sp_timeline *tl);

#endif /* SP_ANALYSE_TRACE_TIMELINE_MODEL_H */
