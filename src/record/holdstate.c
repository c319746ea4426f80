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
 * sampled, once per SAMPLE_EVERY ticks, from the ticker's thread, never
 * from a lock path:
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
 * tail after the last sample, up to one sampling period, is not seen.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "base/syscall_names.h"
#include "record/hold.h"
#include "record/record.h"
#include "trace/format.h"

#define SAMPLE_EVERY 2 /* ticks: a sample per ms of long hold */
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

/* A blocked interval's class: an SP_HS_* below SP_HS_FIXED, or
 * SP_HS_FIXED + a system call number. */
#define CLASS_SYSCALL(nr) (SP_HS_FIXED + (int)(nr))

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

/* ---- where in the critical section (frames=N) ----------------------------
 *
 * With frames=N each sample also says where the holder is in its own
 * code (stack.c's sp_stack_point(): its innermost frame outside libc, the
 * lock wrappers and syncprof), and the sample's interval goes to that
 * point, in a table keyed by (hold record, point, class):
 *   - a holder blocked in the kernel (a system call, a page fault) is
 *     unwound from here, the ticker, from the user pc and sp the kernel
 *     shows in /proc/self/task/TID/syscall (sp_stack_remote()); it is not
 *     disturbed;
 *   - a holder found running (or runnable: the kernel says "running" for
 *     both) gets a signal, WHERE_SIGNAL, whose handler unwinds through the
 *     signal frame and answers in the thread's pub; the interval waits
 *     for that answer, a tick or two, and is dropped (counted) without
 *     one.  Only a running thread is signalled: a signal to a thread
 *     sleeping in nanosleep() or poll() would end the call early (EINTR)
 *     even with SA_RESTART.  The handler is installed only while the
 *     signal's disposition is the default, and a program that installs
 *     its own for it stops the signalling (said in the report's counts);
 *   - a holder waiting for another profiled lock is not: its chain says
 *     where.
 */
#define WHERE_SIGNAL (SIGRTMAX - 7)
#define WH_SLOTS 4096
#define WH_PROBES 32
#define WH_FRAMES 32
#define WH_WAIT 200 /* samples an interval waits for the handler's answer */

struct wh_rec {
	uint64_t hash; /* 0: free (the ticker alone claims) */
	int ready;     /* key written (release) */
	uint32_t rec;  /* index in table[] */
	int32_t class; /* SP_HS_RUNNING, SP_HS_OTHER, CLASS_SYSCALL(nr) */
	uintptr_t pc;  /* key: a return address, or a function's start */
	uintptr_t at;  /* the first sample's own pc there, which reports name */
	uint64_t ns, snap;
};

/* Written by the ticker: the records of holders' points (published once,
 * release), whether the signal is set up (0: not yet; 1: on; -1: off, no
 * signal), the points found and those dropped. */
static struct {
	struct wh_rec *table;
	int state;
	uint64_t n, dropped;
} where_found;

static void where_add(uint32_t rec, uintptr_t pc, uintptr_t at, int class, uint64_t ns)
{
	uint64_t h = (((uint64_t)rec << 32 ^ (uint64_t)(uint32_t)class) * 0x9E3779B97F4A7C15ull ^
		      pc * 0xC2B2AE3D27D4EB4Full) |
		     1;

	if (!ns)
		return;
	if (!where_found.table) {
		struct wh_rec *t = sp_mmap(WH_SLOTS * sizeof(*t));

		if (!t)
			return;
		sp_store_release(&where_found.table, t);
	}
	for (unsigned i = 0; i < WH_PROBES; i++) {
		struct wh_rec *w = &where_found.table[(h + i) & (WH_SLOTS - 1)];

		if (!w->hash) {
			w->hash = h;
			w->rec = rec;
			w->class = class;
			w->pc = pc;
			w->at = at;
			sp_store_release(&w->ready, 1);
		}
		if (w->hash == h && w->rec == rec && w->class == class && w->pc == pc) {
			sp_store_relaxed(&w->ns, w->ns + ns);
			return;
		}
	}
	sp_store_relaxed(&where_found.dropped, where_found.dropped + 1);
}

