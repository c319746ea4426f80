/*
 * table.h - an entry's maxima after a reset (table.c keeps the epoch).  Private to src/record.
 */
#ifndef SP_RECORD_TABLE_H
#define SP_RECORD_TABLE_H

#include "record.h"

/*
 * Owner only, before it updates a maximum: a reset (which bumps
 * sp_reset_epoch) is applied to an entry lazily, by zeroing its maxima
 * the first time its owner writes one after the reset; reports read the
 * maxima of entries with a stale epoch as 0 (collect.c).
 */
static inline void sp_entry_refresh_epoch(struct sp_entry_cold *c)
{
	uint32_t epoch = sp_load_relaxed(&sp_reset_epoch);

	if (__builtin_expect(c->epoch != epoch, 0)) {
		sp_store_relaxed(&c->wait_max_ns, 0);
		sp_store_relaxed(&c->hold_max_ns, 0);
		sp_store_release(&c->epoch, epoch);
	}
}

#endif
