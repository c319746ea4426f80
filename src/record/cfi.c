/*
 * cfi.c - CFI rows of return addresses: where a frame's caller is, from
 * the frame's return address, its rsp after the return and its rbp,
 * without an unwind (stack.c's wrapper skipping and --skip-frames, and the
 * hold sampler's stacks of other threads).
 *
 * Design.  A row says, over a range of code, "CFA = rsp + N" or "CFA =
 * rbp + N", and where the caller's rbp was saved; the return address is
 * at CFA - 8 (x86-64).  One step through a row (sp_cfi_step()) is two
 * loads, where libgcc's unwinder finds the frame's FDE and runs its CFA
 * program.  Rows come from libdw (.eh_frame, else .debug_frame): computed
 * at start-up for the --skip ranges (stack.c, which keeps them sorted in
 * its set-up tables), or learned at run time, one return address at a
 * time, by the learner thread below.  Rules that are not of that form
 * (expressions, other registers) make no row: the caller unwinds instead.
 *
 * Split from stack.c (2026-11-28), which keeps the sites and stacks of
 * lock calls and the wrapper ranges; this file holds what reads the CFI
 * and the learner, so that neither grows past what one reads at once.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/libdw.h"
#include "record/cfi.h"
#include "record/record.h"

#ifdef SYNCPROF_HAVE_LIBDW
/* "CFA = reg + off" with reg rsp (7) or rbp (6); -1 for anything else. */
static int cfa_rule(Dwarf_Frame *frame, struct sp_cfi_row *row)
{
	Dwarf_Op *ops;
	size_t nops;
	unsigned reg;
	int64_t off;

	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1)
		return -1;
	if (ops[0].atom == DW_OP_bregx) {
		reg = (unsigned)ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return -1;
	}
	if ((reg != 6 && reg != 7) || off < 8 || off > SP_CFI_MAX_FRAME)
		return -1;
	row->cfa_rbp = reg == 6;
	row->cfa_off = (int32_t)off;
	return 0;
}

/* The rule of register @reg in @frame: the caller's value kept (same
 * value), lost (undefined), or saved at CFA + *@off; -1 for anything
 * else (an expression, another register). */
enum { REG_SAME, REG_UNDEFINED, REG_AT_CFA };

static int reg_rule(Dwarf_Frame *frame, int reg, int32_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (dwarf_frame_register(frame, reg, mem, &ops, &nops))
		return -1;
	if (!nops)
		return ops ? REG_UNDEFINED : REG_SAME;
	if (ops[0].atom != DW_OP_call_frame_cfa || nops > 2 ||
	    (nops == 2 && ops[1].atom != DW_OP_plus_uconst))
		return -1;
	*off = nops == 2 ? (int32_t)(int64_t)ops[1].number : 0;
	return REG_AT_CFA;
}

/* Where the caller's rbp is: unchanged, or saved at CFA + off. */
static int rbp_rule(Dwarf_Frame *frame, struct sp_cfi_row *row)
{
	int r = reg_rule(frame, 6, &row->rbp_off);

	row->rbp_saved = r == REG_AT_CFA;
	return r == REG_SAME || r == REG_AT_CFA ? 0 : -1;
}

/* Where the return address is: at CFA - 8, or nowhere (undefined: the
 * outermost frame, clone3's child or _start); -1 for anything else. */
static int ra_rule(Dwarf_Frame *frame, struct sp_cfi_row *row)
{
	int32_t off = 0;
	int r = reg_rule(frame, 16, &off);

	row->end = r == REG_UNDEFINED;
	return row->end || (r == REG_AT_CFA && off == -8) ? 0 : -1;
}

int sp_cfi_row_at(Dwarf_CFI *cfi, Dwarf_Addr bias, uintptr_t pc, uintptr_t hi,
		  struct sp_cfi_row *row)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr start, end;
	int rc = -1;

	row->lo = pc;
	row->hi = pc + 1;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame))
		return -1;
	if (dwarf_frame_info(frame, &start, &end, NULL) >= 0 && end + bias > pc) {
		row->hi = end + bias < hi ? (uintptr_t)(end + bias) : hi;
		rc = cfa_rule(frame, row) || rbp_rule(frame, row) || ra_rule(frame, row) ? -1 : 0;
	}
	free(frame);
	return rc;
}

Dwfl *sp_cfi_session_open(void)
{
	static const Dwfl_Callbacks cb = {
		.find_elf = sp_dw_proc_find_elf,
		.find_debuginfo = sp_dw_build_id_find_debuginfo, /* no network at start-up */
	};
	Dwfl *dwfl = dwfl_begin(&cb);

	if (dwfl && (dwfl_linux_proc_report(dwfl, getpid()) ||
		     dwfl_report_end(dwfl, NULL, NULL))) {
		dwfl_end(dwfl);
		return NULL;
	}
	return dwfl;
}
#endif

