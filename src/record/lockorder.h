/*
 * lockorder.h - lock-order checking (lockorder.c): the probes' inline
 * entry points, and the read side that collect.c turns into a profile's
 * cycles.  Private to src/record, src/report/collect.c, src/runtime and
 * preload/.
 *
 * A probe calls sp_order_acquired() right after a successful *blocking*
 * acquisition and before hold tracking pushes the lock (hold.h), so that
 * the thread's published held list (struct sp_hold_pub) is exactly the
 * locks held while this one was waited for.  Holding nothing - the common
 * case - costs one load and a branch; a nested acquisition costs a probe
 * of the thread's cache of known edges per held lock (lockorder.c).
 */
#ifndef SP_RECORD_LOCKORDER_H
#define SP_RECORD_LOCKORDER_H

#include "record/hold.h"

/*
 * Lock-order checking is on in this copy of the library (its tables
 * exist); set with release order once they are, by sp_order_init().  As
 * sp_hold_ready, per copy: the flag word is shared by two copies.
 */
extern int sp_order_ready;
static inline int sp_order_is_on(void)
{
	return sp_load_relaxed(&sp_order_ready);
}

/* Start lock-order checking; start-up only, after sp_hold_init().
 * Return 0, or -ENOMEM (the program then runs on without it). */
int sp_order_init(void);
/* fork(): the order lock is held across fork() (lifecycle.c). */
void sp_order_fork_prepare(void);
void sp_order_fork_parent(void);
void sp_order_fork_child(void);

/* The held list was not empty: the noinline part of sp_order_acquired(). */
void sp_order_check__slowpath(struct sp_thread *t, uintptr_t obj, int op,
			      const struct sp_site *site, int retake);

/* The calling thread holds a lock (its published list is not empty):
 * only then can a blocking acquisition add edges.  One load when it
 * holds nothing. */
static SP_ALWAYS_INLINE int sp_order_holds_any(void)
{
	const struct sp_hold_pub *p = sp_hold_my_pub;

	return p && SP_PUB_N(p->state);
}

/*
 * sp_order_acquired() - @t is about to acquire @obj (op @op, at @site) by
 * a blocking call: the probes call it before the lock is tried
 * (probe.h, sp_probe_order_before()); its held list does not have @obj
 * (or has it: a recursive or read re-lock, which adds no edge).  Owner
 * only; never blocks but on the rare new-edge path (the order lock, a
 * futex).
 */
static SP_ALWAYS_INLINE void sp_order_acquired(struct sp_thread *t, uintptr_t obj, int op,
					       const struct sp_site *site)
{
	if (sp_order_holds_any())
		sp_order_check__slowpath(t, obj, op, site, 0);
}

/* The same, out of line: for probes that inline much else, so that lock
 * order costs them no register when it is off (syncprof_mutex_lock() &co:
 * a callee-saved register more on every call when inlined). */
void sp_order_acquired_call(struct sp_thread *t, uintptr_t obj, int op,
			    const struct sp_site *site);

/* A condition wait retook its mutex @m (at the wait's @site) while the
 * thread held the rest of its list: edges from each of those to @m. */
static SP_ALWAYS_INLINE void sp_order_retaken(struct sp_thread *t, uintptr_t m,
					      const struct sp_site *site)
{
	if (sp_order_holds_any())
		sp_order_check__slowpath(t, m, SP_TYPE_MUTEX, site, 1);
}

/*
 * sp_order_forget() - the lock at @obj was destroyed or (re)initialised:
 * it leaves the graph, so that a lock later made at the same address
 * starts without edges.  Any thread; one relaxed atomic add.
 */
void sp_order_forget(const void *obj);

/* ---- the read side (collect.c) ------------------------------------------- */

#define SP_ORDER_MAX_CYCLE SP_MAX_CYCLE_EDGES

/* One end of an edge: a lock, how it was taken and where. */
struct sp_order_end_view {
	uintptr_t obj;
	uint8_t type;  /* enum sp_type */
	uint8_t n_frames;
	struct sp_site site;
	const uintptr_t *frames; /* callers of the site, innermost first */
};

/* "@acquired taken while @held was held", by thread @tid. */
struct sp_order_edge_view {
	struct sp_order_end_view held, acquired;
	pid_t tid;
};

struct sp_cycle_view {
	unsigned n;
	uint64_t count; /* object-level cycles found with these sites, net of the reset */
	struct sp_order_edge_view edges[SP_ORDER_MAX_CYCLE];
};

struct sp_order_stats {
	uint64_t edges_kept;     /* live edges in the graph (a sweep frees dead ones) */
	uint64_t edges_dropped;  /* new edges that found the table full */
	uint64_t cycles_dropped; /* cycles found that found the cycle table full */
	uint64_t searches_cut;   /* cycle searches stopped by their budget */
};

/*
 * Every cycle found (net of the last reset's snapshot; those with nothing
 * left are skipped) to @fn, and the graph's counts to *@st.  Any thread,
 * lock-free (edges and cycles never change once published); callers
 * serialise with resets (report_lock).
 */
void sp_order_foreach_cycle(void (*fn)(const struct sp_cycle_view *c, void *arg), void *arg,
			    struct sp_order_stats *st);
/* Under report_lock: later reports subtract the counts found so far. */
void sp_order_snapshot(void);

#endif /* SP_RECORD_LOCKORDER_H */
