/*
 * flags.c - changes of the flag word that every probe reads.
 *
 * syncprof__enabled itself is defined in src/runtime/lifecycle.c, next to
 * the constructor, so that a static link of instrumented code (which
 * refers to the word) always pulls in the start-up code; the bits above
 * the public ones are changed here, by the subsystems that need unlock
 * calls (hold tracking, trace).
 */
#include "base/flags.h"

/*
 * Unlock calls of instrumented code reach the library only while some
 * feature needs them (SYNCPROF__UNLOCK_HOOKS); each such feature holds one
 * reason bit in the word itself (SP_FLAG_REASON), updated together with
 * SYNCPROF__UNLOCK_HOOKS in one compare-and-swap.
 */
void sp_unlock_hooks_set(int reason, int on)
{
	int old = sp_load_relaxed(&syncprof__enabled), now;
	const int reasons =
		SP_FLAG_REASON(SP_UNLOCK_HOOK_TRACE | SP_UNLOCK_HOOK_HOLD | SP_UNLOCK_HOOK_ORDER);

	do {
		now = on ? old | SP_FLAG_REASON(reason) : old & ~SP_FLAG_REASON(reason);
		now = now & reasons ? now | SYNCPROF__UNLOCK_HOOKS : now & ~SYNCPROF__UNLOCK_HOOKS;
	} while (!__atomic_compare_exchange_n(&syncprof__enabled, &old, now, 1, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

