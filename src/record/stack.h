/*
 * stack.h - the site of an interposed call, inline where its return address
 * was checked before (stack.c finds the rest).  Private to src/record and preload/.
 */
#ifndef SP_RECORD_STACK_H
#define SP_RECORD_STACK_H

#include "ranges.h"

/* The site pc for an interposed call returning to @ret: @ret unless it lies
 * in a lock wrapper (or --skip-frames is set), then the first caller
 * outside the wrappers. */
static inline uintptr_t sp_site_pc(uintptr_t ret, uintptr_t cfa, uintptr_t fp)
{
	uintptr_t *slot;

	if (SP_UNLIKELY(!sp_load_relaxed(&sp_skip_n)))
		return ret;
	if (SP_UNLIKELY(sp_load_relaxed(&sp_skip_frames)))
		return sp_site_pc__slowpath(ret, cfa, fp);
	slot = &sp_site_ok[(ret >> 2) & (SP_SITE_CACHE - 1)];
	if (SP_LIKELY(*slot == (ret ^ sp_load_relaxed(&sp_site_gen))))
		return ret;
	/* Not known: searched out of line, wrappers' callers cached there. */
	return sp_site_pc__slowpath(ret, cfa, fp);
}

#endif
