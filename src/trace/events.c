/*
 * events.c - the event table: event names and argument names, the
 * global and per-event switches, and the one byte per event that emitters
 * read (syncprof__trace_on).
 *
 * Design: a fixed table of SYNCPROF_TRACE_MAX_EVENTS definitions, written
 * under sp_trace_ctl_lock only.  Ids 1..7 are the lock events, defined the
 * same way in every process (format.h; 7, futex_wake, was added within
 * version 1 as a new event name: a reader that does not know it shows a
 * generic event with its EVENT_DEF's names); registered events get ids
 * from 16 upwards, and registering a name again returns its id, so
 * libraries can register independently.  An event may be recorded when a
 * trace file is open, tracing is on and the event is on: that conjunction
 * is computed here, whenever one of its terms changes, into
 * syncprof__trace_on[id], so the emit path tests one byte (one load, one
 * predictable branch when off), and into sp_trace_locks_on, the single
 * flag the probe tests for all lock events.  The stores are relaxed: an
 * emitter sees a change at its next event, which is all the API promises.
 *
 * A new event's definition goes into the open file (file.c) before
 * its flag goes on, so no event reaches a file before its definition.
 *
 * Alternatives considered: swapping function pointers per event (QEMU
 * simpletrace's dstate checks are a load and a branch too, but an indirect
 * call costs more when on); a bitmap (the byte array costs 1 KiB and no
 * shift/mask on the hot path).
 */
#include <errno.h>
#include <string.h>

#include "trace.h"

#define NAME_MAX_LEN 64
#define ARG_MAX_LEN 32

struct event_def {
	char name[NAME_MAX_LEN];
	char args[SP_TRACE_MAX_ARGS][ARG_MAX_LEN];
	uint8_t nargs;
	uint8_t defined;
	uint8_t on;
};

sp_lock_t sp_trace_ctl_lock = SP_LOCK_INIT;
int sp_trace_locks_on;

/* Written under sp_trace_ctl_lock: the events' definitions and switches,
 * the next user event's id, syncprof_trace_enable()'s state. */
static struct {
	struct event_def defs[SP_TRACE_EVENTS];
	int n_user;    /* user events registered: the next id is SP_EV_USER_FIRST + n_user */
	int trace_off; /* syncprof_trace_disable() */
	int initialised;
	const struct sp_trace_events_file *file; /* file.c's hooks, once set up */
} ctl SP_LARGE; /* all zero at start: in .lbss (265 KiB of definitions) */

/* Kept here, with the switches that set it: the emit path's one byte per
 * event (syncprof.h). */
unsigned char syncprof__trace_on[SYNCPROF_TRACE_MAX_EVENTS];

void sp_trace_events_set_file_locked(const struct sp_trace_events_file *file)
{
	ctl.file = file;
}

static int file_open_locked(void)
{
	return ctl.file && ctl.file->open_locked();
}

void sp_trace_flags_update_locked(int file_open)
{
	int any_lock = 0;

	for (unsigned id = 1; id < SP_TRACE_EVENTS; id++) {
		int on = file_open && !ctl.trace_off && ctl.defs[id].defined && ctl.defs[id].on;

		sp_store_relaxed(&syncprof__trace_on[id], (unsigned char)on);
		if (id <= SP_EV_LOCK_LAST)
			any_lock |= on;
	}
	sp_store_relaxed(&sp_trace_locks_on, any_lock);
	sp_unlock_hooks_set(SP_UNLOCK_HOOK_TRACE, any_lock); /* "released" events */
}

static void def_set(unsigned id, const char *name, const char *const *args, unsigned nargs)
{
	struct event_def *d = &ctl.defs[id];

	snprintf(d->name, sizeof(d->name), "%s", name);
	for (unsigned i = 0; i < nargs; i++) {
		if (args && args[i])
			snprintf(d->args[i], sizeof(d->args[i]), "%s", args[i]);
		else
			snprintf(d->args[i], sizeof(d->args[i]), "a%u", i);
	}
	d->nargs = (uint8_t)nargs;
	d->on = 1;
	d->defined = 1;
}

static int def_find_locked(const char *name)
{
	for (unsigned id = 1; id < SP_TRACE_EVENTS; id++)
		if (ctl.defs[id].defined && !strcmp(ctl.defs[id].name, name))
			return (int)id;
	return -ENOENT;
}

