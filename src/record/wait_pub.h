/*
 * wait_pub.h - a condition variable's signal, remembered while the watchdog runs
 * (wait_pub.c has the slow path).  Private to src/record.
 */
#ifndef SP_RECORD_WAIT_PUB_H
#define SP_RECORD_WAIT_PUB_H

#include "record.h"

static inline void sp_cond_signalled(const void *cond, const struct sp_site *site, int broadcast)
{
	if (SP_UNLIKELY(sp_load_relaxed(&sp_watch_on)))
		sp_cond_signalled__slowpath(cond, site, broadcast);
}

#endif
