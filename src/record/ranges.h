/*
 * ranges.h - whether a code address lies in a wrapper that sites step over
 * (ranges.c has the ranges, stack.c fills them).  Private to src/record and src/report (collect.c).
 */
#ifndef SP_RECORD_RANGES_H
#define SP_RECORD_RANGES_H

#include "record.h"

static inline int sp_pc_skipped(uintptr_t pc)
{
	unsigned lo = 0, hi = sp_load_acquire(&sp_skip_n);

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (pc < sp_skip_ranges[mid].lo)
			hi = mid;
		else if (pc >= sp_skip_ranges[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

#endif
