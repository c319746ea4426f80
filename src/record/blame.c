/*
 * blame.c - who made a contended wait wait (hold=1): for each contended
 * wait, the site where the thread that held the lock when the wait began
 * had acquired it, and - when that holder was itself waiting on a chain -
 * the chain's root holder; a global table keyed by (waiter site, object,
 * type, holder site, root) sums wait time and count.  Split from hold.c,
 * whose published lists (sp_hold_lookup()) say who holds a lock.
 *
 * Design: a fixed table of BLAME_SLOTS records, mmap'd at sp_hold_init()
 * (sp_blame_init()); a waiter claims a free record with one CAS and adds
 * to it with relaxed atomic adds, so waiters of different sites never
 * serialise; a full probe sequence counts the wait as lost
 * (sp_blame_lost(), said in reports).  Reports read the records lock-free
 * and subtract the last reset's snapshot.
 *
 * The contended waits' hooks (sp_wait_begin(), sp_wait_end()) live here
 * too: the slow path of a wait looks the holder up when it begins, and
 * adds the blame and, with frames=N, the first wait's stack when it ends.
 */
#include "hold.h"
#include "probe.h"

#define BLAME_SLOTS 8192
#define BLAME_PROBES 64

struct blame_rec {
	uint64_t hash;  /* 0: free; claimed with a CAS */
	int ready;      /* key written (release) */
	uint8_t type;
	uintptr_t obj;
	struct sp_site waiter;
	struct sp_site holder;
	struct sp_site root;       /* a wait chain's root holder; zero: none seen */
	uint64_t wait_ns, count;   /* relaxed atomic adds */
	uint64_t snap_wait, snap_count;
};

static struct blame_rec *blame;
static uint64_t blame_lost;

static uint64_t site_hash(const struct sp_site *s)
{
	return ((uint64_t)(uintptr_t)s->file + s->pc + ((uint64_t)s->line << 7)) *
	       0xC2B2AE3D27D4EB4Full;
}

static int site_eq(const struct sp_site *a, const struct sp_site *b)
{
	return a->file == b->file && a->pc == b->pc && a->line == b->line && a->func == b->func;
}

static void blame_add(const struct sp_entry *e, const struct sp_site *holder,
		      const struct sp_site *root_or_null, uint64_t wait)
{
	static const struct sp_site none;
	const struct sp_site *root = root_or_null ? root_or_null : &none;
	struct sp_site w = { e->file, sp_entry_func(e), e->pc, e->line };
	uint64_t h = (site_hash(&w) ^ (site_hash(holder) >> 3) ^ (site_hash(root) >> 5) ^
		      (e->obj * 0x9E3779B97F4A7C15ull) ^ e->type) | 1;

	if (!blame)
		return;
	for (unsigned i = 0; i < BLAME_PROBES; i++) {
		struct blame_rec *r = &blame[(h + i) & (BLAME_SLOTS - 1)];
		uint64_t cur = sp_load_acquire(&r->hash);

		if (!cur) {
			if (!__atomic_compare_exchange_n(&r->hash, &cur, h, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
				goto taken;
			r->type = e->type;
			r->obj = e->obj;
			r->waiter = w;
			r->holder = *holder;
			r->root = *root;
			sp_store_release(&r->ready, 1);
			cur = h;
		}
	taken:
		if (cur != h)
			continue;
		for (int spin = 0; !sp_load_acquire(&r->ready); spin++)
			if (spin > 1000)
				goto lost; /* its writer was preempted; rare */
		if (r->type != e->type || r->obj != e->obj || !site_eq(&r->waiter, &w) ||
		    !site_eq(&r->holder, holder) || !site_eq(&r->root, root))
			continue;
		sp_add_relaxed(&r->wait_ns, wait);
		sp_add_relaxed(&r->count, 1);
		return;
	}
lost:
	sp_add_relaxed(&blame_lost, 1);
}

/*
 * Every blame record, net of the last reset's snapshot, to @fn.  Any
 * thread; callers serialise with resets (report_lock).  Records still
 * being claimed are skipped.
 */
void sp_blame_foreach(void (*fn)(const struct sp_blame_view *b, void *arg), void *arg)
{
	if (!blame)
		return;
	for (size_t i = 0; i < BLAME_SLOTS; i++) {
		const struct blame_rec *b = &blame[i];
		struct sp_blame_view v;
		uint64_t wait, count;

		if (!sp_load_acquire(&b->ready))
			continue;
		wait = sp_load_relaxed(&b->wait_ns);
		count = sp_load_relaxed(&b->count);
		v.wait_ns = wait > b->snap_wait ? wait - b->snap_wait : 0;
		v.count = count > b->snap_count ? count - b->snap_count : 0;
		if (!v.count)
			continue;
		v.type = b->type;
		v.obj = b->obj;
		v.waiter = b->waiter;
		v.holder = b->holder;
		v.root = b->root;
		fn(&v, arg);
	}
}

int sp_blame_init(void)
{
	if (!blame)
		blame = sp_mmap(BLAME_SLOTS * sizeof(*blame));
	return blame ? 0 : -ENOMEM;
}

uint64_t sp_blame_lost(void)
{
	return sp_load_relaxed(&blame_lost);
}

/* Under report_lock (runtime/switch.c, at a reset). */
void sp_blame_snapshot(void)
{
	if (!blame)
		return;
	for (size_t i = 0; i < BLAME_SLOTS; i++) {
		struct blame_rec *b = &blame[i];

		if (!sp_load_acquire(&b->ready))
			continue;
		b->snap_wait = sp_load_relaxed(&b->wait_ns);
		b->snap_count = sp_load_relaxed(&b->count);
	}
}

/* ---- contended waits -------------------------------------------------------- */

void sp_wait_begin(uintptr_t obj, struct sp_wait_ctx *w)
{
	struct sp_hold_pub *p = sp_hold_my_pub;

	w->have_holder = 0;
	w->root = NULL;
	if (!sp_hold_times_are_on())
		return;
	/* A holder that waits for another lock: its long holds' state is
	 * "lock" meanwhile (holdstate.c); cleared by sp_wait_end(). */
	if (p && SP_PUB_N(p->state))
		sp_store_relaxed(&p->waiting, obj);
	w->have_holder = !sp_hold_lookup(obj, NULL, &w->holder, NULL);
}

void sp_wait_end(struct sp_entry *e, uint64_t wait_ns, const struct sp_wait_ctx *w)
{
	struct sp_hold_pub *p = sp_hold_my_pub;

	if (p && sp_load_relaxed(&p->waiting))
		sp_store_relaxed(&p->waiting, 0);

	if (w && w->have_holder)
		blame_add(e, &w->holder, w->root, wait_ns);
	if (sp_tls_self)
		sp_entry_keep_stack(sp_tls_self, e);
}
