/*
 * unwind.c - stack walks with libgcc's unwinder, linked into syncprof's
 * own libraries.
 *
 * Design.  glibc's backtrace() reaches libgcc's unwinder in libgcc_s.so.1,
 * which it dlopen()s at its first call.  A first call inside a lock call
 * could deadlock (dlopen takes the loader's lock and mallocs, and the lock
 * waited for may be malloc's), so start-up used to call it once to load
 * libgcc_s: in a C program without C++ that is the dlopen of one more
 * library and its constructor (CPUID, which traps to the hypervisor on a
 * VM), about 1 ms of each profiled process's start-up on the 2-core CI
 * machine (issue 25, "Per process").
 *
 * Instead the shared libraries link libgcc's unwinder statically
 * (-static-libgcc: libgcc_eh.a) and keep it out of their dynamic symbol
 * tables (--exclude-libs), so this copy is private: the program's own
 * C++ exceptions still go through libgcc_s, and nothing is loaded at run
 * time.  The unwinder finds each frame's tables with _dl_find_object()
 * (glibc 2.35 and later): no malloc, no loader lock.  Its first call runs
 * pthread_once() for its register table, so start-up still walks once
 * (stack.c), outside any lock call.  libsyncprof.a leaves the unwinder to
 * the program's link (libgcc_s or libgcc_eh, as for any C code).
 *
 * Limits: frames of code whose tables were registered at run time
 * (__register_frame, some JITs) are known to the program's libgcc_s only;
 * a walk stops there, as it stops at code without unwind tables.
 */
#include <unwind.h>

#include "base/base.h"
#include "record/unwind.h"

struct walk {
	uintptr_t *frames;
	int n, max;
	int skipped;	/* the frame of sp_backtrace() itself */
	uintptr_t cfa;	/* of the last frame stored */
	int (*more)(const uintptr_t *frames, int n, void *arg);
	void *arg;
};

static _Unwind_Reason_Code step(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t ip = (uintptr_t)_Unwind_GetIP(ctx);
	uintptr_t cfa = (uintptr_t)_Unwind_GetCFA(ctx);

	if (!w->skipped) {
		w->skipped = 1;
		return _URC_NO_REASON;
	}
	/* The end of the chain, or a frame that did not move: stop. */
	if (!ip || (w->n > 0 && ip == w->frames[w->n - 1] && cfa == w->cfa))
		return _URC_END_OF_STACK;
	w->frames[w->n++] = ip;
	w->cfa = cfa;
	if (w->n == w->max || (w->more && !w->more(w->frames, w->n, w->arg)))
		return _URC_END_OF_STACK;
	return _URC_NO_REASON;
}

/* Inlined into each entry point, so that the frame skipped is its own. */
static SP_ALWAYS_INLINE int walk(uintptr_t *frames, int max,
				 int (*more)(const uintptr_t *, int, void *), void *arg)
{
	struct walk w = { .frames = frames, .max = max, .more = more, .arg = arg };

	if (max <= 0)
		return 0;
	_Unwind_Backtrace(step, &w);
	return w.n;
}

SP_NOINLINE int sp_backtrace(uintptr_t *frames, int max)
{
	return walk(frames, max, NULL, NULL);
}

SP_NOINLINE int sp_backtrace_while(uintptr_t *frames, int max,
				   int (*more)(const uintptr_t *frames, int n, void *arg),
				   void *arg)
{
	return walk(frames, max, more, arg);
}

uintptr_t sp_enclosing_function(uintptr_t pc)
{
	return pc ? (uintptr_t)_Unwind_FindEnclosingFunction((void *)pc) : 0;
}
