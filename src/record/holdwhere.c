/*
 * holdwhere.c - where in the critical section the holder of a long hold
 * was (frames=N), for holdstate.c's samples.
 *
 * Design.  With frames=N each sample of holdstate.c also says where the
 * holder is in its own code (stack.c's sp_stack_point(): its innermost
 * frame outside libc, the lock wrappers and syncprof), and the sample's
 * interval goes to that point, in a table keyed by (hold record, point,
 * class):
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
 * Only the hold ticker's thread (holdstate.c's sampler) writes here, but
 * for the handler's answer in the holder's pub; reports read the table
 * (published entries, release).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "record/hold.h"
#include "record/holdwhere.h"
#include "record/record.h"

#define WHERE_SIGNAL (SIGRTMAX - 7)
#define WH_SLOTS 4096
#define WH_PROBES 32
#define WH_FRAMES 32
#define WH_WAIT 200 /* samples an interval waits for the handler's answer */

struct wh_rec {
	uint64_t hash; /* 0: free (the ticker alone claims) */
	int ready;     /* key written (release) */
	uint32_t rec;  /* the hold-state record (holdstate.c) */
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
void sp_holdwhere_collect(struct sp_hold_pub *p, pid_t tid, int give_up)
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
void sp_holdwhere_sample(struct sp_hold_pub *p, pid_t tid, int class, const char *sysline,
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

void sp_holdstate_where_foreach(void (*fn)(const struct sp_holdwhere_view *v, void *arg),
				void *arg)
{
	struct wh_rec *w = sp_load_acquire(&where_found.table);

	if (!w)
		return;
	for (size_t i = 0; i < WH_SLOTS; i++) {
		struct sp_holdwhere_view v;
		uint64_t x;

		if (!sp_load_acquire(&w[i].ready))
			continue;
		x = sp_load_relaxed(&w[i].ns);
		if (x <= w[i].snap)
			continue;
		memset(&v, 0, sizeof(v));
		if (!sp_holdstate_rec_key(w[i].rec, &v.type, &v.obj, &v.holder))
			continue;
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

void sp_holdwhere_snapshot(void)
{
	if (sp_load_acquire(&where_found.table))
		for (size_t i = 0; i < WH_SLOTS; i++)
			if (sp_load_acquire(&where_found.table[i].ready))
				where_found.table[i].snap = sp_load_relaxed(&where_found.table[i].ns);
}
