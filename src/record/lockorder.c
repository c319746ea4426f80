/*
 * lockorder.c - lock-order checking (SYNCPROF_OPTIONS lock_order=1,
 * syncprof run --lock-order): the order in which threads take locks
 * inside others, and its cycles - potential deadlocks, whether or not one
 * happened in this run.
 *
 * The graph.  Nodes are lock objects; an edge A -> B says "B was taken by
 * a blocking call while A was held", with the call sites (and, for
 * interposed calls with frames=N, the stacks) of both acquisitions, the
 * modes (read or not) of both and the thread.  A cycle A -> B -> ... -> A
 * is a set of acquisitions that can wait for each other in a circle.
 * Which acquisitions make edges:
 *   - blocking calls (lock, timedlock, rdlock, wrlock, spin_lock; a timed
 *     call can wait too) add an edge from every lock the thread holds,
 *     before the lock is tried (probe.h, sp_probe_order_before()): the
 *     lookups stay out of the critical section of the lock taken, and an
 *     acquisition that never completes (a deadlock, a timeout) has its
 *     edges too - it did wait while holding the others;
 *   - a successful trylock adds none into the lock it took (it cannot
 *     wait), but that lock, once held, is the tail of later edges;
 *   - taking a lock the thread holds already adds none (a recursive
 *     mutex, a read lock taken again: neither can wait for itself);
 *   - a condition wait releases its mutex and retakes it: the retake is a
 *     blocking acquisition while the thread holds the rest of its list;
 *   - two read holds of one rwlock do not wait for each other: a cycle
 *     whose only waits at an rwlock are "read while read-held" is no
 *     deadlock with glibc's default (reader-preferring) rwlocks and is not
 *     reported; with PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP readers
 *     queue behind a waiting writer, and it is (sp_rwlock_readers_wait()).
 * Which locks a thread holds is hold tracking's published list (hold.h):
 * lock_order=1 turns on those lists alone (hold.c, "Lists only": no hold
 * timed, no blame, unless hold=1 too), and adds nothing to their pushes
 * and pops.
 *
 * Generations.  A destroyed (or initialised again) lock leaves the graph:
 * pthread_*_init/destroy and their C11 twins are interposed (preload.c)
 * and redirected (instrument.h) to sp_order_forget(), which bumps a
 * generation counter of the address in a direct-mapped table.  Nodes are
 * (address, generation); the search skips edges into a generation that is
 * no longer current, so a lock made later at a reused address starts
 * afresh instead of inheriting its predecessor's edges.  Two addresses
 * 2 MiB apart share a counter: a destroy then also forgets the other
 * lock's edges (cycles may be missed, none is invented).
 *
 * Cost.  An acquisition with nothing held costs the probe one load and a
 * branch (sp_order_acquired(), inline).  With locks held, each held lock
 * costs a probe of the thread's direct-mapped cache of known edges
 * (struct sp_order_slot, 256 per thread): a known edge is a lookup and
 * nothing else.  A miss looks the edge up in the global index, lock-free;
 * only an edge never seen before takes the order lock (sp_lock, a futex:
 * never a lock the program could see), is appended, and starts a search
 * for cycles through it.  Nothing on any of these paths mallocs.
 *
 * The index holds each edge's key as its 64-bit hash (edge_hash(): every
 * bit mixed from the whole key), not the edge's number: a lookup reads one
 * slot of the index (at most half full, so its probes are short) and no
 * edge.  Until 2026-11-28 it held edge numbers, and each probe read the
 * edge's key: two cache misses per lookup where the graph is large
 * (memcached -t 4 with --lock-order: edge_find() was 6% of the server's
 * CPU time; lockbench -t 1 -m 65536 -o -d 1000 -r 3, lock_order=1,
 * against glibc: 28-30x preloaded and 20-28x compiled in before, 17-19x
 * and 15-17x after - the rest is the per-thread tables' misses at 65,536
 * locks).  Two keys of one hash would make a new edge look known: about
 * N^2 / 2^65 for N keys ever seen, under one in 10^6 runs at ten million
 * edges.
 * Preloaded, lock order has a path of its own (preload.c, NAME_order()),
 * so that the hold-only fast path stays as it was; measured against
 * hold=1 (bench/parts/lock_order_bench.sh), a lone lock costs 0.88-1.05x
 * preloaded and 0.89-0.92x compiled in (no timed samples), a known edge
 * 1.06-1.25x, and 1024 edges, past the cache, 1.19-1.62x.
 *
 * The search.  A new edge A -> B closes a cycle iff A is reachable from B.
 * A breadth-first search from B (rather than a depth-first one: it finds
 * the shortest cycles first, which are the readable ones, and its visited
 * marks are exact) walks the out-edges of each node, keeping per node
 * whether it was reached by a read acquisition, to apply the read-read
 * rule above.  Each edge that reaches A closes one cycle; at most 4 are
 * taken per search (each through a different last edge), at most 16 edges
 * long, and a search expands at most 16384 nodes (counted in
 * searches_cut when it stops there).
 *
 * Cycles.  A cycle found is stored once per *sequence of sites* (rotated
 * to a canonical first edge, names compared by content): the same code
 * taking other objects in the same circle - a transfer between any two of
 * a thousand accounts - is one cycle whose count says how many object-level
 * cycles were found, with the objects, threads and stacks of the first.
 *
 * Limits: a cycle guarded by a lock that all its paths hold first (a
 * gate lock) is reported although it cannot deadlock, as TSan's detector
 * reports it (telling would mean keeping each edge's whole held set).
 *
 * Memory is bounded and allocated once, with mmap, when checking starts
 * (virtual; pages are touched as the graph grows): 262144 edges of ~112
 * bytes, their stacks apart (256 bytes each, touched only with frames=N),
 * an index of 2^19 8-byte slots, 2^20 nodes, the search queue, 256
 * cycles, 2^18 generation counters - about 160 MiB of address space.  memcached -t 4
 * under memcslap keeps ~103,000 live edges (its 8192 item locks, each
 * taken before several others): with 16384 slots it dropped 766,545 edge
 * sightings in 6 s.  An
 * edge that finds the table full is dropped and counted (once per thread
 * while it stays in that thread's cache); a cycle that finds the cycle
 * table full is counted; reports print both.
 *
 * Edges of destroyed locks leave the table.  An edge whose lock was
 * destroyed (or initialised again) since can never be taken again: its
 * generation is gone.  When a new edge finds the table full and some lock
 * was forgotten since the last sweep, a sweep (under order_lock) frees
 * the slots of dead edges - except those of stored cycles, which the
 * reports read - and rebuilds the index and the nodes from the live ones;
 * then the new edge takes a freed slot.  A program that creates and
 * destroys locks all day keeps every live edge (the 262144 slots bound the
 * edges alive at once, not those ever seen).  Lock-free lookups
 * (edge_known() of other threads) read the index alone; one that misses
 * during a sweep takes the slow path, whose lookup under order_lock sees
 * the index rebuilt.  A slot not yet cleared by a sweep holds the hash of
 * a dead edge, whose generations no lookup asks for any more.  Measured:
 * a program that creates 20,000 mutexes one after another, each taken
 * inside a long-lived lock, then takes two locks in both orders, kept
 * 16384 dead edges and dropped 3618 before (cycle missed); test
 * lockorder_churn now makes 300,000 such mutexes against 262144 slots,
 * and the late cycle is found.
 *
 * Concurrency.  Edges and cycles are written under order_lock and
 * published with release stores (the index slot, n_edges, n_cycles);
 * lock-free readers (the lookups of other threads, reports) load those
 * with acquire and read only published, immutable records.  A cycle's
 * count is a relaxed counter.  Lock order: report_lock, then order_lock;
 * order_lock is a leaf taken with no other lock of ours held, and held
 * across fork() (lifecycle.c).
 *
 * Alternatives considered: keeping held lists of our own (a second push
 * and pop per acquisition, where hold tracking's list is already there);
 * lockdep's lock classes (by initialisation site: instrumented and
 * interposed code have no such site for statically initialised locks);
 * TSan's deadlock detector keeps a stack per acquisition of every held
 * lock (its shadow stacks make that cheap; an unwind per acquisition
 * here would not be); one global hash table probed by every nested
 * acquisition (a shared cache line per acquisition, what the per-thread
 * cache avoids).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "record/lockorder.h"

#define EDGES (1 << 18)
#define INDEX_SLOTS (2 * EDGES)
#define NODES (4 * EDGES)
#define QUEUE (2 * NODES)
#define CYCLES 256
#define GEN_BITS 18
#define SEARCH_BUDGET 16384
#define FOUND_PER_SEARCH 4

#define MODE_HELD_READ 1u /* the held end was held for reading */
#define MODE_ACQ_READ 2u  /* the acquired end was taken for reading */

