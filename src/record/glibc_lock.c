/*
 * glibc_lock.c - waits on glibc's own locks (stdio FILE locks, malloc
 * arena locks, every other __libc_lock), timed on their slow path and
 * recorded as type glibc_lock at the program's call site.
 *
 * The problem.  glibc takes its internal locks with an inline CAS and,
 * only when that fails, calls __lll_lock_wait_private (exported as
 * GLIBC_PRIVATE, but called from inside libc.so without the PLT, so that
 * interposing the symbol or rewriting a GOT slot reaches none of the 270
 * internal calls).  Its body in Debian 12's glibc 2.36 (x86-64) is a
 * 73-byte leaf:
 *
 *   +0  mov (%rdi),%eax; cmp $2,%eax; je +18      lock word already 2: wait
 *   +7  mov $2,%eax; xchg %eax,(%rdi); test; je +72   got it (was 0): return
 *   +18 futex(rdi, FUTEX_WAIT|FUTEX_PRIVATE_FLAG, 2, NULL) with `syscall`
 *   +38 success, -EAGAIN or -EINTR: jmp +7; other errors: __libc_fatal
 *
 * Design.  At start-up (sp_glibc_locks_start(), called once from the
 * lifecycle's start-up, which preload, libsyncprof and attach all pass
 * through) the first 5 bytes of that function become `jmp rel32` to
 * sp_glibc_lock_wait() here, which has exactly glibc's semantics on the
 * lock word (the same load, xchg and private FUTEX_WAIT with the value 2,
 * the same retry on EAGAIN and EINTR, the same fatal message otherwise;
 * through an inline `syscall` instruction, never libc's syscall(), which
 * another part of syncprof interposes) and times the wait around it.
 *
 *  - Only 5 bytes change: a thread asleep in the original function when
 *    the patch is made returns to +38 and jumps back to +7, so +5..+72
 *    must stay the original code, and do.  The 8 bytes at +0 (the
 *    function is 16-byte aligned) are written with one aligned atomic
 *    store, so that a thread entering the function sees either the old
 *    first instruction or the whole jump; the page is RWX meanwhile
 *    (another thread may be executing on it) and R-X again after.
 *  - Before writing, the first 56 bytes (everything up to the fatal
 *    path's call, whose displacement is relocated) are compared with
 *    the code above; another build is refused with one line, and the
 *    rest of the profiler runs as before.
 *  - When the replacement lies more than +-2 GiB away (libsyncprof.a
 *    linked into a PIE program sits far from libc), the jump goes to a
 *    trampoline in a page mapped within reach of libc: `jmp *0(%rip)`
 *    and the absolute address, no register touched.
 *  - Zero cost while uncontended: the fast path is glibc's inline CAS,
 *    untouched; only a failed CAS reaches the patch.
 *  - fork(): the child keeps the patch and this library, and records
 *    (the registry's fork handling covers it).  exec(): a fresh libc is
 *    mapped, nothing is inherited, with or without the preload.
 *  - No signal, no seccomp filter, no SIGSYS: a program that installs
 *    its own SIGSYS handler or seccomp filter, or needs no_new_privs, is
 *    not affected.  If mprotect() is refused (a seccomp filter installed
 *    before us, SELinux execmod, PaX), nothing is patched and one line
 *    says why.  glibc_locks=0 in SYNCPROF_OPTIONS turns it off.
 *
 * Recording.  The replacement is entered by a jump from libc's code, so
 * its return address is the libc function that waited (fprintf's
 * _IO_flockfile, malloc's arena_get...); the site is the first frame
 * outside the default-skipped libraries (sp_site_pc(): libc has no CFI
 * rows there, so this unwinds (sp_backtrace()), several us, on the slow
 * path only).  The object is the lock word; the clock starts at entry,
 * so the site's unwind is part of the wait, as it is of the call the
 * program timed.  A wait counts as one contended acquisition (the
 * uncontended ones are never seen: the row's count is its waits).
 * Nothing here mallocs or takes a lock that could be the one waited for:
 * entries come from the thread's mmap'd table.  A wait entered from inside
 * the profiler (a busy thread: a report, an unwind, the trace writer), or
 * from inside this function itself (the unwinder or a new thread record
 * reaching a contended libc lock, a signal handler), just waits,
 * unrecorded: a per-thread depth guards it.  errno is kept (glibc's own
 * function leaves it alone).  With profiling off (ctl off, after an
 * attach's detach) it only waits.
 *
 * Limits: a static program (no libc.so to patch); waits in libc's other
 * slow paths (__lll_lock_wait, for process-shared locks: pthread's, seen
 * by the interposed calls anyway); other glibc builds until their code is
 * added here; the count of a row is its waits, not its acquisitions.
 *
 * Alternatives considered (issue 23): a seccomp filter that traps futex
 * calls by instruction pointer and a SIGSYS handler costs 1.5-2 us per
 * round trip on top of each wait, cannot be removed (an exec'd child
 * inherits the filter, which then kills it or needs our handler), and
 * breaks programs with their own SIGSYS handler or seccomp needs;
 * Syscall User Dispatch is per thread (every thread, including those
 * the program creates with raw clone, must turn it on) and also lives on
 * SIGSYS; interposing __lll_lock_wait_private reaches no internal call;
 * patching every inline lock site in libc is hundreds of sites of
 * varying code.  The one-jump patch costs nothing while uncontended and
 * an unwind per contended wait (measured in docs/glibc-locks.md).
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/glibc_lock.h"
#include "record/probe.h"

/* The first 56 bytes of glibc 2.36's __lll_lock_wait_private (x86-64),
 * up to the fatal path's call: the code above. */
