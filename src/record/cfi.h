/*
 * cfi.h - CFI rows of return addresses (cfi.c): one step from a frame to
 * its caller without an unwind, rows read with libdw, and the learner
 * thread that reads them for return addresses met at run time.
 * Private to src/record.
 */
#ifndef SYNCPROF_RECORD_CFI_H
#define SYNCPROF_RECORD_CFI_H

#include <stdint.h>

#include "base/libdw.h"

/* A frame is smaller than this: a CFA further up is wrong. */
#define SP_CFI_MAX_FRAME (64 * 1024)

/*
 * One CFI row: over [lo, hi), CFA = (cfa_rbp ? rbp : rsp) + cfa_off, and
 * the caller's rbp is at CFA + rbp_off when rbp_saved (else unchanged).
 */
struct sp_cfi_row {
	uintptr_t lo, hi;
	int32_t cfa_off, rbp_off;
	uint8_t cfa_rbp, rbp_saved;
	uint8_t end; /* the return address is undefined: the outermost frame */
};

/*
 * One step up through the row @r of return address @*pc: with the frame's
 * rsp after the call returns @*cfa and its rbp @*fp, to the caller's.  -1
 * when the rule points outside the frame, or the frame is the outermost
 * (r->end).  Reads the stack: @r must be the row of @*pc.
 */
int sp_cfi_step(const struct sp_cfi_row *r, uintptr_t *pc, uintptr_t *cfa, uintptr_t *fp);

/* The learned rule of return address @pc: 1 and *@row, 0 unknown, -1
 * known unusable, or read from an object no longer at that address.  Any
 * thread, lock-free (and async-signal-safe: _dl_find_object()). */
int sp_cfi_learned(uintptr_t pc, const struct sp_cfi_row **row);

/* Ask the learner for the rule of @pc: a no-op without a learner, or when
 * it was asked already.  Any thread; a futex wake when it asks. */
void sp_cfi_learn(uintptr_t pc);

/* Start the learner thread (once; it loads libdw itself at its first
 * request, and ends then without it).  0, or a negative errno. */
int sp_cfi_learner_start(void);

/* Whether a learner runs. */
int sp_cfi_learner_on(void);

/* fork(): the child forgets the parent's learner thread (atfork child
 * handler); its first walk then starts its own: 1 when it did. */
void sp_cfi_fork_child(void);
int sp_cfi_learner_restart(void);

#ifdef SYNCPROF_HAVE_LIBDW
/* A libdw session of this process's modules, or NULL. */
Dwfl *sp_cfi_session_open(void);

/* The row of @pc (a biased address) in @cfi, clipped to [pc, hi); 0, or
 * -1 with row->hi the next address to try. */
int sp_cfi_row_at(Dwarf_CFI *cfi, Dwarf_Addr bias, uintptr_t pc, uintptr_t hi,
		  struct sp_cfi_row *row);

/* The rule at the call before return address @pc, from the CFI of its
 * module in @dwfl; 0 when usable. */
int sp_cfi_learn_one(Dwfl *dwfl, uintptr_t pc, struct sp_cfi_row *row);
#endif

#endif