struct edge {
	/* key, then the rest: written under order_lock, then immutable until
	 * a sweep frees the slot and a new edge takes it; read under
	 * order_lock, and by reports for pinned edges alone (the lock-free
	 * lookups read the index: edge_known()) */
	uint8_t pinned; /* order_lock: an edge of a stored cycle, never freed */
	uintptr_t from, to;
	uint64_t gens; /* gen(from) << 32 | gen(to) */
	uint32_t mode;
	uint8_t held_type, acq_type;
	uint8_t held_readers_wait, acq_readers_wait; /* sp_rwlock_readers_wait() */
	uint8_t n_held_frames, n_acq_frames;
	pid_t tid;
	struct sp_site held_site, acq_site;
	uint32_t next_out; /* order_lock: next edge out of the same node, index + 1 */
};

/* An edge's stacks (frames=N), apart: most runs keep none, and their pages
 * are then never touched. */
struct edge_stacks {
	uintptr_t held[SP_MAX_FRAMES], acq[SP_MAX_FRAMES];
};

/* An edge as gathered before it is added. */
struct new_edge {
	struct edge e;
	struct edge_stacks st;
};

struct node {
	uintptr_t obj; /* 0: free */
	uint32_t gen;
	uint32_t head;    /* first edge out, index + 1 */
	uint32_t mark[2]; /* search id that reached it by a write / read acquisition */
};

