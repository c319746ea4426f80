/*
 * holdstate.c - what the holder of a long hold was doing: running,
 * preempted, blocked in a named system call, waiting for another profiled
 * lock, or something else (issue 24).
 *
 * Design.  The hold ticker (hold.c) already wakes every 500 us while
 * anything is held, and every published hold carries the tick it began
 * at.  Each tick (sp_holdstate_tick()) the ticker walks the published
 * lists; a thread that holds a lock acquired at least
 * sp_holdstate_long_ticks ticks ago (hold_states=MS, 1 ms by default) is
 * sampled every ms, and once its oldest long hold is 16 ms old every
 * sixteenth of its age, up to 20 ms apart (sample_spacing(): a lock held
 * for seconds costs 50 samples a second, not 1,000), from the ticker's
 * thread, never from a lock path:
 *   - its CPU time (its CPU clock) and its run-queue time
 *     (/proc/self/task/TID/schedstat): since the previous sample, these
 *     are the running and preempted parts of the interval, measured by
 *     the kernel, not sampled;
 *   - what is left of the interval is blocked time, classed by what the
 *     thread is doing at the sample: in a contended wait for another
 *     profiled lock (the `waiting` word its own slow path publishes),
 *     else in a system call (/proc/self/task/TID/syscall: its number),
 *     else "other" (blocked outside a system call: a page fault; or the
 *     files could not be read).  A thread found running after a blocked
 *     interval gives it the class of the previous sample.
 * The interval before the first sample of a stretch of long holds (from
 * the oldest long hold's start) has no earlier CPU figures: it is classed
 * whole by the first sample's state (running when the thread runs).  The
 * tail after the last sample, up to one sample's spacing, is not seen.
 * Each long hold the thread holds gets the interval's parts (a hold that
 * turned long since the previous sample: its own age, in the same
 * proportions), in a table keyed like blame: (object, type, where the
 * lock was taken); reports add them to the hold's row (collect.c).
 *
 * Invariants: only the ticker writes the table and the pubs' hs_ fields
 * (single writer: relaxed stores; readers load each figure whole); the
 * published lists are read as hold.c's readers read them (the state's
 * sequence before and after, a torn copy retried at the next sample);
 * nothing here runs on a lock path or in a thread of the program.
 *
 * Cost: three /proc reads or clock calls per sample (schedstat, syscall,
 * the CPU clock), only while a long hold lasts; counted in
 * sp_holdstate_cost() (the ticker's own CPU clock around each sample).
 * The two files of the threads sampled lately stay open (kept_read()
 * below): a pread() of an open one costs a fifth of an open, a read and
 * a close.
 *
 * Alternatives considered: sampling from the lock path (the holder
 * stamping its state) costs every acquisition; a signal to the holder
 * would tell where it is but not, cheaply, whether it was preempted;
 * /proc/TID/stat's state letter says R for running and preempted alike,
 * which schedstat's run-queue delay tells apart; /proc/TID/wchan names a
 * kernel function, not the system call a user made.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/syscall_names.h"
#include "record/hold.h"
#include "record/holdwhere.h"
#include "record/record.h"
#include "trace/format.h"

/* A thread that holds a lock long is sampled every SAMPLE_NS at first,
 * then every 1/16 of its oldest long hold's age (2^SAMPLE_AGE_SHIFT), at
 * most SAMPLE_MAX_NS apart; a sample is due SAMPLE_SLACK_NS early rather
 * than a 500 us tick late. */
#define SAMPLE_NS 1000000ull
#define SAMPLE_AGE_SHIFT 4
#define SAMPLE_MAX_NS 20000000ull
#define SAMPLE_SLACK_NS 250000ull
#define HS_SLOTS 4096
#define HS_PROBES 32

unsigned sp_holdstate_long_ticks = 2;
unsigned sp_holdstate_where = 1;

struct hs_rec {
	uint64_t hash; /* 0: free (the ticker alone claims) */
	int ready;     /* key written (release) */
	uint8_t type;
	uintptr_t obj;
	struct sp_site holder;
	uint64_t ns[SP_HS_FIXED], snap[SP_HS_FIXED];
	long sys_nr[SP_HS_SYSCALLS]; /* -1: free slot */
	uint64_t sys_ns[SP_HS_SYSCALLS], sys_snap[SP_HS_SYSCALLS];
};

