/*
 * trace_model.h - a trace read back as per-thread timelines of lock steps
 * (trace_model.c), and the two analyses over it: the what-if replay
 * (whatif.c) and wait chains with the who-made-whom-wait matrix
 * (chains.c).  Private to src/read and tools/syncprof.
 *
 * Glossary: a *step* is a point of a thread's timeline where it meets a
 * lock: an acquisition (ACQ: asked for at @req, granted at @t), a release
 * (REL, at @t) or a wait the model keeps as measured (BLOCK: a semaphore,
 * barrier, join or condition wait, from @req to @t).  Between two steps a
 * thread *works* (runs its own code).  A lock's *hand-off order* is the
 * order in which its acquisitions were granted in the measured run.
 */
#ifndef SP_READ_TRACE_MODEL_H
#define SP_READ_TRACE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/containers.h"
#include "read/trace_reader.h"

enum sp_tm_kind { SP_TM_ACQ = 1, SP_TM_REL, SP_TM_BLOCK };

/* Times (since the trace's start) and waits beyond 2^46 ns (19.5 hours)
 * are taken for corruption, so that the analyses' sums cannot overflow. */
#define SP_TM_MAX_NS (INT64_C(1) << 46)

/* a + b for b >= 0, saturated far below overflow (the analyses' sums). */
static inline int64_t sp_tm_add(int64_t a, int64_t b)
{
	const int64_t cap = INT64_C(1) << 61;

	return a > cap - b ? cap : a + b;
}

struct sp_tm_step {
	int64_t t;     /* ns since the trace's start: granted / released / woken */
	int64_t req;   /* ACQ: asked for (the WAIT event, else @t); BLOCK: wait began */
	uint32_t lock; /* ACQ, REL: index into model->locks */
	uint32_t site; /* ACQ, BLOCK: index into model->sites */
	uint32_t seq;  /* ACQ: position in the lock's hand-off order */
	uint32_t pair; /* REL: index (in this thread) of the ACQ it ends;
			* BLOCK of a join: the thread joined (index), else UINT32_MAX */
	uint8_t kind;  /* enum sp_tm_kind */
	uint8_t shared; /* ACQ: a read lock (shares with other readers) */
	uint8_t waited; /* ACQ: the measured acquisition waited (wait_ns > 0) */
	uint8_t join;   /* BLOCK: pthread_join / thrd_join */
};

struct sp_tm_thread {
	uint32_t tid;
	const char *name; /* from the reader; "" when unnamed */
	struct sp_tm_step *steps;
	size_t n_steps, cap_steps;
	int64_t first_ns, last_ns; /* its first and last event */
	/* building only: locks held now (index, depth, ACQ step), the lock
	 * whose WAIT came last and when, locks met so far */
	struct sp_tm_open { uint32_t lock, depth, step; } *open;
	size_t n_open, cap_open;
	uint32_t wait_lock, wait_site;
	int64_t wait_ns_at;
	int waiting, cond_pending;
	int64_t cond_at;
	uint32_t cond_site;
};

/* A call site as the trace names it: (site, func, line) arguments. */
struct sp_tm_site {
	uint64_t site, func, line;
	char *name;     /* "function file:line", "file:line", "dso+0x..": sp_tm_name_sites */
	char *function; /* NULL when unknown */
	char *file;     /* NULL when unknown */
	char *dso;      /* interposed: the file mapped there, NULL when unknown */
	uint64_t offset; /* from function (or dso) start */
	unsigned fline;
};

struct sp_tm_lock {
	uint64_t obj;
	const char *name;  /* its LOCK_NAME (the file's bytes), or NULL */
	int type;          /* enum sp_type of its first acquisition */
	uint32_t site;     /* the site of its first acquisition */
	uint64_t acquisitions;
	/* the hand-off order: (thread index, step index), by grant time */
	struct sp_tm_ref { int64_t t; uint32_t thread, step; } *order;
	size_t n_order, cap_order;
};

/* A wait or a hold as an interval (chains.c); held types only. */
struct sp_tm_span {
	int64_t start, end;
	uint32_t thread, lock, site;
};