static void where_handler(int sig, siginfo_t *si, void *ctx)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	int saved_errno = errno;
	uint32_t req;

	(void)sig;
	if (!p || si->si_code != SI_TKILL || si->si_pid != (pid_t)syscall(SYS_getpid))
		goto out; /* not ours: a signal some other sender sent */
	req = sp_load_acquire(&p->wh_req);
	if (req == sp_load_relaxed(&p->wh_done))
		goto out;
	/* Inside the profiler (its unwinder, its tables): no unwind. */
	if (sp_tls_busy) {
		p->wh_pc = 0;
	} else {
#if defined(__x86_64__)
		uintptr_t ip = (uintptr_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
		uintptr_t ip = (uintptr_t)((ucontext_t *)ctx)->uc_mcontext.pc;
#else
		uintptr_t ip = 0;
#endif
		int exact = 1;

		p->wh_pc = ip ? sp_stack_point_here(ip, &exact) : 0;
		p->wh_exact = exact;
	}
	sp_store_release(&p->wh_done, req);
out:
	errno = saved_errno;
}

/* The handler, installed once if the signal is free; 1 when on. */
static int where_setup(void)
{
	struct sigaction sa, old;

	if (where_found.state)
		return where_found.state > 0;
	where_found.state = -1;
	if (!sp_stack_frames || sigaction(WHERE_SIGNAL, NULL, &old) ||
	    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
		return 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = where_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(WHERE_SIGNAL, &sa, NULL))
		return 0;
	where_found.state = 1;
	return 1;
}

/* The handler is still ours (the program may have set its own since). */
static int where_signal_ours(void)
{
	struct sigaction cur;

	if (sigaction(WHERE_SIGNAL, NULL, &cur) || !(cur.sa_flags & SA_SIGINFO) ||
	    cur.sa_sigaction != where_handler) {
		where_found.state = -1;
		return 0;
	}
	return 1;
}

/* An interval of @p waiting for its answer: added at the answer's point,
 * or dropped after WH_WAIT samples (or when the thread changed). */
static void where_collect(struct sp_hold_pub *p, pid_t tid, int give_up)
{
	uintptr_t pc;

	if (!p->wh_pend_n)
		return;
	if (p->wh_tid == tid && sp_load_acquire(&p->wh_done) == p->wh_req) {
		/* A running thread's pc moves: its point is its function,
		 * named by the first pc seen there. */
		uintptr_t at = sp_load_relaxed(&p->wh_pc);

		pc = sp_stack_function_of(at, p->wh_exact);
		for (uint32_t i = 0; i < p->wh_pend_n; i++)
			if (pc)
				where_add(p->wh_pend_rec[i], pc, at, SP_HS_RUNNING,
					  p->wh_pend_ns[i]);
		if (pc)
			sp_store_relaxed(&where_found.n, where_found.n + 1);
		else
			sp_store_relaxed(&where_found.dropped, where_found.dropped + 1);
		p->wh_pend_n = 0;
		return;
	}
	if (p->wh_tid != tid || give_up || ++p->wh_pend_age >= WH_WAIT) {
		sp_store_relaxed(&where_found.dropped, where_found.dropped + 1);
		p->wh_pend_n = 0;
	}
}

/* "nr a0..a5 sp pc" or "-1 sp pc": the user sp and pc of a thread
 * blocked in the kernel; 0 when the line has none. */
static int syscall_sp_pc(const char *s, uintptr_t *sp, uintptr_t *pc)
{
	uintptr_t v[9];
	int n = 0;

	while (*s && n < 9) {
		char *end;

		while (*s == ' ')
			s++;
		v[n] = (uintptr_t)strtoull(s, &end, 0);
		if (end == s)
			break;
		n++;
		s = end;
	}
	if (n != 9 && n != 3)
		return 0;
	*sp = v[n - 2];
	*pc = v[n - 1];
	return *pc != 0;
}

/*
 * The point of this sample for the interval just measured, whose share of
 * each long hold is @ns[i] of record @rec[i]: a blocked thread's now, a
 * running thread's when its handler answers.
 */