/* Written by the ticker: the records of hold states (published once,
 * release), its samples and their CPU time, and the /proc reads that
 * failed (the last errno). */
static struct {
	struct hs_rec *table;
	uint64_t samples, sample_cpu_ns, unread;
	int unread_errno;
} states;


static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t self_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t site_hash(const struct sp_site *s)
{
	return ((uint64_t)(uintptr_t)s->file + s->pc + ((uint64_t)s->line << 7)) *
	       0xC2B2AE3D27D4EB4Full;
}

static struct hs_rec *rec_get(uintptr_t obj, uint8_t type, const struct sp_site *holder)
{
	uint64_t h = (site_hash(holder) ^ (obj * 0x9E3779B97F4A7C15ull) ^ type) | 1;

	if (!states.table) {
		struct hs_rec *t = sp_mmap(HS_SLOTS * sizeof(*t));

		if (!t)
			return NULL;
		sp_store_release(&states.table, t);
	}
	for (unsigned i = 0; i < HS_PROBES; i++) {
		struct hs_rec *r = &states.table[(h + i) & (HS_SLOTS - 1)];

		if (!r->hash) {
			r->hash = h;
			r->type = type;
			r->obj = obj;
			r->holder = *holder;
			for (int k = 0; k < SP_HS_SYSCALLS; k++)
				r->sys_nr[k] = -1;
			sp_store_release(&r->ready, 1);
			return r;
		}
		if (r->hash == h && r->obj == obj && r->type == type &&
		    r->holder.pc == holder->pc && r->holder.file == holder->file &&
		    r->holder.line == holder->line && r->holder.func == holder->func)
			return r;
	}
	return NULL;
}

/* The slot of @class in @r: its ns counter, or NULL (a call not kept). */
static uint64_t *rec_slot(struct hs_rec *r, int class)
{
	if (class < SP_HS_FIXED)
		return &r->ns[class];
	for (int k = 0; k < SP_HS_SYSCALLS; k++)
		if (r->sys_nr[k] == class - SP_HS_FIXED)
			return &r->sys_ns[k];
	return &r->ns[SP_HS_OTHER];
}

/* Move up to @ns from @from to preempted (a correction, see sample()). */
static void rec_to_preempted(struct hs_rec *r, int from, uint64_t ns)
{
	uint64_t *f = rec_slot(r, from);

	if (ns > *f)
		ns = *f;
	sp_store_relaxed(f, *f - ns);
	sp_store_relaxed(&r->ns[SP_HS_PREEMPTED], r->ns[SP_HS_PREEMPTED] + ns);
}

static void rec_add(struct hs_rec *r, int class, uint64_t ns)
{
	if (!ns)
		return;
	if (class >= SP_HS_FIXED) {
		long nr = class - SP_HS_FIXED;

		for (int k = 0; k < SP_HS_SYSCALLS; k++) {
			if (r->sys_nr[k] == -1)
				sp_store_relaxed(&r->sys_nr[k], nr);
			if (r->sys_nr[k] == nr) {
				sp_store_relaxed(&r->sys_ns[k], r->sys_ns[k] + ns);
				return;
			}
		}
		class = SP_HS_OTHER; /* more distinct calls than slots */
	}
	sp_store_relaxed(&r->ns[class], r->ns[class] + ns);
}

/* ---- the sampled threads' files, kept open ---------------------------------- */

/*
 * A sample reads two files of its thread, schedstat and syscall.  Opened,
 * read and closed each time, they cost 5.4 and 6.0 us here; a pread() of
 * the file kept open, 0.9 and 1.5 us (the path walk and the open file's
 * set-up are the rest).  So the ticker keeps the files of the last
 * KEPT_THREADS threads it sampled open, as kept descriptors (base.h,
 * sp_kept_fd: at 100 and up, close-on-exec, checked to be still the file
 * they were opened as before each read - a number the program took over
 * is neither read nor closed; where 100 is beyond the limit on open
 * files, nothing is kept):
 *   - a thread that exited fails the read (ESRCH): its file is closed and
 *     opened again by path, which a new thread of the same tid answers;
 *   - a thread's files are closed when it was not sampled for
 *     KEPT_IDLE_NS, and, in a child of fork(), at once (they are the
 *     parent's threads').
 * Ticker only (and the fork child's one thread): no lock.
 */
