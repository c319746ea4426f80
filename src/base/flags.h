/*
 * flags.h - the flag word every probe reads (flags.c): syncprof__enabled
 * (declared in syncprof.h) holds the public bits and, above them, the
 * reasons that unlock calls must reach the library.  Private to
 * libsyncprof.
 */
#ifndef SP_BASE_FLAGS_H
#define SP_BASE_FLAGS_H

#include "base/base.h"

/* Unlock calls must reach the library while any reason is set. */
#define SP_UNLOCK_HOOK_TRACE 1
#define SP_UNLOCK_HOOK_HOLD 2
#define SP_UNLOCK_HOOK_ORDER 4 /* lock order: held lists (and off the hold-only fast path) */
void sp_unlock_hooks_set(int reason, int on);
/*
 * The reasons are also kept in syncprof__enabled, above its public bits,
 * so that one load tells a probe both whether profiling is on and which
 * hooks run: the preload's fast paths test the whole word against
 * SP_FLAGS_ON (profiling, nothing else) and SP_FLAGS_HOLD (profiling and
 * hold tracking only).  (Read through the GOT: a hidden alias would miss
 * the copy that a copy relocation makes in an instrumented executable.)
 */
#define SP_FLAG_REASON(r) ((r) << 8)
#define SP_FLAGS_ON SYNCPROF__PROFILING
#define SP_FLAGS_HOLD                                                                 \
	(SYNCPROF__PROFILING | SYNCPROF__UNLOCK_HOOKS | SP_FLAG_REASON(SP_UNLOCK_HOOK_HOLD))
/* Profiling, hold tracking and lock order only: the lock-order fast paths
 * (preload.c, with_entry_order(); probe.c, fast_try()), which add a
 * blocking call's edges before the try. */
#define SP_FLAGS_ORDER (SP_FLAGS_HOLD | SP_FLAG_REASON(SP_UNLOCK_HOOK_ORDER))

/*
 * "Is profiling off", the one test of every probe (probe.c, probe_wait.c,
 * preload.c; instrument.h, a public header, makes it inline itself): the
 * flag word now (one relaxed load), and whether a word @f loaded once has
 * profiling off - the lock call then goes straight to libc.
 */
#define SP_FLAGS_NOW() sp_load_relaxed(&syncprof__enabled)
#define SP_FLAGS_OFF(f) SP_UNLIKELY(!((f) & SYNCPROF__PROFILING))
#define SP_PROFILING_OFF() SP_FLAGS_OFF(SP_FLAGS_NOW())

#endif /* SP_BASE_FLAGS_H */