struct state {
	uint32_t node, parent, edge; /* the edge that reached the node */
	uint8_t read, depth;         /* reached by a read; edges from the new one */
};

struct cycle {
	uint64_t hash; /* of the site sequence */
	uint32_t n;
	uint32_t edge[SP_ORDER_MAX_CYCLE]; /* canonical rotation */
	uint64_t count;                    /* relaxed: found with these sites */
	uint64_t snap_count;               /* report_lock */
};

/* Mapped once by the set-up (sp_order_init()), then only their contents
 * change. */
static struct {
	uint32_t *gens;
	struct edge *edges;
	struct edge_stacks *stacks; /* by edge index */
	uint64_t *index;            /* an edge's key hash (edge_hash()), or 0 */
	struct node *nodes;         /* order_lock */
	struct state *queue;        /* order_lock */
	struct cycle *cycles;
} tables;
/* Written under order_lock (n_edges and n_cycles published with release,
 * n_live read relaxed by reports). */
static struct {
	uint32_t n_edges;       /* slots ever used */
	uint32_t n_live;
	uint32_t free_head;     /* freed slots, index + 1, through next_out */
	uint32_t n_cycles;
	uint32_t search_id;
	uint64_t forgets_swept; /* counts.forgets at the last sweep */
} graph;
/* Added to by any thread (relaxed): locks forgotten, and what was lost. */
static struct {
	uint64_t forgets;
	uint64_t edges_dropped, cycles_dropped, searches_cut;
} counts;
static sp_lock_t order_lock = SP_LOCK_INIT;

static SP_ALWAYS_INLINE uint32_t *gen_slot(uintptr_t obj)
{
	return &tables.gens[(obj >> 3) & ((1u << GEN_BITS) - 1)];
}

static SP_ALWAYS_INLINE uint32_t gen_of(uintptr_t obj)
{
	return sp_load_relaxed(gen_slot(obj));
}

void sp_order_forget(const void *obj)
{
	/* Relaxed: a thread that uses the lock after its init learns of it
	 * through whatever ordered the init before its use. */
	if (sp_order_is_on()) {
		sp_add_relaxed(gen_slot((uintptr_t)obj), 1);
		sp_add_relaxed(&counts.forgets, 1);
	}
}