void sp_trace_events_init_locked(void)
{
	static const char *const plain[] = { "obj", "site", "func", "line", "type" };
	static const char *const waited[] = { "obj", "site", "func", "line", "type", "wait_ns" };
	static const char *const held[] = { "obj", "site", "func", "line", "type", "hold_ns" };
	static const char *const cond[] = { "obj", "site", "func", "line", "mutex", "wait_ns" };
	static const char *const wake[] = { "obj", "site", "func", "line", "type", "woken" };
	static const char *const state[] = { "tid",	   "obj",	 "running_ns",
					     "preempted_ns", "blocked_ns", "blocked_in" };

	if (ctl.initialised)
		return;
	ctl.initialised = 1;
	def_set(SP_EV_LOCK_WAIT, "lock_wait", plain, 5);
	def_set(SP_EV_LOCK_ACQUIRED, "lock_acquired", waited, 6);
	def_set(SP_EV_LOCK_RELEASED, "lock_released", held, 6);
	def_set(SP_EV_LOCK_TRY_FAILED, "lock_try_failed", plain, 5);
	def_set(SP_EV_COND_WAIT, "cond_wait", cond, 5);
	def_set(SP_EV_COND_WOKEN, "cond_woken", cond, 6);
	def_set(SP_EV_FUTEX_WAKE, "futex_wake", wake, 6);
	def_set(SP_EV_HOLD_STATE, "hold_state", state, 6);
}

int sp_trace_event_def_locked(unsigned id, struct sp_trace_def *out)
{
	if (id == 0 || id >= SP_TRACE_EVENTS || !ctl.defs[id].defined)
		return -ENOENT;
	out->name = ctl.defs[id].name;
	out->nargs = ctl.defs[id].nargs;
	for (unsigned i = 0; i < out->nargs; i++)
		out->args[i] = ctl.defs[id].args[i];
	return 0;
}

/* ---- public API ------------------------------------------------------- */

void syncprof_trace_enable(void)
{
	sp_lock(&sp_trace_ctl_lock);
	ctl.trace_off = 0;
	sp_trace_flags_update_locked(file_open_locked());
	sp_unlock(&sp_trace_ctl_lock);
}

void syncprof_trace_disable(void)
{
	sp_lock(&sp_trace_ctl_lock);
	ctl.trace_off = 1;
	sp_trace_flags_update_locked(file_open_locked());
	sp_unlock(&sp_trace_ctl_lock);
}

int syncprof_trace_register(const char *name, const char *const *arg_names, unsigned nargs)
{
	int id;

	if (!name || !*name || strlen(name) >= NAME_MAX_LEN || nargs > SP_TRACE_MAX_ARGS)
		return -EINVAL;
	for (unsigned i = 0; arg_names && i < nargs; i++)
		if (arg_names[i] && (!*arg_names[i] || strlen(arg_names[i]) >= ARG_MAX_LEN))
			return -EINVAL;
	sp_lock(&sp_trace_ctl_lock);
	sp_trace_events_init_locked();
	id = def_find_locked(name);
	if (id < 0) {
		if (SP_EV_USER_FIRST + ctl.n_user >= SP_TRACE_EVENTS) {
			sp_unlock(&sp_trace_ctl_lock);
			return -ENOSPC;
		}
		id = SP_EV_USER_FIRST + ctl.n_user++;
		def_set((unsigned)id, name, arg_names, nargs);
		/* Into the file before the flag goes on (below). */
		if (ctl.file)
			ctl.file->def_added_locked((unsigned)id);
		sp_trace_flags_update_locked(file_open_locked());
	}
	sp_unlock(&sp_trace_ctl_lock);
	return id;
}

int syncprof_trace_event_id(const char *name)
{
	int id;

	if (!name)
		return -EINVAL;
	sp_lock(&sp_trace_ctl_lock);
	sp_trace_events_init_locked();
	id = def_find_locked(name);
	sp_unlock(&sp_trace_ctl_lock);
	return id;
}

int syncprof_trace_set_event(int id, int on)
{
	int rc = 0;

	sp_lock(&sp_trace_ctl_lock);
	sp_trace_events_init_locked();
	if (id <= 0 || id >= SP_TRACE_EVENTS || !ctl.defs[id].defined)
		rc = -EINVAL;
	else
		ctl.defs[id].on = on != 0;
	sp_trace_flags_update_locked(file_open_locked());
	sp_unlock(&sp_trace_ctl_lock);
	return rc;
}