#define KEPT_THREADS 8
#define KEPT_IDLE_NS 1000000000ull
enum { KEPT_SCHEDSTAT, KEPT_SYSCALL, KEPT_FILES };
static const char *const kept_leaf[KEPT_FILES] = { "schedstat", "syscall" };

static struct kept {
	pid_t tid; /* 0: free */
	struct sp_kept_fd file[KEPT_FILES];
	uint64_t used_ns;
} kept[KEPT_THREADS];
static unsigned kept_n; /* entries in use */

static void kept_free(struct kept *k)
{
	if (!k->tid)
		return;
	for (int f = 0; f < KEPT_FILES; f++)
		sp_kept_fd_close(&k->file[f]);
	kept_n--;
	k->tid = 0;
}

/* @tid's entry, taken (from a free one or the least recently used) when
 * it has none. */
static struct kept *kept_get(pid_t tid)
{
	struct kept *lru = &kept[0];

	for (int i = 0; i < KEPT_THREADS; i++) {
		if (kept[i].tid == tid)
			return &kept[i];
		if (!kept[i].tid || (lru->tid && kept[i].used_ns < lru->used_ns))
			lru = &kept[i];
	}
	kept_free(lru);
	lru->tid = tid;
	for (int f = 0; f < KEPT_FILES; f++)
		lru->file[f].fd = -1;
	kept_n++;
	return lru;
}

static void kept_open(struct kept *k, int f)
{
	char path[SP_TASK_PATH_MAX];
	int fd;

	sp_task_path(path, k->tid, kept_leaf[f]);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	sp_kept_fd_take(&k->file[f], fd);
	close(fd);
}

/* File @f of thread @tid, as sp_task_file() reads it: its first @size - 1
 * bytes, NUL-terminated; the length or -errno. */
static ssize_t kept_read(pid_t tid, int f, char *buf, size_t size)
{
	struct kept *k = kept_get(tid);
	struct sp_kept_fd *file = &k->file[f];

	k->used_ns = mono_ns();
	for (int attempt = 0; attempt < 2; attempt++) {
		ssize_t n;

		if (!sp_kept_fd_ours(file)) {
			file->fd = -1; /* not open, or the program's now */
			if (attempt)
				break;
			kept_open(k, f);
			continue;
		}
		do
			n = pread(file->fd, buf, size - 1, 0);
		while (n < 0 && errno == EINTR);
		if (n >= 0) {
			buf[n] = 0;
			return n;
		}
		sp_kept_fd_close(file); /* the thread exited: the path is asked again */
		if (attempt)
			break;
		kept_open(k, f);
	}
	return sp_task_file(tid, kept_leaf[f], buf, size);
}

/* The files of threads not sampled lately, closed (each tick). */
static void kept_idle(void)
{
	uint64_t now;

	if (!kept_n)
		return;
	now = mono_ns();
	for (int i = 0; i < KEPT_THREADS; i++)
		if (kept[i].tid && now - kept[i].used_ns > KEPT_IDLE_NS)
			kept_free(&kept[i]);
}

void sp_holdstate_fork_child(void)
{
	for (int i = 0; i < KEPT_THREADS; i++)
		kept_free(&kept[i]);
}

/* What thread @tid is blocked in now: a class, or -1 when it runs. */
static int blocked_class(pid_t tid, const struct sp_hold_pub *p, char *buf, size_t size,
			 const char **line)
{
	long nr = 0;
	const char *s = buf;
	int neg = 0;

	*line = NULL;
	if (sp_load_relaxed(&p->waiting))
		return SP_HS_LOCK;
	if (kept_read(tid, KEPT_SYSCALL, buf, size) <= 0)
		return SP_HS_OTHER;
	*line = buf;
	if (!strncmp(buf, "running", 7))
		return -1;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if (*s < '0' || *s > '9')
		return SP_HS_OTHER;
	while (*s >= '0' && *s <= '9')
		nr = nr * 10 + (*s++ - '0');
	/* "-1 sp pc": blocked outside a system call (a page fault...). */
	return neg ? SP_HS_OTHER : CLASS_SYSCALL(nr);
}