struct sp_trace_model {
	struct sp_tm_thread *threads;
	size_t n_threads, cap_threads;
	struct sp_tm_lock *locks;
	size_t n_locks, cap_locks;
	struct sp_tm_site *sites;
	size_t n_sites, cap_sites;
	struct sp_tm_span *waits, *holds;
	size_t n_waits, cap_waits, n_holds, cap_holds;
	struct sp_u64map lock_index, site_index, thread_index, pcsite_index;
	/* PCSITE records: the writer's name for a code address (dladdr), for
	 * when the mapped file cannot be read back */
	struct sp_tm_pcsite { uint64_t pc, offset; char *function; } *pcsites;
	size_t n_pcsites, cap_pcsites;
	int64_t first_ns, last_ns; /* the span of all events */
	uint64_t events, lock_events;
	uint64_t dropped, drop_records; /* DROPPED records: events lost */
	uint64_t write_lost;            /* WRITE_LOSS count, or 1 when unknown */
	/* Signs of a trace that holds contended acquisitions only: a release
	 * with no acquisition before it (not the thread's first event on that
	 * lock), or a lock acquired twice by one thread with no release. */
	uint64_t missing_acquires, missing_releases;
	/* A LOCK_MODE record said "contended only" (docs/trace-format.md): an
	 * acquisition whose release nobody waited for has no release in the
	 * file, so an open hold has no known end. */
	int contended_only;
	uint64_t cond_waits, blocks;
	uint64_t out_of_range; /* lock events left out: a time or wait beyond SP_TM_MAX_NS */
	int read_status;  /* the reader's enum sp_trace_read_status at the end */
	char error[320];  /* why building failed (-errno returned) */
};

/* "trace_model.c" */
/* Read every record of @r (freshly initialised) into @m.  Returns 0, or
 * -ENOMEM.  A truncated or corrupt file is not an error here: @m holds
 * what came before, m->read_status and r->error say why reading stopped. */
int sp_trace_model_build(struct sp_trace_model *m, struct sp_trace_reader *r);
void sp_trace_model_free(struct sp_trace_model *m);
/* Name every site (symbolizing code addresses offline from the trace's
 * MAPS records with report/symbolize.c), absolute source paths shortened
 * by their common directory as reports do.  -ENOMEM or 0. */
int sp_tm_name_sites(struct sp_trace_model *m, const struct sp_trace_reader *r);
/* Does site @s match @want: a function name, "file:line" (the file
 * compared by its trailing path components), or the name as printed? */
int sp_tm_site_matches(const struct sp_tm_site *s, const char *want);
/* Find or add in a u64 -> u32 index (base/containers.h): the value under
 * @key that @eq accepts (NULL: any); not there: @next_val is stored and
 * *@added set.  UINT32_MAX: no memory. */
uint32_t sp_tm_index_get(struct sp_u64map *ix, uint64_t key,
			 int (*eq)(const void *ctx, uint64_t val), const void *ctx,
			 uint32_t next_val, int *added);
/* Is @type held (mutexes, rwlocks, spinlocks) rather than waited for? */
int sp_tm_type_held(int type);

/* "whatif.c" */
/* Bootstrap replicates of the interval by default, and its level. */
#define SP_WHATIF_SAMPLES 40
#define SP_WHATIF_SEED UINT64_C(0x5eed5eed0c0ffee1)

struct sp_whatif_lock {
	uint64_t acquisitions;
	uint64_t contended_measured, contended_predicted;
	int64_t wait_measured, wait_replayed, wait_predicted; /* ns */
	int64_t wait_low, wait_high; /* the interval of wait_predicted (== it: no samples) */
	int64_t crit_handoff_ns;     /* hand-off latency on the predicted critical path */
	uint64_t crit_handoffs;      /* its hand-offs on that path */
};

struct sp_whatif_thread {
	int64_t end_measured, end_predicted; /* ns since the trace's start */
	int64_t wait_measured, wait_predicted; /* on held locks */
	int64_t scaled_holds;                /* holds at the site */
	int64_t scaled_ns_measured;          /* their measured length */
	int64_t critical_ns;                 /* time on the predicted critical path */
	/* of critical_ns: in the scaled holds, waiting for locks (hand-off
	 * latency, lock calls), in waits kept as measured */
	int64_t crit_scaled_ns, crit_lock_ns, crit_kept_ns;
};

/*
 * A critical path, walked back from the thread that ends a replay: its
 * parts add up to total_ns, the replay's wall time.
 */