static void where_sample(struct sp_hold_pub *p, pid_t tid, int class, const char *sysline,
			 const uint32_t *rec, const uint64_t *ns, int n)
{
	if (!n || class == SP_HS_LOCK)
		return;
	if (class >= 0) {
		uintptr_t frames[WH_FRAMES], sp, pc, at;
		int exact;
		unsigned k = WH_FRAMES; /* up to the program's code, whatever frames=N */

		if (!sysline || !syscall_sp_pc(sysline, &sp, &pc)) {
			sp_store_relaxed(&where_found.dropped, where_found.dropped + 1);
			return;
		}
		if (p->wh_blocked_tid == tid && p->wh_blocked_sp == sp && p->wh_blocked_pc == pc &&
		    p->wh_blocked_class == class) {
			/* Still in the call of the last sample (the same user
			 * sp and pc, a blocked thread's stack does not move):
			 * the same point, without unwinding again. */
			at = p->wh_blocked_at;
			pc = p->wh_blocked_key;
		} else {
			if (!(k = sp_stack_remote(pc, sp, frames, k, 1))) {
				sp_store_relaxed(&where_found.dropped, where_found.dropped + 1);
				p->wh_blocked_tid = 0;
				return;
			}
			p->wh_blocked_tid = tid;
			p->wh_blocked_sp = sp;
			p->wh_blocked_pc = pc;
			p->wh_blocked_class = class;
			at = sp_stack_point(frames, k, &exact);
			/* not in a call (a page fault, say): its function */
			pc = exact ? sp_stack_function_of(at, 1) : at;
			p->wh_blocked_at = at;
			p->wh_blocked_key = pc;
		}
		for (int i = 0; i < n; i++)
			where_add(rec[i], pc, at, class, ns[i]);
		sp_store_relaxed(&where_found.n, where_found.n + 1);
		return;
	}
	if (sp_holdstate_where < 2)
		return; /* running: not located (hold_where=all signals it) */
	if (p->wh_pend_n && p->wh_tid == tid) {
		/* Not answered yet: a thread on a run queue handles its signal
		 * when it runs again, where it was stopped - the point of these
		 * intervals too. */
		for (int i = 0; i < n; i++) {
			uint32_t k = 0;

			while (k < p->wh_pend_n && p->wh_pend_rec[k] != rec[i])
				k++;
			if (k == p->wh_pend_n) {
				if (k == SP_HELD_MAX)
					continue;
				p->wh_pend_rec[p->wh_pend_n++] = rec[i];
				p->wh_pend_ns[k] = 0;
			}
			p->wh_pend_ns[k] += ns[i];
		}
		return;
	}
	if (!where_setup() || !where_signal_ours()) {
		sp_store_relaxed(&where_found.dropped, where_found.dropped + 1);
		return;
	}
	for (int i = 0; i < n; i++) {
		p->wh_pend_rec[i] = rec[i];
		p->wh_pend_ns[i] = ns[i];
	}
	p->wh_pend_n = (uint32_t)n;
	p->wh_pend_age = 0;
	p->wh_tid = tid;
	sp_store_release(&p->wh_req, p->wh_req + 1);
	if (syscall(SYS_tgkill, (pid_t)syscall(SYS_getpid), tid, WHERE_SIGNAL)) {
		p->wh_pend_n = 0;
		sp_store_relaxed(&where_found.dropped, where_found.dropped + 1);
	}
}

