/*
 * ranges.h - whether a code address lies in a wrapper that sites step over
 * (ranges.c has the ranges, stack.c fills them).  Private to src/record and src/report (collect.c).
 */
#ifndef SP_RECORD_RANGES_H
#define SP_RECORD_RANGES_H

#include "record.h"

/* Whether @pc lies in one of the @n sorted, disjoint ranges @r (binary
 * search): the wrappers' here, the lock libraries' (locklib.c). */
static inline int sp_range_has(const struct sp_range *r, unsigned n, uintptr_t pc)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (pc < r[mid].lo)
			hi = mid;
		else if (pc >= r[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

static inline int sp_pc_skipped(uintptr_t pc)
{
	return sp_range_has(sp_skip_ranges, sp_load_acquire(&sp_skip_n), pc);
}

#endif