struct sp_whatif_path {
	int64_t total_ns;
	int64_t scaled_ns; /* work inside the scaled holds: the part that moves with F */
	int64_t work_ns;   /* other work, kept as measured */
	int64_t lock_ns;   /* waiting for locks: hand-off latency after a release, lock calls */
	int64_t kept_ns;   /* condition, semaphore and barrier waits, joins' delays: as measured */
	int64_t start_ns;  /* the trace's start to its first thread's first event */
	uint64_t handoffs; /* moves from a waiter to the thread whose release let it go */
	uint64_t joins;    /* moves from a join to the thread joined */
	uint32_t threads;  /* threads on it */
};

struct sp_whatif {
	double factor;
	const char *site;           /* as asked */
	uint64_t n_sites;           /* sites that matched */
	uint64_t scaled_holds;
	int64_t measured_wall_ns;   /* the span of the trace's events */
	int64_t replay_wall_ns;     /* the replay at factor 1: the model's own error */
	int64_t predicted_wall_ns;
	/* The interval of predicted_wall_ns: the 5th and 95th percentiles of
	 * @samples replicates, each a pair of replays (factor 1 and F) with
	 * every hand-off latency drawn again from the measured ones and a
	 * draw of @blocks blocks of the run (the ratio at F to factor 1 of
	 * the point's replays over the blocks drawn; 0: a trace too short to
	 * cut), seed SP_WHATIF_SEED, widened to hold the point; both equal
	 * it when samples is 0. */
	int64_t predicted_low_ns, predicted_high_ns;
	unsigned samples;
	unsigned blocks;
	int lock_intervals;         /* locks' wait_low/high are intervals (not too many locks) */
	uint64_t inconsistent;      /* grants before the previous release in the file */
	int64_t handoff_median_ns;  /* measured, over all locks */
	uint64_t handoffs_measured; /* acquisitions that waited: the latencies drawn from */
	struct sp_whatif_lock *locks;   /* m->n_locks */
	struct sp_whatif_thread *threads; /* m->n_threads */
	uint32_t last_thread;       /* thread that ends the predicted run */
	uint8_t *scaled_site;       /* m->n_sites: a hold began there and was scaled */
	/* What bounds the prediction: the critical paths of the replay at
	 * factor 1 and at F; crit_site_ns (m->n_sites): waits kept as
	 * measured on the predicted path, by the site that waited. */
	struct sp_whatif_path path_replayed, path_predicted;
	int64_t *crit_site_ns;
	char error[320];
};

/* Replay @m with every hold that began at a site matching @site scaled by
 * @factor, then @samples times more with the hand-off latencies drawn
 * again, each with a draw of the run's blocks (0: no interval).  Returns 0; -ENOENT (no acquisition at @site),
 * -EDEADLK (the replay could not go on: the file's order is
 * inconsistent), -ENOMEM; w->error says why.  sp_whatif_free() in every
 * case. */
int sp_whatif_run(const struct sp_trace_model *m, const char *site, double factor,
		  unsigned samples, struct sp_whatif *w);
void sp_whatif_free(struct sp_whatif *w);

/* "chains.c" */
#define SP_CHAIN_MAX 8

/* One link: @waiter waited at @site for @lock held by @holder (held since
 * a hold that began at @hold_site). */
struct sp_chain_link {
	uint32_t waiter, lock, site, holder, hold_site;
};

struct sp_chain {
	unsigned n; /* links, >= 2: the holder of link i is the waiter of i + 1 */
	struct sp_chain_link link[SP_CHAIN_MAX];
	int cycle;  /* the last holder is a waiter of the chain: a deadlock */
	uint64_t count;  /* waits in which it occurred */
	int64_t ns;      /* time during which the whole chain stood */
};

/* Who made whom wait on one lock. */
struct sp_blame_cell {
	uint32_t lock, waiter, holder; /* holder UINT32_MAX: nobody held it (hand-off) */
	uint64_t count;
	int64_t ns;
};

struct sp_chains {
	struct sp_chain *chains; /* by ns, largest first */
	size_t n_chains, cap_chains;
	struct sp_blame_cell *cells; /* by lock, then ns, largest first */
	size_t n_cells, cap_cells;
	int64_t *lock_wait;      /* m->n_locks: total wait per lock */
	uint64_t waits;          /* waits on held locks seen */
	uint64_t hold_spans;     /* holds known (from acquisitions or hold_ns) */
};

/* Compute chains and the blame matrix of @m.  0 or -ENOMEM. */
int sp_chains_run(const struct sp_trace_model *m, struct sp_chains *c);
void sp_chains_free(struct sp_chains *c);

#endif /* SP_READ_TRACE_MODEL_H */