/* The copy of one thread's long holds: key fields and their ticks. */
struct long_hold {
	uintptr_t obj;
	uint8_t type;
	struct sp_site site;
	uint64_t tick;
};

/* @p's holds begun at least sp_holdstate_long_ticks before tick @k, into
 * @out; -1 when the list changed during the copy. */
static int long_holds(struct sp_hold_pub *p, uint64_t k, struct long_hold *out)
{
	uint64_t q = sp_load_acquire(&p->state);
	uint32_t n = SP_PUB_N(q);
	int m = 0;

	if ((q >> 32) & 1)
		return -1;
	if (n > SP_HELD_MAX)
		n = SP_HELD_MAX;
	for (uint32_t i = 0; i < n; i++) {
		const struct sp_held *h = &p->e[i];
		uint64_t tick = sp_load_relaxed(&h->tick), info;

		if (!tick || k < tick || k - tick < sp_holdstate_long_ticks)
			continue;
		info = sp_load_acquire(&h->info);
		/* A mutex in a condition wait is not held meanwhile (hold.c
		 * clears its exclusive flag): its holder waits for an event. */
		if (!(info & SP_HELD_EXCLUSIVE) &&
		    (uint8_t)(info >> SP_HELD_OP_SHIFT) != SP_TYPE_RWLOCK_READ)
			continue;
		out[m].obj = sp_load_acquire(&h->obj);
		out[m].type = (uint8_t)(info >> SP_HELD_OP_SHIFT);
		out[m].tick = tick;
		memset(&out[m].site, 0, sizeof(out[m].site));
		if (info & SP_HELD_INSTRUMENTED) {
			out[m].site.file = (const char *)sp_load_acquire(&h->where);
			out[m].site.func = sp_load_acquire(&h->func);
			out[m].site.line = (uint32_t)info;
		} else {
			out[m].site.pc = sp_load_acquire(&h->where);
		}
		m++;
	}
	return sp_load_acquire(&p->state) == q ? m : -1;
}

/*
 * With a trace open (and hold tracking): the interval as a hold_state event
 * (trace/format.h), written by the ticker into its own ring, the holder
 * named by its tid and its oldest long hold's lock.  Readers draw its
 * parts inside the holder's hold: the kernel gives their sums, not their
 * order, so they are drawn running, preempted, then blocked.
 */
static void trace_interval(pid_t tid, const struct long_hold *lh, int n, uint64_t run,
			   uint64_t pre, uint64_t blocked, int class)
{
	uint64_t a[6];
	int oldest = 0;

	for (int i = 1; i < n; i++)
		if (lh[i].tick < lh[oldest].tick)
			oldest = i;
	a[SP_HA_TID] = (uint64_t)tid;
	a[SP_HA_OBJ] = (uint64_t)lh[oldest].obj;
	a[SP_HA_RUNNING] = run;
	a[SP_HA_PREEMPTED] = pre;
	a[SP_HA_BLOCKED] = blocked;
	a[SP_HA_IN] = !blocked		    ? 0
		      : class == SP_HS_LOCK   ? SP_HA_IN_LOCK
		      : class >= SP_HS_FIXED ? SP_HA_IN_SYSCALL + (uint64_t)(class - SP_HS_FIXED)
					       : SP_HA_IN_OTHER;
	syncprof_trace_emit(SP_EV_HOLD_STATE, 6, a);
}

/* The run-queue delay (ns) in @tid's schedstat, the second of its three
 * figures; 0 when it cannot be read. */
static int schedstat_delay(pid_t tid, uint64_t *delay)
{
	char buf[256];
	const char *s = buf;
	uint64_t v = 0;

	if (kept_read(tid, KEPT_SCHEDSTAT, buf, sizeof(buf)) <= 0)
		return 0;
	while (*s >= '0' && *s <= '9')
		s++;
	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return 0;
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (uint64_t)(*s++ - '0');
	*delay = v;
	return 1;
}

/* One sample's interval: its length and how it splits, and the part of
 * the last interval's blocked time found to be preempted after all. */