static void sample(struct sp_hold_pub *p, pid_t tid, const struct long_hold *lh, int n)
{
	char buf[256], sysbuf[256];
	const char *sysline;
	uint64_t now = mono_ns(), cpu, delay = 0, oldest = 0, dt, run, pre, blocked, fix = 0;
	uint64_t wh_ns[SP_HELD_MAX];
	uint32_t wh_rec[SP_HELD_MAX];
	int class, now_class, have_delay = 0, fix_class = -1, wh_n = 0;

	for (int i = 0; i < n; i++) {
		uint64_t age = sp_hold_tick_age_ns(lh[i].tick);

		if (age > oldest)
			oldest = age;
	}
	cpu = sp_thread_cpu_ns(tid, 0);
	if (kept_read(tid, KEPT_SCHEDSTAT, buf, sizeof(buf)) > 0) {
		const char *s = buf;
		uint64_t v = 0;

		while (*s >= '0' && *s <= '9')
			s++;
		while (*s == ' ')
			s++;
		if (*s >= '0' && *s <= '9') {
			while (*s >= '0' && *s <= '9')
				v = v * 10 + (uint64_t)(*s++ - '0');
			delay = v;
			have_delay = 1;
		}
	}
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
	if (!p->hs_last_ns || p->hs_tid != tid || !cpu || !p->hs_cpu_ns) {
		/* No earlier figures: the stretch so far (or since the last
		 * sample, which had none), whole, by its state now. */
		dt = p->hs_last_ns && p->hs_tid == tid && now > p->hs_last_ns ? now - p->hs_last_ns
									  : oldest;
		run = class < 0 ? dt : 0;
		pre = 0;
		blocked = class < 0 ? 0 : dt;
		p->hs_class = -1;
		p->hs_credit_ns = 0;
		p->hs_suspect_ns = 0;
	} else {
		uint64_t dcpu = cpu > p->hs_cpu_ns ? cpu - p->hs_cpu_ns : 0;
		uint64_t ddelay = delay > p->hs_delay_ns ? delay - p->hs_delay_ns : 0;

		dt = now > p->hs_last_ns ? now - p->hs_last_ns : 0;
		/* Run-queue time counted ahead (below) is not counted again. */
		if (p->hs_credit_ns) {
			uint64_t c = ddelay < p->hs_credit_ns ? ddelay : p->hs_credit_ns;

			ddelay -= c;
			p->hs_credit_ns -= c;
		}
		/* More run-queue time than the interval leaves: the delay of a
		 * thread that was queued at the last sample, which that
		 * sample gave to what the thread had blocked in before (below,
		 * "suspect"): moved to preempted now. */
		if (dcpu + ddelay > dt && p->hs_suspect_ns) {
			uint64_t excess = dcpu + ddelay - dt;

			fix = excess < p->hs_suspect_ns ? excess : p->hs_suspect_ns;
			if (fix > ddelay)
				fix = ddelay;
			fix_class = p->hs_suspect_class;
			ddelay -= fix;
		}
		p->hs_suspect_ns = 0;
		if (dcpu + ddelay > dt) { /* the clocks' own skew */
			uint64_t sum = dcpu + ddelay;

			dcpu = (uint64_t)((unsigned __int128)dt * dcpu / sum);
			ddelay = dt - dcpu;
		}
		run = dcpu;
		pre = ddelay;
		blocked = dt - dcpu - ddelay;
		if (class < 0 && blocked && p->hs_class < 0) {
			/* Runnable now and at the last sample, yet neither
			 * running nor queued for part of the interval as far as
			 * schedstat says: a thread waiting on a run queue has its
			 * delay added only when it gets a CPU.  That part is
			 * preempted time, counted now and taken off the delay the
			 * kernel adds later. */
			pre += blocked;
			p->hs_credit_ns += blocked;
			blocked = 0;
		}
		/* Runnable now, blocked at the last sample: it blocked there
		 * until it woke (class below) - or it woke earlier and waits
		 * on a run queue since, which schedstat says only when it
		 * runs: suspect, corrected by the next sample.  Runnable at
		 * both and never blocked between: whatever it last blocked in
		 * is over. */
		if (class < 0 && blocked && p->hs_class >= 0) {
			p->hs_suspect_ns = blocked;
			p->hs_suspect_class = p->hs_class;
		}
		if (class < 0 && !blocked)
			p->hs_class = -1;
	}
	if (class < 0)
		class = p->hs_class >= 0 ? p->hs_class : SP_HS_OTHER;
	for (int i = 0; i < n && dt; i++) {
		struct hs_rec *r = rec_get(lh[i].obj, lh[i].type, &lh[i].site);
		uint64_t age = sp_hold_tick_age_ns(lh[i].tick), share = dt;

		if (!r)
			continue;
		/* Long since less than the interval: its own age, in proportion. */
		if (age && age < dt)
			share = age;
		if (fix)
			rec_to_preempted(r, fix_class, (uint64_t)((unsigned __int128)fix * share / dt));
		rec_add(r, SP_HS_RUNNING, (uint64_t)((unsigned __int128)run * share / dt));
		rec_add(r, SP_HS_PREEMPTED, (uint64_t)((unsigned __int128)pre * share / dt));
		rec_add(r, class, (uint64_t)((unsigned __int128)blocked * share / dt));
		wh_rec[wh_n] = (uint32_t)(r - states.table);
		wh_ns[wh_n++] = share;
	}
	if (sp_stack_frames && sp_holdstate_where)
		where_sample(p, tid, now_class, sysline, wh_rec, wh_ns, wh_n);
	if (dt && sp_load_relaxed(&syncprof__trace_on[SP_EV_HOLD_STATE]))
		trace_interval(tid, lh, n, run, pre, blocked, class);
	/* What it mostly did in this interval, and since when, for the live
	 * warning and ctl status (sp_holdstate_now()). */
	{
		int dom = blocked >= run && blocked >= pre ? class
			  : run >= pre ? SP_HS_RUNNING : SP_HS_PREEMPTED;
		uint64_t start = now > dt ? now - dt : now;

		if (!p->hs_last_ns || dom != p->hs_now_class || !p->hs_now_since_ns)
			sp_store_relaxed(&p->hs_now_since_ns, start);
		sp_store_relaxed(&p->hs_now_class, dom);
	}
	sp_store_relaxed(&p->hs_last_ns, now);
	p->hs_cpu_ns = cpu;
	p->hs_delay_ns = delay;
	if (blocked)
		p->hs_class = class;
	p->hs_tid = tid;
}

