/*
 * collect.h - the live half of the report layer (collect.c): rows from the
 * recording threads of this process.  Private to src/report and
 * src/runtime; the only header of src/report that includes src/record.
 */
#ifndef SP_REPORT_COLLECT_H
#define SP_REPORT_COLLECT_H

#include "record/lockorder.h"
#include "record/record.h"
#include "report/profile.h"

/*
 * Merge every thread and the retired aggregate into one row per (site,
 * object, type) in @out (which it initialises), with the blame records
 * attached when @with_blame.  Caller serialises with resets.
 * Return: 0 or -ENOMEM (then @out is empty).
 */
int sp_collect(struct sp_rows *out, int with_blame);

/*
 * The lock-order cycles found so far, net of the last reset, and the
 * graph's counts, into @p->order (nothing when lock order is off).
 * Caller serialises with resets.  Return: 0 or -ENOMEM.
 */
int sp_collect_order(struct sp_profile *p);

/*
 * The name and creation site of the lock of each per-object row of @p
 * (record/lockname.c), and the count of those not kept; after shaping
 * (only the rows kept are looked up), before sp_profile_resolve().
 */
void sp_collect_names(struct sp_profile *p);

/*
 * The threads' time account into @p->account (record/account.c): every
 * thread of /proc/self/task but the profiler's own ("syncprof-*"), each
 * matched to its record (sync_wait, registration time), plus the exited
 * threads the registry kept.  Not net of a reset (account.reset says the
 * rows are).  Reads /proc: report path only.  Return: 0 or -ENOMEM (a
 * kernel without schedstat is not an error: state UNAVAILABLE).
 */
int sp_collect_account(struct sp_profile *p);

#endif