struct interval {
	uint64_t dt, run, pre, blocked;
	uint64_t fix;  /* moved from @fix_class to preempted */
	int fix_class;
};

/*
 * The interval since @p's last sample, from the thread's CPU time @cpu and
 * run-queue delay @delay now (0: unread) and its state @class now (< 0:
 * runnable); @oldest, the age of its oldest long hold, bounds a first
 * interval.  Keeps @p's figures between samples (the credit and suspect
 * corrections below).
 */
static struct interval split_interval(struct sp_hold_pub *p, pid_t tid, int class, uint64_t cpu,
				      uint64_t delay, uint64_t oldest, uint64_t now)
{
	struct interval iv = { .fix_class = -1 };
	uint64_t dcpu, ddelay;

	if (!p->hs_last_ns || p->hs_tid != tid || !cpu || !p->hs_cpu_ns) {
		/* No earlier figures: the stretch so far (or since the last
		 * sample, which had none), whole, by its state now. */
		iv.dt = p->hs_last_ns && p->hs_tid == tid && now > p->hs_last_ns
				? now - p->hs_last_ns
				: oldest;
		iv.run = class < 0 ? iv.dt : 0;
		iv.blocked = class < 0 ? 0 : iv.dt;
		p->hs_class = -1;
		p->hs_credit_ns = 0;
		p->hs_suspect_ns = 0;
		return iv;
	}
	dcpu = cpu > p->hs_cpu_ns ? cpu - p->hs_cpu_ns : 0;
	ddelay = delay > p->hs_delay_ns ? delay - p->hs_delay_ns : 0;
	iv.dt = now > p->hs_last_ns ? now - p->hs_last_ns : 0;
	/* Run-queue time counted ahead (below) is not counted again. */
	if (p->hs_credit_ns) {
		uint64_t c = ddelay < p->hs_credit_ns ? ddelay : p->hs_credit_ns;

		ddelay -= c;
		p->hs_credit_ns -= c;
	}
	/* More run-queue time than the interval leaves: the delay of a
	 * thread that was queued at the last sample, which that sample gave
	 * to what the thread had blocked in before (below, "suspect"): moved
	 * to preempted now. */
	if (dcpu + ddelay > iv.dt && p->hs_suspect_ns) {
		uint64_t excess = dcpu + ddelay - iv.dt;

		iv.fix = excess < p->hs_suspect_ns ? excess : p->hs_suspect_ns;
		if (iv.fix > ddelay)
			iv.fix = ddelay;
		iv.fix_class = p->hs_suspect_class;
		ddelay -= iv.fix;
	}
	p->hs_suspect_ns = 0;
	if (dcpu + ddelay > iv.dt) { /* the clocks' own skew */
		uint64_t sum = dcpu + ddelay;

		dcpu = (uint64_t)((unsigned __int128)iv.dt * dcpu / sum);
		ddelay = iv.dt - dcpu;
	}
	iv.run = dcpu;
	iv.pre = ddelay;
	iv.blocked = iv.dt - dcpu - ddelay;
	if (class < 0 && iv.blocked && p->hs_class < 0) {
		/* Runnable now and at the last sample, yet neither running nor
		 * queued for part of the interval as far as schedstat says: a
		 * thread waiting on a run queue has its delay added only when
		 * it gets a CPU.  That part is preempted time, counted now and
		 * taken off the delay the kernel adds later. */
		iv.pre += iv.blocked;
		p->hs_credit_ns += iv.blocked;
		iv.blocked = 0;
	}
	/* Runnable now, blocked at the last sample: it blocked there until it
	 * woke (class below) - or it woke earlier and waits on a run queue
	 * since, which schedstat says only when it runs: suspect, corrected by
	 * the next sample.  Runnable at both and never blocked between:
	 * whatever it last blocked in is over. */
	if (class < 0 && iv.blocked && p->hs_class >= 0) {
		p->hs_suspect_ns = iv.blocked;
		p->hs_suspect_class = p->hs_class;
	}
	if (class < 0 && !iv.blocked)
		p->hs_class = -1;
	return iv;
}

