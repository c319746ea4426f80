/*
 * unwind.h - the return addresses of the calling thread's stack, and the
 * function that contains a code address, from the unwind tables.
 *
 * One unwinder for every part of the runtime that walks a stack: the
 * frames kept for contended waits and the wrapper skipping (stack.c), the
 * lock libraries' sites (locklib.c), glibc's own locks (glibc_lock.c).
 * See unwind.c for why it is libgcc's unwinder linked into syncprof's
 * libraries rather than glibc's backtrace().  Private to src/record.
 */
#ifndef SYNCPROF_RECORD_UNWIND_H
#define SYNCPROF_RECORD_UNWIND_H

#include <stdint.h>

/*
 * The return addresses of the caller's stack, at most @max, innermost
 * first: frames[0] is the return address into the function that called
 * sp_backtrace() - what glibc's backtrace() stores.  No malloc, no lock
 * of its own; libgcc's unwinder finds the unwind tables through
 * _dl_find_object().  The caller marks its thread busy around it
 * (sp_thread_enter()): a first call runs pthread_once().
 */
int sp_backtrace(uintptr_t *frames, int max);

/* The same, stopping early: after each frame it stores, @more(frames, n,
 * @arg) says whether the walk goes on (0: stop; n is at least 1: n = 0 is
 * its callers' "begin again", stack.c).  A walk costs a table
 * lookup and a CFA program per frame, so a caller that needs only the
 * frames near the top stops there. */
int sp_backtrace_while(uintptr_t *frames, int max,
		       int (*more)(const uintptr_t *frames, int n, void *arg), void *arg);

/* The start of the function that contains @pc, from its unwind tables
 * (no symbols needed); 0 when no table covers it. */
uintptr_t sp_enclosing_function(uintptr_t pc);

#endif
