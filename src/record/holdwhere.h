/*
 * holdwhere.h - where the holders of long holds were (holdwhere.c), as
 * holdstate.c's sampler uses it.  Private to src/record.
 */
#ifndef SP_RECORD_HOLDWHERE_H
#define SP_RECORD_HOLDWHERE_H

#include <stdint.h>
#include <sys/types.h>

#include "record/hold.h"

/* A blocked interval's class: an SP_HS_* below SP_HS_FIXED, or
 * SP_HS_FIXED + a system call number. */
#define CLASS_SYSCALL(nr) (SP_HS_FIXED + (int)(nr))

/* The point of this sample for the interval just measured, whose share of
 * each long hold is @ns[i] of hold-state record @rec[i]: a blocked
 * thread's now (unwound from @sysline, its /proc syscall line), a running
 * thread's when its handler answers.  The ticker's thread only. */
void sp_holdwhere_sample(struct sp_hold_pub *p, pid_t tid, int class, const char *sysline,
			 const uint32_t *rec, const uint64_t *ns, int n);

/* An interval of @p waiting for its handler's answer: added at the
 * answer's point, or dropped after a while (or at once with @give_up, or
 * when the thread changed).  The ticker's thread only. */
void sp_holdwhere_collect(struct sp_hold_pub *p, pid_t tid, int give_up);

/* At a reset (under report_lock): later reports subtract these. */
void sp_holdwhere_snapshot(void);

/* holdstate.c's: the key of hold-state record @rec (0: no such record). */
int sp_holdstate_rec_key(uint32_t rec, uint8_t *type, uintptr_t *obj, struct sp_site *holder);

#endif /* SP_RECORD_HOLDWHERE_H */