/* The interval @iv, in state @class, shared among the @n long holds @lh:
 * each its part (its own age when that is shorter), into its record; the
 * records and parts into @wh_rec and @wh_ns for "where".  Returns how many. */
static int spread(const struct long_hold *lh, int n, const struct interval *iv, int class,
		  uint32_t *wh_rec, uint64_t *wh_ns)
{
	int wh_n = 0;

	for (int i = 0; i < n && iv->dt; i++) {
		struct hs_rec *r = rec_get(lh[i].obj, lh[i].type, &lh[i].site);
		uint64_t age = sp_hold_tick_age_ns(lh[i].tick), share = iv->dt, dt = iv->dt;

		if (!r)
			continue;
		/* Long since less than the interval: its own age, in proportion. */
		if (age && age < dt)
			share = age;
		if (iv->fix)
			rec_to_preempted(r, iv->fix_class,
					 (uint64_t)((unsigned __int128)iv->fix * share / dt));
		rec_add(r, SP_HS_RUNNING, (uint64_t)((unsigned __int128)iv->run * share / dt));
		rec_add(r, SP_HS_PREEMPTED, (uint64_t)((unsigned __int128)iv->pre * share / dt));
		rec_add(r, class, (uint64_t)((unsigned __int128)iv->blocked * share / dt));
		wh_rec[wh_n] = (uint32_t)(r - states.table);
		wh_ns[wh_n++] = share;
	}
	return wh_n;
}

/* The age of the oldest of @n long holds @lh. */
static uint64_t oldest_age(const struct long_hold *lh, int n)
{
	uint64_t oldest = 0;

	for (int i = 0; i < n; i++) {
		uint64_t age = sp_hold_tick_age_ns(lh[i].tick);

		if (age > oldest)
			oldest = age;
	}
	return oldest;
}

/* Between two samples of a thread whose oldest long hold is @oldest old. */
static uint64_t sample_spacing(uint64_t oldest)
{
	uint64_t s = oldest >> SAMPLE_AGE_SHIFT;

	return s < SAMPLE_NS ? SAMPLE_NS : s > SAMPLE_MAX_NS ? SAMPLE_MAX_NS : s;
}

static void sample(struct sp_hold_pub *p, pid_t tid, const struct long_hold *lh, int n,
		   uint64_t oldest, uint64_t now)
{
	char sysbuf[256];
	const char *sysline;
	uint64_t cpu, delay = 0;
	uint64_t wh_ns[SP_HELD_MAX];
	uint32_t wh_rec[SP_HELD_MAX];
	struct interval iv;
	int class, now_class, have_delay, wh_n;

	cpu = sp_thread_cpu_ns(tid, 0);
	have_delay = schedstat_delay(tid, &delay);
	class = blocked_class(tid, p, sysbuf, sizeof(sysbuf), &sysline);
	now_class = class;
	if (!cpu || !have_delay) {
		sp_store_relaxed(&states.unread, states.unread + 1);
		if (!states.unread_errno)
			sp_store_relaxed(&states.unread_errno, -ENOENT);
		cpu = delay = 0; /* no figures: the next sample starts again */
		if (class < 0)
			class = SP_HS_OTHER;
	}
	/* The last sample is of an earlier stretch of long holds (the ticker
	 * samples nobody while nothing is held, so nothing reset it) when it
	 * is older than the oldest hold now long. */
	if (p->hs_last_ns && (now < p->hs_last_ns || now - p->hs_last_ns > oldest))
		sp_store_relaxed(&p->hs_last_ns, 0);
	iv = split_interval(p, tid, class, cpu, delay, oldest, now);
	if (class < 0)
		class = p->hs_class >= 0 ? p->hs_class : SP_HS_OTHER;
	wh_n = spread(lh, n, &iv, class, wh_rec, wh_ns);
	if (sp_stack_frames && sp_holdstate_where)
		sp_holdwhere_sample(p, tid, now_class, sysline, wh_rec, wh_ns, wh_n);
	if (iv.dt && sp_load_relaxed(&syncprof__trace_on[SP_EV_HOLD_STATE]))
		trace_interval(tid, lh, n, iv.run, iv.pre, iv.blocked, class);
	/* What it mostly did in this interval, and since when, for the live
	 * warning and ctl status (sp_holdstate_now()). */
	{
		int dom = iv.blocked >= iv.run && iv.blocked >= iv.pre ? class
			  : iv.run >= iv.pre ? SP_HS_RUNNING : SP_HS_PREEMPTED;
		uint64_t start = now > iv.dt ? now - iv.dt : now;

		if (!p->hs_last_ns || dom != p->hs_now_class || !p->hs_now_since_ns)
			sp_store_relaxed(&p->hs_now_since_ns, start);
		sp_store_relaxed(&p->hs_now_class, dom);
	}
	sp_store_relaxed(&p->hs_last_ns, now);
	p->hs_cpu_ns = cpu;
	p->hs_delay_ns = delay;
	if (iv.blocked)
		p->hs_class = class;
	p->hs_tid = tid;
}