/* Of the whole key: what the global index holds for the edge, and where
 * (never 0: an empty slot). */
static uint64_t edge_hash(uintptr_t from, uintptr_t to, uint64_t g, uint32_t mode)
{
	return sp_hash4(from, to, g, mode);
}

/* Of the two locks only: the thread's cache slot (the modes and
 * generations of one pair rarely differ; they are compared, not hashed). */
static SP_ALWAYS_INLINE size_t cache_slot(uintptr_t from, uintptr_t to)
{
	return (size_t)(((from ^ (to * 0x9E3779B97F4A7C15ull)) * 0xC2B2AE3D27D4EB4Full) >> 56) &
	       (SP_ORDER_CACHE - 1);
}

/*
 * Whether an edge whose key hashes to @h is in the graph.  Any thread,
 * lock-free: the index is at most half full, so a probe ends at a free
 * slot, and it reads the index alone - the key's 64-bit hash stands for
 * the key (the design block above).  A slot cleared by a sweep meanwhile does not match:
 * the caller's slow path looks again under order_lock.
 */
static int edge_known(uint64_t h)
{
	for (uint32_t i = (uint32_t)h & (INDEX_SLOTS - 1);; i = (i + 1) & (INDEX_SLOTS - 1)) {
		uint64_t v = sp_load_acquire(&tables.index[i]);

		if (v == h)
			return 1;
		if (!v)
			return 0;
	}
}

/* Write @nx into slot @n (order_lock), unlinked (edge_link_locked()). */
static void edge_write_locked(uint32_t n, const struct new_edge *nx)
{
	struct edge *e = &tables.edges[n];

	*e = nx->e;
	e->pinned = 0;
	e->next_out = 0;
	if (e->n_held_frames || e->n_acq_frames)
		tables.stacks[n] = nx->st;
}

/* ---- nodes and the search (order_lock) ------------------------------------ */

static struct node *node_get_locked(uintptr_t obj, uint32_t gen, int create)
{
	uint64_t h = (obj * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)gen * 0xC2B2AE3D27D4EB4Full);

	for (uint32_t i = (uint32_t)(h >> 20) & (NODES - 1);; i = (i + 1) & (NODES - 1)) {
		struct node *n = &tables.nodes[i];

		if (n->obj == obj && n->gen == gen)
			return n;
		if (!n->obj) {
			if (!create)
				return NULL;
			n->obj = obj;
			n->gen = gen;
			return n;
		}
	}
}


/* Order of edges by what a cycle's identity is made of: sites and modes. */
static int edge_sites_cmp(const struct edge *a, const struct edge *b)
{
	int c;

	if ((c = sp_site_cmp(&a->held_site, &b->held_site)))
		return c;
	if ((c = sp_site_cmp(&a->acq_site, &b->acq_site)))
		return c;
	if (a->held_type != b->held_type)
		return a->held_type < b->held_type ? -1 : 1;
	return a->acq_type - b->acq_type;
}

static uint64_t str_hash(uint64_t h, const char *s)
{
	while (s && *s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h * 31;
}

static uint64_t site_hash(uint64_t h, const struct sp_site *s)
{
	h = str_hash(str_hash(h, s->file), s->func);
	return (h ^ s->pc ^ ((uint64_t)s->line << 40)) * 0x9E3779B97F4A7C15ull;
}

/* Store the cycle @e[0..n) (n edges, each ending where the next starts)
 * once per sequence of sites. */
static void cycle_add_locked(const uint32_t *e, uint32_t n)
{
	uint32_t best = 0, nc = sp_load_relaxed(&graph.n_cycles);
	uint64_t h = n;
	struct cycle *c;

	for (uint32_t r = 1; r < n; r++)
		for (uint32_t k = 0; k < n; k++) {
			int d = edge_sites_cmp(&tables.edges[e[(r + k) % n]], &tables.edges[e[(best + k) % n]]);

			if (d) {
				if (d < 0)
					best = r;
				break;
			}
		}
	for (uint32_t k = 0; k < n; k++) {
		const struct edge *x = &tables.edges[e[(best + k) % n]];

		h = site_hash(site_hash(h, &x->held_site), &x->acq_site) ^
		    ((uint64_t)x->held_type << 8 | x->acq_type);
	}
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t k;

		c = &tables.cycles[i];
		if (c->hash != h || c->n != n)
			continue;
		for (k = 0; k < n; k++)
			if (edge_sites_cmp(&tables.edges[c->edge[k]], &tables.edges[e[(best + k) % n]]))
				break;
		if (k == n) {
			sp_store_relaxed(&c->count, c->count + 1);
			return;
		}
	}
	if (nc == CYCLES) {
		sp_add_relaxed(&counts.cycles_dropped, 1);
		return;
	}
	c = &tables.cycles[nc];
	c->hash = h;
	c->n = n;
	for (uint32_t k = 0; k < n; k++) {
		c->edge[k] = e[(best + k) % n];
		tables.edges[c->edge[k]].pinned = 1; /* the reports read it: never freed */
	}
	sp_store_relaxed(&c->count, 1);
	sp_store_release(&graph.n_cycles, nc + 1);
}