/*
 * --skip-frames N: the CFA rules of the return addresses on the way up,
 * learned.  Any function can be the Nth caller, so they cannot be
 * computed at start-up as the --skip ranges' rows are, and computing one
 * on the lock path would take libdw (malloc, locks) there.  So a call
 * whose return addresses have no rule yet unwinds (as every call did
 * before), and asks for their rules: each address goes into wanted[] (a
 * CAS on an empty slot) and the learner thread, woken by a futex, computes
 * its row with libdw (sp_cfi_row_at(), at the call instruction) and publishes
 * it in learned[], an open-addressing table written by the learner only
 * (fields, then the pc with a release store) and read lock-free.  Once a
 * call's addresses are learned, it steps up through them like a --skip
 * wrapper (sp_cfi_step()) with the per-thread wrap_cache[] in front: no
 * unwind.  An address whose rule is unusable (no CFI, an expression rule)
 * is learned as such and keeps unwinding.  The learner runs with the
 * thread marked busy (its own lock calls, libdw's, are not recorded); it
 * is started at start-up when skip_frames is set, or lock order with
 * frames=N (stack.c, walk_learned(): a new edge's stacks), and loads libdw
 * itself at its first request (it ends then without).  A fork child keeps
 * the rules learned before the fork (same mappings) but not the thread:
 * its own learner starts at its first walk (sp_cfi_learner_restart()),
 * outside the atfork handler, as the hold ticker does.
 * A row also says where the return address is: at CFA - 8, or undefined in
 * the outermost frame (clone3's child, _start), where a walk ends as
 * libgcc's does; any other rule makes no row.
 */
#define LEARNED 4096 /* return addresses; 40 bytes each, pages touched as used */
#define LEARNED_PROBES 16
#define WANTED 256

struct learned_rule {
	uintptr_t pc; /* 0: empty; published last (release) */
	struct sp_cfi_row row;
	int usable;
	uintptr_t eh_frame; /* of the object the rule was read from */
};
/* Written by the learner thread (its rules, published pc last) and by
 * the threads that want a rule (wanted[], and the futex word they bump). */
static struct {
	struct learned_rule learned[LEARNED];
	uintptr_t wanted[WANTED];
	uint32_t wanted_seq;
	int running, started;
	int restart; /* in a fork child whose parent had a learner */
} learner SP_LARGE;

static size_t pc_hash(uintptr_t pc)
{
	return (size_t)((pc * 0x9E3779B97F4A7C15ull) >> 40);
}

/* The unwind tables of the object that holds the call before return
 * address @pc (_dl_find_object(): lock-free, no malloc), or 0. */
static uintptr_t eh_frame_of(uintptr_t pc)
{
	struct dl_find_object d;

	return _dl_find_object((void *)(pc - 1), &d) ? 0 : (uintptr_t)d.dlfo_eh_frame;
}

/* A rule is used only while the object it was read from is still the one
 * at its address: after a dlclose(), another library loaded there has
 * other tables (its rules would read the wrong stack slots). */
int sp_cfi_learned(uintptr_t pc, const struct sp_cfi_row **row)
{
	size_t h = pc_hash(pc);

	for (unsigned i = 0; i < LEARNED_PROBES; i++) {
		const struct learned_rule *l = &learner.learned[(h + i) & (LEARNED - 1)];
		uintptr_t p = sp_load_acquire(&l->pc);

		if (!p)
			return 0;
		if (p == pc) {
			*row = &l->row;
			return l->usable && eh_frame_of(pc) == l->eh_frame ? 1 : -1;
		}
	}
	return 0;
}

void sp_cfi_learn(uintptr_t pc)
{
	size_t h = pc_hash(pc);

	if ((!sp_load_relaxed(&learner.running) && !sp_cfi_learner_restart()) || pc < 4096)
		return;
	for (unsigned i = 0; i < 4; i++) {
		uintptr_t *w = &learner.wanted[(h + i) & (WANTED - 1)], none = 0;

		if (sp_load_relaxed(w) == pc)
			return;
		if (__atomic_compare_exchange_n(w, &none, pc, 0, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED)) {
			__atomic_add_fetch(&learner.wanted_seq, 1, __ATOMIC_RELEASE);
			sp_futex(&learner.wanted_seq, FUTEX_WAKE_PRIVATE, 1, NULL);
			return;
		}
	}
}

#ifdef SYNCPROF_HAVE_LIBDW
/* The learner's only writer side: publish @pc's rule. */
static void learned_put(uintptr_t pc, const struct sp_cfi_row *row, int usable)
{
	size_t h = pc_hash(pc);
	uintptr_t eh_frame = eh_frame_of(pc);

	for (unsigned i = 0; i < LEARNED_PROBES; i++) {
		struct learned_rule *l = &learner.learned[(h + i) & (LEARNED - 1)];

		if (l->pc == pc)
			return;
		if (!l->pc) {
			l->row = *row;
			l->usable = usable && eh_frame;
			l->eh_frame = eh_frame;
			sp_store_release(&l->pc, pc);
			return;
		}
	}
}