uint64_t sp_holdstate_tick(uint64_t k, int holding)
{
	struct long_hold lh[SP_HELD_MAX];
	uint64_t t0, now, due = 0;

	kept_idle();
	if (!holding || !sp_holdstate_long_ticks)
		return 0;
	t0 = self_cpu_ns();
	now = mono_ns();
	for (struct sp_hold_pub *p = sp_hold_pubs(); p; p = p->next) {
		pid_t tid = sp_load_relaxed(&p->tid);
		uint64_t oldest, spacing, last;
		int n;

		sp_holdwhere_collect(p, tid, tid <= 0);
		if (tid <= 0 || !SP_PUB_N(sp_load_relaxed(&p->state))) {
			sp_store_relaxed(&p->hs_last_ns, 0);
			continue;
		}
		n = long_holds(p, k, lh);
		if (n < 0)
			continue; /* changing: the next sample */
		if (!n) {
			sp_store_relaxed(&p->hs_last_ns, 0);
			continue;
		}
		oldest = oldest_age(lh, n);
		spacing = sample_spacing(oldest);
		last = sp_load_relaxed(&p->hs_last_ns);
		if (last && p->hs_tid == tid && now > last && now - last + SAMPLE_SLACK_NS < spacing) {
			/* Not due yet. */
			if (!due || spacing - (now - last) < due)
				due = spacing - (now - last);
			continue;
		}
		sample(p, tid, lh, n, oldest, now);
		sp_store_relaxed(&states.samples, states.samples + 1);
		if (!due || spacing < due)
			due = spacing;
	}
	sp_store_relaxed(&states.sample_cpu_ns, states.sample_cpu_ns + (self_cpu_ns() - t0));
	return due;
}

void sp_holdstate_foreach(void (*fn)(const struct sp_holdstate_view *v, void *arg), void *arg)
{
	struct hs_rec *t = sp_load_acquire(&states.table);

	if (!t)
		return;
	for (size_t i = 0; i < HS_SLOTS; i++) {
		const struct hs_rec *r = &t[i];
		struct sp_holdstate_view v;
		uint64_t any = 0;

		if (!sp_load_acquire(&r->ready))
			continue;
		memset(&v, 0, sizeof(v));
		v.type = r->type;
		v.obj = r->obj;
		v.holder = r->holder;
		for (int k = 0; k < SP_HS_FIXED; k++) {
			uint64_t x = sp_load_relaxed(&r->ns[k]);

			v.ns[k] = x > r->snap[k] ? x - r->snap[k] : 0;
			any |= v.ns[k];
		}
		for (int k = 0; k < SP_HS_SYSCALLS; k++) {
			long nr = sp_load_relaxed(&r->sys_nr[k]);
			uint64_t x = sp_load_relaxed(&r->sys_ns[k]);

			if (nr < 0 || x <= r->sys_snap[k])
				continue;
			v.sys_nr[v.n_sys] = nr;
			v.sys_ns[v.n_sys] = x - r->sys_snap[k];
			any |= v.sys_ns[v.n_sys++];
		}
		if (any)
			fn(&v, arg);
	}
}

int sp_holdstate_rec_key(uint32_t rec, uint8_t *type, uintptr_t *obj, struct sp_site *holder)
{
	struct hs_rec *t = sp_load_acquire(&states.table);

	if (!t || rec >= HS_SLOTS || !sp_load_acquire(&t[rec].ready))
		return 0;
	*type = t[rec].type;
	*obj = t[rec].obj;
	*holder = t[rec].holder;
	return 1;
}