/* The path to state @si, then @closing: the cycle through edge queue[0]. */
static void cycle_found_locked(uint32_t si, uint32_t closing)
{
	uint32_t e[SP_ORDER_MAX_CYCLE], n = tables.queue[si].depth + 1;

	e[n - 1] = closing;
	for (uint32_t k = n - 1; k-- > 0; si = tables.queue[si].parent)
		e[k] = tables.queue[si].edge;
	cycle_add_locked(e, n);
}

/* Can the acquisition that reached a node in mode @read_in wait for the
 * hold of edge @out (its tail), at an rwlock whose readers wait or not? */
static SP_ALWAYS_INLINE int waits(int read_in, const struct edge *out)
{
	return !(read_in && (out->mode & MODE_HELD_READ)) || out->held_readers_wait;
}

/* Cycles through the new edge @x: a search from its head for its tail. */
static void search_locked(uint32_t x)
{
	const struct edge *e0 = &tables.edges[x];
	uint32_t g_from = (uint32_t)(e0->gens >> 32), g_to = (uint32_t)e0->gens;
	uint32_t id, head = 0, tail = 0, found = 0;
	struct node *b = node_get_locked(e0->to, g_to, 0);
	uint8_t rd = !!(e0->mode & MODE_ACQ_READ);

	if (!b)
		return;
	id = ++graph.search_id ? graph.search_id : ++graph.search_id;
	b->mark[rd] = id;
	tables.queue[tail++] = (struct state){ (uint32_t)(b - tables.nodes), 0, x, rd, 1 };
	while (head < tail) {
		uint32_t si = head++;
		struct state s = tables.queue[si];

		if (si == SEARCH_BUDGET) {
			sp_add_relaxed(&counts.searches_cut, 1);
			return;
		}
		for (uint32_t ei = tables.nodes[s.node].head; ei; ei = tables.edges[ei - 1].next_out) {
			const struct edge *e = &tables.edges[ei - 1];
			uint32_t g = (uint32_t)e->gens;
			uint8_t rd_to = !!(e->mode & MODE_ACQ_READ);
			struct node *to;

			if (g != gen_of(e->to) || !waits(s.read, e))
				continue; /* destroyed since; or a read among reads */
			if (e->to == e0->from && g == g_from) {
				if (s.depth < SP_ORDER_MAX_CYCLE && waits(rd_to, e0)) {
					cycle_found_locked(si, ei - 1);
					if (++found == FOUND_PER_SEARCH)
						return;
				}
				continue;
			}
			if (s.depth + 1 >= SP_ORDER_MAX_CYCLE)
				continue;
			to = node_get_locked(e->to, g, 0);
			if (!to || to->mark[rd_to] == id)
				continue;
			if (tail == QUEUE) {
				sp_add_relaxed(&counts.searches_cut, 1);
				return;
			}
			to->mark[rd_to] = id;
			tables.queue[tail++] =
				(struct state){ (uint32_t)(to - tables.nodes), si, ei - 1, rd_to, s.depth + 1 };
		}
	}
}

/* ---- recording an edge ------------------------------------------------------ */

/* The type a held lock was taken as: from the entry of its acquisition in
 * the owner's table (rec_mutex, rwlock_write or spinlock as well as mutex). */