/* .eh_frame, else .debug_frame. */
int sp_cfi_learn_one(Dwfl *dwfl, uintptr_t pc, struct sp_cfi_row *row)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc - 1);
	Dwarf_Addr bias = 0;
	Dwarf_CFI *cfi;

	memset(row, 0, sizeof(*row));
	if (!mod)
		return -1;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && !sp_cfi_row_at(cfi, bias, pc - 1, pc, row))
		return 0;
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	return cfi && !sp_cfi_row_at(cfi, bias, pc - 1, pc, row) ? 0 : -1;
}

/* Whether @dwfl's module at @pc is the object loaded there now.  A
 * session reported before a dlopen() can have a module over the new
 * object's addresses, one that was mapped there then: its CFI is the
 * wrong one (a rule learned from it unusable, or usable and wrong).  Seen
 * in test_stack_walk under ASan, 4 runs in 150 with another test beside
 * it: a module reported at 0x7f3305800000 over a library loaded at
 * 0x7f3305ea7000.  Unknown (no
 * object found, as for the vDSO): yes. */
static int module_current(Dwfl *dwfl, uintptr_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc - 1);
	struct dl_find_object d;
	Dwarf_Addr start = 0;

	if (!mod)
		return 0;
	if (_dl_find_object((void *)(pc - 1), &d))
		return 1;
	dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	return start == (Dwarf_Addr)(uintptr_t)d.dlfo_map_start;
}

static void *learner_main(void *arg)
{
	Dwfl *dwfl = NULL;
	uint32_t seen = 0;

	(void)arg;
	sp_thread_enter(); /* for good: its lock calls (libdw's) are not recorded */
	for (;;) {
		uint32_t seq = sp_load_acquire(&learner.wanted_seq);

		if (seq == seen) {
			sp_futex(&learner.wanted_seq, FUTEX_WAIT_PRIVATE, seq, NULL);
			continue;
		}
		/* libdw (~2 ms of CPU to load) at the first request, here, not in
		 * the start-up of every process that might ask */
		if (!seen && !sp_libdw_present()) {
			sp_store_release(&learner.running, 0);
			return NULL;
		}
		seen = seq;
		for (unsigned i = 0; i < WANTED; i++) {
			uintptr_t pc = __atomic_exchange_n(&learner.wanted[i], 0, __ATOMIC_ACQUIRE);
			const struct sp_cfi_row *known;
			struct sp_cfi_row row;

			if (!pc || sp_cfi_learned(pc, &known))
				continue;
			if (dwfl && !module_current(dwfl, pc)) {
				dwfl_end(dwfl); /* a module loaded since: report anew */
				dwfl = NULL;
			}
			if (!dwfl)
				dwfl = sp_cfi_session_open();
			if (!dwfl)
				continue;
			if (sp_cfi_learn_one(dwfl, pc, &row))
				learned_put(pc, &row, 0);
			else
				learned_put(pc, &row, 1);
		}
	}
	return NULL;
}

int sp_cfi_learner_start(void)
{
	int rc;

	if (__atomic_exchange_n(&learner.started, 1, __ATOMIC_ACQ_REL))
		return 0;
	sp_store_release(&learner.running, 1); /* before its first request */
	rc = sp_start_detached(learner_main, 256 * 1024, "syncprof-cfi");
	if (rc)
		sp_store_release(&learner.running, 0);
	return rc;
}
#else
int sp_cfi_learner_start(void)
{
	return -ENOSYS;
}
#endif

int sp_cfi_learner_on(void)
{
	return sp_load_relaxed(&learner.running);
}

/* After fork(), in the child (one thread): the parent's learner is not
 * here; its requests, answered by nobody, go.  Its rules stay. */
void sp_cfi_fork_child(void)
{
	if (!sp_load_relaxed(&learner.started))
		return;
	memset(learner.wanted, 0, sizeof(learner.wanted));
	sp_store_relaxed(&learner.wanted_seq, 0);
	sp_store_relaxed(&learner.running, 0);
	sp_store_relaxed(&learner.started, 0);
	sp_store_release(&learner.restart, 1);
}

int sp_cfi_learner_restart(void)
{
	if (!sp_load_relaxed(&learner.restart) ||
	    !__atomic_exchange_n(&learner.restart, 0, __ATOMIC_ACQ_REL))
		return 0;
	return !sp_cfi_learner_start();
}

int sp_cfi_step(const struct sp_cfi_row *r, uintptr_t *pc, uintptr_t *cfa, uintptr_t *fp)
{
	uintptr_t base, up;

	if (r->end)
		return -1;
	base = r->cfa_rbp ? *fp : *cfa;
	if (base < *cfa || base - *cfa > SP_CFI_MAX_FRAME)
		return -1;
	up = base + (uintptr_t)(intptr_t)r->cfa_off;
	if (r->rbp_saved)
		*fp = *(const uintptr_t *)(up + (uintptr_t)(intptr_t)r->rbp_off);
	*pc = *(const uintptr_t *)(up - 8);
	*cfa = up;
	return 0;
}