void sp_holdstate_tick(uint64_t k, int holding)
{
	struct long_hold lh[SP_HELD_MAX];
	uint64_t t0;

	kept_idle();
	if (!holding || !sp_holdstate_long_ticks || k % SAMPLE_EVERY)
		return;
	t0 = self_cpu_ns();
	for (struct sp_hold_pub *p = sp_hold_pubs(); p; p = p->next) {
		pid_t tid = sp_load_relaxed(&p->tid);
		int n;

		where_collect(p, tid, tid <= 0);
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
		sample(p, tid, lh, n);
		sp_store_relaxed(&states.samples, states.samples + 1);
	}
	sp_store_relaxed(&states.sample_cpu_ns, states.sample_cpu_ns + (self_cpu_ns() - t0));
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

void sp_holdstate_where_foreach(void (*fn)(const struct sp_holdwhere_view *v, void *arg),
				void *arg)
{
	struct wh_rec *w = sp_load_acquire(&where_found.table);
	struct hs_rec *t = sp_load_acquire(&states.table);

	if (!w || !t)
		return;
	for (size_t i = 0; i < WH_SLOTS; i++) {
		const struct hs_rec *r;
		struct sp_holdwhere_view v;
		uint64_t x;

		if (!sp_load_acquire(&w[i].ready))
			continue;
		x = sp_load_relaxed(&w[i].ns);
		if (x <= w[i].snap)
			continue;
		r = &t[w[i].rec];
		memset(&v, 0, sizeof(v));
		v.type = r->type;
		v.obj = r->obj;
		v.holder = r->holder;
		v.pc = w[i].at;
		v.class = w[i].class < SP_HS_FIXED ? w[i].class : SP_HS_FIXED;
		v.sys_nr = w[i].class >= SP_HS_FIXED ? w[i].class - SP_HS_FIXED : -1;
		v.ns = x - w[i].snap;
		fn(&v, arg);
	}
}

void sp_holdstate_where_cost(uint64_t *points, uint64_t *dropped)
{
	*points = sp_load_relaxed(&where_found.n);
	*dropped = sp_load_relaxed(&where_found.dropped);
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
	if (sp_load_acquire(&where_found.table))
		for (size_t i = 0; i < WH_SLOTS; i++)
			if (sp_load_acquire(&where_found.table[i].ready))
				where_found.table[i].snap = sp_load_relaxed(&where_found.table[i].ns);
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
		/* The sampler's view, if it is current (it samples every ms
		 * while the hold is long: 20 ms is stale). */
		last = sp_load_relaxed(&p->hs_last_ns);
		since = sp_load_relaxed(&p->hs_now_since_ns);
		if (!last || now - last > 20000000 || !since)
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