static const unsigned char lll_code[] = {
	0x8b, 0x07, 0x83, 0xf8, 0x02, 0x74, 0x0b, 0xb8, 0x02, 0x00, 0x00, 0x00, 0x87, 0x07,
	0x85, 0xc0, 0x74, 0x36, 0x45, 0x31, 0xd2, 0xba, 0x02, 0x00, 0x00, 0x00, 0xbe, 0x80,
	0x00, 0x00, 0x00, 0xb8, 0xca, 0x00, 0x00, 0x00, 0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0,
	0xff, 0xff, 0x76, 0xd9, 0x83, 0xf8, 0xf5, 0x74, 0xd4, 0x83, 0xf8, 0xfc, 0x74, 0xcf,
};
_Static_assert(sizeof(lll_code) == 56, "the code compared before patching");
#define JMP_LEN 5 /* e9 rel32: bytes +0..+4; +5..+7 stay */

static int active;
/* Nesting of sp_glibc_lock_wait() in this thread: inner waits go raw. */
static SP_TLS int depth;

int sp_glibc_locks_active(void)
{
	return sp_load_acquire(&active);
}

/* ---- the wait, as glibc's ------------------------------------------------ */

/* futex(@w, FUTEX_WAIT_PRIVATE, 2, NULL): the raw result (-errno). */
static inline long futex_wait_2(int *w)
{
	register long r10 __asm__("r10") = 0;
	long rc;

	__asm__ volatile("syscall"
			 : "=a"(rc)
			 : "0"((long)SYS_futex), "D"(w), "S"((long)FUTEX_WAIT_PRIVATE),
			   "d"(2L), "r"(r10)
			 : "rcx", "r11", "memory");
	return rc;
}

static SP_COLD void futex_fatal(void)
{
	static const char msg[] = "The futex facility returned an unexpected error code.\n";
	ssize_t w = write(2, msg, sizeof(msg) - 1);

	(void)w;
	abort(); /* glibc: __libc_fatal(), i.e. the message and abort() */
}

/* glibc's loop from +0: until the xchg finds the word 0, with the word
 * left 2 (locked, maybe waiters) as glibc's unlock expects. */
static void lll_wait(int *w)
{
	if (__atomic_load_n(w, __ATOMIC_RELAXED) == 2)
		goto wait;
	while (__atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE) != 0) {
		long rc;
wait:
		rc = futex_wait_2(w);
		if ((unsigned long)rc > -4096ul && rc != -EAGAIN && rc != -EINTR)
			futex_fatal();
	}
}

/* ---- the replacement ------------------------------------------------------ */

/* Time the wait on @w, record it at the program's site (the caller of
 * libc's function that returned to @ret; @cfa and @fp as sp_site_pc()
 * wants them). */
static SP_NOINLINE void wait_recorded(struct sp_thread *t, int *w, uintptr_t ret, uintptr_t cfa,
				      uintptr_t fp)
{
	int mode;
	uint64_t t0 = sp_wait_start(&mode), ns;
	const struct sp_site site = { NULL, NULL, sp_site_pc(ret, cfa, fp), 0 };
	struct sp_entry *e = sp_entry_get(t, &site, (uintptr_t)w, SP_TYPE_GLIBC_LOCK);
	struct sp_thread *watched = SP_UNLIKELY(sp_load_relaxed(&sp_watch_on)) && e ? t : NULL;

	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on)))
		(void)sp_trace_wait_begin(w, SP_TYPE_GLIBC_LOCK, &site);
	if (watched)
		sp_watch_begin(watched, e, t0, mode, 0);
	lll_wait(w);
	ns = sp_wait_ns(mode, t0);
	if (watched)
		sp_watch_end(watched, ns);
	sp_probe_waited(e, w, SP_TYPE_GLIBC_LOCK, &site, ns);
}

/*
 * Where libc's __lll_lock_wait_private jumps (void (int *futex), the C
 * ABI; entered by a jump, so our return address is libc's caller's).
 * Hidden and not static: its address is taken for the patch.
 */