static int held_type(const struct sp_thread *t, const struct sp_held *h, const struct sp_site *s)
{
	static const int ops[] = { SP_TYPE_MUTEX, SP_TYPE_RWLOCK_WRITE, SP_TYPE_SPINLOCK };

	if (!(h->info & SP_HELD_EXCLUSIVE))
		return SP_TYPE_RWLOCK_READ;
	for (unsigned i = 0; i < sizeof(ops) / sizeof(*ops); i++) {
		const struct sp_entry *e = sp_table_find(&t->table, s, h->obj, ops[i]);

		if (e)
			return e->type;
	}
	return SP_TYPE_MUTEX;
}

static void held_site(const struct sp_held *h, struct sp_site *s)
{
	memset(s, 0, sizeof(*s));
	if (h->info & SP_HELD_INSTRUMENTED) {
		s->file = (const char *)h->where;
		s->func = h->func;
		s->line = (uint32_t)h->info;
	} else {
		s->pc = h->where;
	}
}

/* Everything about a new edge, gathered before the order lock is taken
 * (the unwind can take long). */
static void edge_fill(struct new_edge *nx, const struct sp_thread *t, const struct sp_held *h,
		      uintptr_t obj, int op, const struct sp_site *site, uint64_t g, uint32_t mode)
{
	struct edge *x = &nx->e;
	unsigned na = 0, nh = 0;

	memset(nx, 0, sizeof(*nx));
	x->from = h->obj;
	x->to = obj;
	x->gens = g;
	x->mode = mode;
	x->tid = t->tid;
	held_site(h, &x->held_site);
	x->acq_site = *site;
	x->held_type = (uint8_t)held_type(t, h, &x->held_site);
	x->acq_type = (uint8_t)(op == SP_TYPE_MUTEX ? sp_mutex_type((const void *)obj) : op);
	if (x->held_type == SP_TYPE_RWLOCK_READ || x->held_type == SP_TYPE_RWLOCK_WRITE)
		x->held_readers_wait = (uint8_t)sp_rwlock_readers_wait((const void *)x->from);
	if (op == SP_TYPE_RWLOCK_READ || op == SP_TYPE_RWLOCK_WRITE)
		x->acq_readers_wait = (uint8_t)sp_rwlock_readers_wait((const void *)obj);
	if (site->pc && sp_stack_frames) {
		sp_stack_capture_edge(site->pc, x->held_site.pc, sp_stack_frames, nx->st.acq, &na,
				      nx->st.held, &nh);
		x->n_acq_frames = (uint8_t)na;
		x->n_held_frames = (uint8_t)nh;
	}
}

static int edge_alive(const struct edge *e)
{
	return (uint32_t)(e->gens >> 32) == gen_of(e->from) && (uint32_t)e->gens == gen_of(e->to);
}

/* Edge @n (published, alive) into the index and its tail's out-list. */
static void edge_link_locked(uint32_t n, uint64_t h)
{
	struct edge *e = &tables.edges[n];
	struct node *from = node_get_locked(e->from, (uint32_t)(e->gens >> 32), 1);
	uint32_t i;

	node_get_locked(e->to, (uint32_t)e->gens, 1);
	e->next_out = from->head;
	from->head = n + 1;
	for (i = (uint32_t)h & (INDEX_SLOTS - 1); tables.index[i]; i = (i + 1) & (INDEX_SLOTS - 1))
		;
	sp_store_release(&tables.index[i], h);
}

/*
 * The sweep (order_lock): dead edges' slots go to the free list, except
 * stored cycles' (pinned); the index and the nodes are rebuilt from the
 * live edges.  Readers that probe the index meanwhile miss, and look
 * again under order_lock (edge_seen()).
 */
