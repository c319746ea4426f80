/*
 * trace_lock.c - lock events: what the probe emits into the trace.
 *
 * Design: the probe (probe.h, probe.c) tests one flag, sp_trace_locks_on,
 * with an unlikely branch, and calls in here only when some lock event is
 * on; each event then checks its own flag.  An event carries the lock
 * object, the call site and the lock type; acquired and cond_woken carry
 * the wait in nanoseconds (0 for an uncontended acquisition), released
 * carries the hold when hold tracking supplies it (6 arguments) and omits
 * it otherwise (5 arguments).
 *
 * A call site is named in the file without any work here: for
 * instrumented sites the arguments are the addresses of the __FILE__ and
 * __func__ strings and the line, and the writer thread copies each string
 * into the file once (trace_file.c); for interposed sites the argument is
 * the return address, which readers resolve through the MAPS records.
 *
 * Thread ids and names come with the per-thread buffer (trace_buffer.c).
 */
#include "trace.h"

static SP_TLS uint64_t tls_cond_mutex; /* mutex of the cond wait in progress */

void sp_trace_lock_event(int ev, const void *obj, uint64_t type, const struct sp_site *site,
			 uint64_t ns, int has_ns)
{
	uint64_t a[SP_TRACE_MAX_ARGS];

	if (!sp_load_relaxed(&syncprof__trace_on[ev]))
		return;
	a[SP_LA_OBJ] = (uint64_t)(uintptr_t)obj;
	if (site->file) {
		a[SP_LA_SITE] = (uint64_t)(uintptr_t)site->file;
		a[SP_LA_FUNC] = (uint64_t)(uintptr_t)site->func;
		a[SP_LA_LINE] = site->line ? site->line : 1;
	} else {
		a[SP_LA_SITE] = site->pc;
		a[SP_LA_FUNC] = 0;
		a[SP_LA_LINE] = 0;
	}
	a[SP_LA_TYPE] = type;
	a[SP_LA_NS] = ns;
	syncprof_trace_emit((unsigned)ev, has_ns ? 6 : 5, a);
}

/*
 * A condition wait releases its mutex and takes it again: the cond events
 * carry the mutex in place of the type, so readers see the hold end and
 * restart.  The mutex is remembered in TLS between the two (the probe's
 * wake-up path does not have it).
 */
void sp_trace_cond_wait(const void *cond, const void *mutex, const struct sp_site *site)
{
	tls_cond_mutex = (uint64_t)(uintptr_t)mutex;
	sp_trace_lock_event(SP_EV_COND_WAIT, cond, tls_cond_mutex, site, 0, 0);
}

void sp_trace_cond_woken(const void *cond, const struct sp_site *site, uint64_t wait_ns)
{
	sp_trace_lock_event(SP_EV_COND_WOKEN, cond, tls_cond_mutex, site, wait_ns, 1);
}