SP_NOINLINE void sp_glibc_lock_wait(int *w)
{
	uintptr_t ret = (uintptr_t)__builtin_return_address(0);
	uintptr_t cfa = (uintptr_t)__builtin_dwarf_cfa();
	/* The caller's rbp: the first slot of this function's own frame. */
	uintptr_t fp = *(const uintptr_t *)__builtin_frame_address(0);
	struct sp_thread *t;
	int saved_errno;

	if (depth || !(sp_load_relaxed(&syncprof__enabled) & SYNCPROF__PROFILING)) {
		lll_wait(w);
		return;
	}
	depth++;
	saved_errno = errno;
	t = sp_thread_self(); /* NULL: a busy thread, the profiler's own */
	if (t)
		wait_recorded(t, w, ret, cfa, fp);
	else
		lll_wait(w);
	errno = saved_errno;
	depth--;
}

/* ---- the patch ------------------------------------------------------------ */

/* A page within +-2 GiB of @near holding `jmp *0(%rip)` to @to; 0 if none. */
static uintptr_t trampoline(uintptr_t near, uintptr_t to)
{
	static const unsigned char jmp_abs[6] = { 0xff, 0x25, 0x00, 0x00, 0x00, 0x00 };
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const uintptr_t step = 1ul << 20, reach = (1ul << 31) - 2 * step;

	for (uintptr_t d = step; d < reach; d += step) {
		for (int sign = 0; sign < 2; sign++) {
			uintptr_t hint = ((sign ? near + d : near - d) & ~(page - 1));
			unsigned char *p;

			if (!sign && near < d)
				continue;
			p = mmap((void *)hint, page, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
			if (p == MAP_FAILED)
				continue;
			if ((uintptr_t)p != hint) { /* a kernel before 4.17: a hint only */
				munmap(p, page);
				continue;
			}
			memcpy(p, jmp_abs, sizeof(jmp_abs));
			memcpy(p + sizeof(jmp_abs), &to, sizeof(to));
			if (mprotect(p, page, PROT_READ | PROT_EXEC)) {
				munmap(p, page);
				return 0;
			}
			return (uintptr_t)p;
		}
	}
	return 0;
}

/*
 * The 8 aligned bytes at @f, read and written by single movq instructions
 * (aligned 8-byte accesses are atomic on x86-64), in asm rather than
 * __atomic builtins: under TSan those are instrumented, and libc's code
 * has no shadow memory to record them in.
 */
static uint64_t code_load(uintptr_t f)
{
	uint64_t v;

	__asm__ volatile("movq (%1), %0" : "=r"(v) : "r"(f) : "memory");
	return v;
}

static void code_store(uintptr_t f, uint64_t v)
{
	__asm__ volatile("movq %1, (%0)\n\tmfence" : : "r"(f), "r"(v) : "memory");
}

static int fail(char *why, size_t n, int rc, const char *text)
{
	snprintf(why, n, "%s", text);
	return rc;
}

static int rel32_ok(uintptr_t from, uintptr_t to)
{
	intptr_t d = (intptr_t)(to - (from + JMP_LEN));

	return d >= INT32_MIN && d <= INT32_MAX;
}

int sp_glibc_locks_start(char *why, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), f, to, base;
	uint64_t old, jmp;
	int32_t rel;
	void *libc;

	if (sp_glibc_locks_active())
		return 0;
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	f = libc ? (uintptr_t)dlvsym(libc, "__lll_lock_wait_private", "GLIBC_PRIVATE") : 0;
	if (libc)
		dlclose(libc); /* NOLOAD took a reference */
	if (!f)
		return fail(why, n, -ENOENT, "no __lll_lock_wait_private in libc.so.6");
	to = (uintptr_t)sp_glibc_lock_wait;
	if ((f & 7) || memcmp((const void *)f, lll_code, sizeof(lll_code)))
		return fail(why, n, -ENOTSUP,
			    "__lll_lock_wait_private is not the code of glibc 2.36 on x86-64 "
			    "that syncprof knows");
	if (!rel32_ok(f, to)) {
		to = trampoline(f, to);
		if (!to || !rel32_ok(f, to))
			return fail(why, n, -ENOMEM, "no page within 2 GiB of libc for a jump");
	}
	rel = (int32_t)(intptr_t)(to - (f + JMP_LEN));
	old = code_load(f);
	jmp = (old & ~0xffffffffffull) | 0xe9 | ((uint64_t)(uint32_t)rel << 8);
	base = f & ~(page - 1);
	if (mprotect((void *)base, page, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		snprintf(why, n, "mprotect of libc's code refused (%s: seccomp, SELinux execmod?)",
			 strerror(errno));
		return -EACCES;
	}
	/* One aligned 8-byte store: an entering thread sees the old first
	 * instruction or the whole jump, and +5..+7 keep their bytes. */
	code_store(f, jmp);
	mprotect((void *)base, page, PROT_READ | PROT_EXEC);
	sp_store_release(&active, 1);
	return 0;
}