static void sweep_locked(void)
{
	uint32_t n = sp_load_relaxed(&graph.n_edges), live = 0;

	graph.forgets_swept = sp_load_relaxed(&counts.forgets);
	for (uint32_t i = 0; i < INDEX_SLOTS; i++)
		sp_store_relaxed(&tables.index[i], 0);
	/* Zero pages without touching them (order_lock alone reads nodes). */
	if (madvise(tables.nodes, NODES * sizeof(*tables.nodes), MADV_DONTNEED))
		memset(tables.nodes, 0, NODES * sizeof(*tables.nodes));
	graph.free_head = 0;
	for (uint32_t k = n; k-- > 0;) {
		struct edge *e = &tables.edges[k];

		if (edge_alive(e)) {
			edge_link_locked(k, edge_hash(e->from, e->to, e->gens, e->mode));
			live++;
		} else if (!e->pinned) {
			e->next_out = graph.free_head;
			graph.free_head = k + 1;
		}
	}
	sp_store_relaxed(&graph.n_live, live);
}

/* A slot for a new edge (order_lock): a fresh one, a freed one, or one a
 * sweep frees when locks were forgotten since the last; -1: full. */
static int slot_get_locked(void)
{
	uint32_t n = sp_load_relaxed(&graph.n_edges), k;

	if (n < EDGES) {
		sp_store_release(&graph.n_edges, n + 1);
		return (int)n;
	}
	if (!graph.free_head && sp_load_relaxed(&counts.forgets) != graph.forgets_swept)
		sweep_locked();
	if (!graph.free_head)
		return -1;
	k = graph.free_head - 1;
	graph.free_head = tables.edges[k].next_out;
	return (int)k;
}

/* Add @x (order_lock): slot, index, adjacency, publication; then search. */
static void edge_add_locked(const struct new_edge *nx, uint64_t h)
{
	int n;

	if (edge_known(h))
		return; /* another thread added it meanwhile */
	n = slot_get_locked();
	if (n < 0) {
		sp_add_relaxed(&counts.edges_dropped, 1);
		return;
	}
	edge_write_locked((uint32_t)n, nx);
	edge_link_locked((uint32_t)n, h);
	sp_store_relaxed(&graph.n_live, graph.n_live + 1);
	search_locked((uint32_t)n);
}

static SP_NOINLINE void edge_seen(struct sp_thread *t, const struct sp_held *h, uintptr_t obj,
				  int op, const struct sp_site *site, uint64_t g, uint32_t mode,
				  struct sp_order_slot *slot)
{
	uint64_t hash = edge_hash(h->obj, obj, g, mode);
	struct new_edge x;

	slot->dropped = 0;
	if (!edge_known(hash)) {
		uint64_t dropped = sp_load_relaxed(&counts.edges_dropped);

		edge_fill(&x, t, h, obj, op, site, g, mode);
		sp_lock(&order_lock);
		edge_add_locked(&x, hash);
		sp_unlock(&order_lock);
		/* Dropped (full, nothing to sweep): counted once while it
		 * stays in this cache slot. */
		slot->dropped = sp_load_relaxed(&counts.edges_dropped) != dropped;
	}
	slot->from = h->obj;
	slot->to = obj;
	slot->gens = g;
	slot->mode = mode;
}

SP_NOINLINE void sp_order_check__slowpath(struct sp_thread *t, uintptr_t obj, int op,
					  const struct sp_site *site, int retake)
{
	const struct sp_hold_pub *p = sp_hold_my_pub;
	uint32_t n = SP_PUB_N(p->state), g_to, acq = op == SP_TYPE_RWLOCK_READ ? MODE_ACQ_READ : 0;

	if (n > SP_HELD_MAX)
		n = SP_HELD_MAX;
	if (!retake)
		for (uint32_t i = 0; i < n; i++)
			if (p->e[i].obj == obj)
				return; /* taken again by its holder: it cannot wait */
	g_to = gen_of(obj);
	for (uint32_t i = 0; i < n; i++) {
		const struct sp_held *h = &p->e[i];
		uintptr_t from = h->obj;
		uint32_t mode = acq | (h->info & SP_HELD_EXCLUSIVE ? 0 : MODE_HELD_READ);
		uint64_t g;
		struct sp_order_slot *s;

		if (from == obj)
			continue; /* a condition wait's own mutex */
		g = (uint64_t)gen_of(from) << 32 | g_to;
		s = &t->order_cache[cache_slot(from, obj)];
		if (SP_LIKELY(s->from == from && s->to == obj && s->gens == g && s->mode == mode))
			continue; /* known */
		edge_seen(t, h, obj, op, site, g, mode, s);
	}
}