/* Under report_lock (runtime/switch.c, at a reset): later reports
 * subtract these.  The ticker may add meanwhile; what it adds between the
 * two loads is lost to the next report only, never counted twice. */
void sp_holdstate_snapshot(void)
{
	struct hs_rec *t = sp_load_acquire(&states.table);

	if (!t)
		return;
	for (size_t i = 0; i < HS_SLOTS; i++) {
		struct hs_rec *r = &t[i];

		if (!sp_load_acquire(&r->ready))
			continue;
		for (int k = 0; k < SP_HS_FIXED; k++)
			r->snap[k] = sp_load_relaxed(&r->ns[k]);
		for (int k = 0; k < SP_HS_SYSCALLS; k++)
			r->sys_snap[k] = sp_load_relaxed(&r->sys_ns[k]);
	}
	sp_holdwhere_snapshot();
}

/* "blocked in fsync()", "running"...: class @c, into @buf. */
static void class_text(int c, char *buf, size_t size)
{
	const char *name;

	switch (c) {
	case SP_HS_RUNNING: snprintf(buf, size, "running"); return;
	case SP_HS_PREEMPTED: snprintf(buf, size, "preempted (runnable, not running)"); return;
	case SP_HS_LOCK: snprintf(buf, size, "waiting for another lock"); return;
	case SP_HS_OTHER: snprintf(buf, size, "blocked outside a system call"); return;
	}
	name = sp_syscall_name(c - SP_HS_FIXED);
	if (name)
		snprintf(buf, size, "blocked in %s()", name);
	else
		snprintf(buf, size, "blocked in system call %d", c - SP_HS_FIXED);
}

int sp_holdstate_now(pid_t tid, char *buf, size_t size, uint64_t *for_ns)
{
	uint64_t now = mono_ns();

	for (struct sp_hold_pub *p = sp_hold_pubs(); p; p = p->next) {
		uint64_t last, since;

		if (sp_load_relaxed(&p->tid) != tid)
			continue;
		/* The sampler's view, if it is current (it samples at least
		 * every SAMPLE_MAX_NS while the hold is long: twice that is
		 * stale). */
		last = sp_load_relaxed(&p->hs_last_ns);
		since = sp_load_relaxed(&p->hs_now_since_ns);
		if (!last || now - last > 2 * SAMPLE_MAX_NS || !since)
			break;
		class_text(sp_load_relaxed(&p->hs_now_class), buf, size);
		*for_ns = now > since ? now - since : 0;
		return 0;
	}
	return -ENOENT;
}

void sp_holdstate_long_each(void (*fn)(const struct sp_long_hold_now *h, void *arg), void *arg)
{
	struct long_hold lh[SP_HELD_MAX];
	uint64_t k = sp_load_acquire(&sp_hold_tick);

	if (!sp_holdstate_long_ticks)
		return;
	for (struct sp_hold_pub *p = sp_hold_pubs(); p; p = p->next) {
		pid_t tid = sp_load_relaxed(&p->tid);
		struct sp_long_hold_now h;
		int n;

		if (tid <= 0 || !SP_PUB_N(sp_load_relaxed(&p->state)))
			continue;
		n = long_holds(p, k, lh);
		for (int i = 0; i < n; i++) {
			memset(&h, 0, sizeof(h));
			h.tid = tid;
			h.obj = lh[i].obj;
			h.type = lh[i].type;
			h.site = lh[i].site;
			h.held_ns = sp_hold_tick_age_ns(lh[i].tick);
			if (sp_holdstate_now(tid, h.state, sizeof(h.state), &h.state_ns))
				snprintf(h.state, sizeof(h.state), "not sampled yet");
			fn(&h, arg);
		}
	}
}

void sp_holdstate_cost(uint64_t *n, uint64_t *cpu_ns, uint64_t *n_unread, int *err)
{
	*n = sp_load_relaxed(&states.samples);
	*cpu_ns = sp_load_relaxed(&states.sample_cpu_ns);
	*n_unread = sp_load_relaxed(&states.unread);
	*err = sp_load_relaxed(&states.unread_errno);
}