SP_NOINLINE void sp_order_acquired_call(struct sp_thread *t, uintptr_t obj, int op,
					const struct sp_site *site)
{
	sp_order_acquired(t, obj, op, site);
}

/* ---- the read side ----------------------------------------------------------- */

static void end_view(struct sp_order_end_view *v, uintptr_t obj, int type, const struct sp_site *s,
		     const uintptr_t *frames, unsigned n)
{
	v->obj = obj;
	v->type = (uint8_t)type;
	v->site = *s;
	v->frames = frames;
	v->n_frames = (uint8_t)(n > SP_MAX_FRAMES ? SP_MAX_FRAMES : n);
}

void sp_order_foreach_cycle(void (*fn)(const struct sp_cycle_view *c, void *arg), void *arg,
			    struct sp_order_stats *st)
{
	uint32_t nc;

	memset(st, 0, sizeof(*st));
	if (!sp_order_is_on())
		return;
	st->edges_kept = sp_load_relaxed(&graph.n_live);
	st->edges_dropped = sp_load_relaxed(&counts.edges_dropped);
	st->cycles_dropped = sp_load_relaxed(&counts.cycles_dropped);
	st->searches_cut = sp_load_relaxed(&counts.searches_cut);
	nc = sp_load_acquire(&graph.n_cycles);
	for (uint32_t i = 0; i < nc; i++) {
		const struct cycle *c = &tables.cycles[i];
		uint64_t count = sp_load_relaxed(&c->count);
		struct sp_cycle_view v;

		if (count <= c->snap_count)
			continue;
		v.n = c->n;
		v.count = count - c->snap_count;
		for (uint32_t k = 0; k < c->n; k++) {
			const struct edge *e = &tables.edges[c->edge[k]];

			end_view(&v.edges[k].held, e->from, e->held_type, &e->held_site,
				 tables.stacks[c->edge[k]].held, e->n_held_frames);
			end_view(&v.edges[k].acquired, e->to, e->acq_type, &e->acq_site,
				 tables.stacks[c->edge[k]].acq, e->n_acq_frames);
			v.edges[k].tid = e->tid;
		}
		fn(&v, arg);
	}
}

void sp_order_snapshot(void)
{
	uint32_t nc;

	if (!sp_order_is_on())
		return;
	nc = sp_load_acquire(&graph.n_cycles);
	for (uint32_t i = 0; i < nc; i++)
		tables.cycles[i].snap_count = sp_load_relaxed(&tables.cycles[i].count);
}

/* ---- start-up and fork -------------------------------------------------------- */

void sp_order_fork_prepare(void)
{
	if (sp_order_is_on())
		sp_lock(&order_lock);
}

void sp_order_fork_parent(void)
{
	if (sp_order_is_on())
		sp_unlock(&order_lock);
}

void sp_order_fork_child(void)
{
	if (sp_order_is_on())
		sp_unlock(&order_lock);
}

int sp_order_init(void)
{
	if (sp_order_is_on())
		return 0;
	if (!sp_hold_is_on())
		return -EINVAL; /* the held lists are hold tracking's */
	tables.gens = sp_mmap(sizeof(*tables.gens) << GEN_BITS);
	tables.edges = sp_mmap(EDGES * sizeof(*tables.edges));
	tables.stacks = sp_mmap(EDGES * sizeof(*tables.stacks));
	tables.index = sp_mmap(INDEX_SLOTS * sizeof(*tables.index));
	tables.nodes = sp_mmap(NODES * sizeof(*tables.nodes));
	tables.queue = sp_mmap(QUEUE * sizeof(*tables.queue));
	tables.cycles = sp_mmap(CYCLES * sizeof(*tables.cycles));
	if (!tables.gens || !tables.edges || !tables.stacks || !tables.index || !tables.nodes || !tables.queue || !tables.cycles)
		return -ENOMEM;
	sp_store_release(&sp_order_ready, 1);
	/* Takes the preload's calls off the hold-only fast path (flags.h). */
	sp_unlock_hooks_set(SP_UNLOCK_HOOK_ORDER, 1);
	return 0;
}
