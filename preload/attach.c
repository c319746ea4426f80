/*
 * attach.c - 'syncprof attach PID' inside the target: the lock calls of a
 * running program redirected to the preload library's shims by rewriting
 * GOT slots, and put back at detach.
 *
 * How it gets here.  The CLI (tools/syncprof/inject.c) stops one thread of
 * the target with ptrace at a system-call boundary, makes it call libc's
 * dlopen() on libsyncprof-preload.so, then syncprof__attach_start(); at
 * the end syncprof__attach_stop(REQUEST) and, once the CLI has read the
 * report out of syncprof__attach_box, syncprof__attach_release().  Loaded
 * by dlopen(), the library does not interpose (libc's definitions come
 * first in the global scope), so preload.c's constructor only notes that
 * start-up must wait (sp_attach_loaded(), sp_runtime_deferred).
 *
 * Redirection.  Every loaded object but this library and the dynamic
 * linker calls pthread_mutex_lock & co. through its GOT: a JUMP_SLOT
 * (lazy or bound PLT calls) or a GLOB_DAT relocation (-fno-plt code,
 * addresses taken).  For each such relocation whose symbol is one of the
 * shims (preload.c's sp_attach_shims) the slot is rewritten to the shim
 * with one aligned 8-byte store, so a thread calling through it at that
 * moment gets either the real function or the shim, both correct.  Slots
 * on pages that the dynamic linker made read-only (PT_GNU_RELRO, rounded
 * as glibc rounds it) are made writable for the store and read-only
 * again.  Each rewrite is recorded (slot, old value, shim) in an mmap'd
 * table.  A slot that still held the lazy-binding stub gets the stub back
 * at detach and binds again on its next call.  pthread_cond_* slots bound
 * to glibc's old GLIBC_2.2.5 condition variables are left alone (the shims
 * call the current ones).
 *
 * Objects loaded later.  A thread of ours ("syncprof-attach") looks at
 * dl_iterate_phdr()'s load count every RESCAN_MS and redirects the new
 * objects.  Wrapping dlopen() instead would change the caller dlopen()
 * sees (its RUNPATH, $ORIGIN and RTLD_NEXT are the caller's), so it is not
 * done.  A lock call made by a new object in the first RESCAN_MS goes
 * unrecorded.
 *
 * Detach.  Profiling off first would leave calls in flight either way; so
 * the order is: put back every slot that still holds our shim (inside
 * dl_iterate_phdr(), which holds the loader's lock, and only for objects
 * still loaded: an unloaded object's slots are gone; a rescan after this
 * sees attached == 0 and patches nothing), then profiling off.  A call already inside a shim finishes there (the
 * library is never unloaded: -z nodelete, and dlclose() is not called);
 * an unlock whose lock was taken before attach, or a lock taken through
 * a shim and released after detach, is harmless: unlock hooks are only on
 * with hold tracking, which attach does not turn on by default, and hold.c
 * ignores a release it has no record of.  The statistics stay, so the
 * report taken at detach covers the whole session, and a later attach
 * resets them (sp_runtime_attach()).
 *
 * The report.  Rendering and naming the sites (libdw reads debug
 * information: up to 1.5 s the first time) would keep the CLI's stopped
 * thread stopped; so syncprof__attach_stop() hands the request to the
 * rescan thread and returns.  That thread renders into memory, stores the
 * result in syncprof__attach_box (control_wire.h; DONE stored last, with
 * release order), closes libdw's session (no file of ours stays open) and
 * ends; syncprof__attach_release() frees the bytes and joins it.
 *
 * fork().  A child forked while attached inherits the redirected slots,
 * profiling on, and none of our threads nor the CLI: nobody would report
 * it.  So the child puts the slots back and switches profiling off before
 * it returns from fork() (the lifecycle's fork handler calls attach_fork_*
 * through sp_attach_fork_hooks).  Not with dl_iterate_phdr(), as detach
 * does: a thread of the parent that fork() left behind may have held the
 * loader's lock (C++ exception unwinding takes it), so the child walks the
 * table alone - patch_lock, held across fork(), makes it whole - and puts
 * back each slot whose page is still mapped (mincore()) and that still
 * holds our shim (the slots of an object unloaded while attached are not
 * in its memory any more).  A slot missed would still be harmless: its
 * shim forwards, profiling off.  The child runs as it would have without
 * attach, and a later attach to it works as to any process.
 *
 * Costs.  The slots are found by walking every relocation of every object
 * once per attach (and per rescan that finds a new object); see
 * docs/attach.md for the stop times measured.  After detach: this library
 * and its dependencies stay mapped, one thread record per thread that was
 * profiled, no thread, no socket and no open file of ours.
 *
 * Alternatives considered: the control socket of 'syncprof ctl' for the
 * report (a helper thread and a socket file left in the target after
 * detach, where the report through ptrace leaves none); patching the
 * callers' code (instruction rewriting, far riskier than data slots).
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "record/record.h"
#include "report/profile.h"
#include "runtime/runtime.h"

#define MAX_SLOTS 32768
#define RESCAN_MS 200

struct slot {
	uintptr_t addr;  /* the GOT slot */
	uintptr_t orig;  /* its value before we wrote */
	uintptr_t shim;  /* what we wrote */
	int ro;          /* on a RELRO page: mprotect() around the store */
};

static sp_lock_t patch_lock = SP_LOCK_INIT;
/* Written under patch_lock: the patched GOT slots, those left unpatched
 * (no room, or mprotect() refused), whether attached, the link map's
 * additions seen. */
static struct {
	struct slot *slots;
	size_t n_slots;
	unsigned long unpatched;
	int attached;
	unsigned long long seen_adds;
} patched;

/* Written by whoever starts and stops the rescan thread; futex: RESCAN_RUN,
 * RESCAN_STOP, RESCAN_REPORT. */
static struct {
	pthread_t thread;
	int running;
	uint32_t futex;
} rescan;

static uintptr_t page_size;

/* The detach's report (control_wire.h), read by the CLI from outside. */
__attribute__((visibility("default"))) struct sp_attach_box syncprof__attach_box;

/* One loaded object, as dl_iterate_phdr() shows it. */
struct object {
	uintptr_t base;
	const ElfW(Phdr) *phdr;
	int phnum;
	uintptr_t relro_lo, relro_hi; /* pages made read-only after relocation */
};

static const char *shim_name_ok[] = { "pthread_", "mtx_", "cnd_", "sem_", "thrd_", "syscall",
				       NULL };

static const struct sp_attach_shim *shim_find(const char *name)
{
	int maybe = 0;

	for (int i = 0; shim_name_ok[i]; i++)
		if (!strncmp(name, shim_name_ok[i], strlen(shim_name_ok[i])))
			maybe = 1;
	if (!maybe)
		return NULL;
	for (const struct sp_attach_shim *s = sp_attach_shims; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* Dynamic-section pointers: glibc relocates them in place, except where
 * the section is read-only (the vDSO). */
static uintptr_t dyn_ptr(const struct object *o, uintptr_t v)
{
	return sp_dyn_ptr(o->base, v);
}

static int object_contains(const struct object *o, uintptr_t addr)
{
	return sp_segment_holds(o->base, o->phdr, o->phnum, addr, addr + 1);
}

static int slot_in_relro(const struct object *o, uintptr_t addr)
{
	uintptr_t page = addr & ~(page_size - 1);

	return page >= o->relro_lo && page < o->relro_hi;
}

static int slot_store_raw(uintptr_t addr, uintptr_t v, int ro)
{
	uintptr_t page = addr & ~(page_size - 1);

	if (ro && mprotect((void *)page, page_size, PROT_READ | PROT_WRITE))
		return -errno;
	/* Aligned 8 bytes: a concurrent call reads the old or the new one. */
	__atomic_store_n((uintptr_t *)addr, v, __ATOMIC_RELEASE);
	if (ro)
		mprotect((void *)page, page_size, PROT_READ);
	return 0;
}

static int slot_store(const struct object *o, uintptr_t addr, uintptr_t v)
{
	return slot_store_raw(addr, v, slot_in_relro(o, addr));
}

struct dyn_info {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Half) *versym;
	const ElfW(Verneed) *verneed;
	const ElfW(Rela) *rela[2];
	size_t rela_size[2];
};

static void dyn_read(const struct object *o, const ElfW(Dyn) *d, struct dyn_info *di)
{
	int pltrel_rela = 1;

	memset(di, 0, sizeof(*di));
	for (; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_SYMTAB: di->symtab = (const void *)dyn_ptr(o, d->d_un.d_ptr); break;
		case DT_STRTAB: di->strtab = (const void *)dyn_ptr(o, d->d_un.d_ptr); break;
		case DT_VERSYM: di->versym = (const void *)dyn_ptr(o, d->d_un.d_ptr); break;
		case DT_VERNEED: di->verneed = (const void *)dyn_ptr(o, d->d_un.d_ptr); break;
		case DT_JMPREL: di->rela[0] = (const void *)dyn_ptr(o, d->d_un.d_ptr); break;
		case DT_PLTRELSZ: di->rela_size[0] = d->d_un.d_val; break;
		case DT_PLTREL: pltrel_rela = d->d_un.d_val == DT_RELA; break;
		case DT_RELA: di->rela[1] = (const void *)dyn_ptr(o, d->d_un.d_ptr); break;
		case DT_RELASZ: di->rela_size[1] = d->d_un.d_val; break;
		}
	}
	if (!pltrel_rela) /* not x86-64's convention: leave the object alone */
		di->rela[0] = NULL;
}

/* The version a symbol reference asks for ("GLIBC_2.3.2"), or NULL. */
static const char *sym_version(const struct dyn_info *di, size_t symi)
{
	ElfW(Half) v;

	if (!di->versym || !di->verneed)
		return NULL;
	v = di->versym[symi] & 0x7fff;
	if (v < 2)
		return NULL;
	for (const ElfW(Verneed) *vn = di->verneed;;
	     vn = (const void *)((const char *)vn + vn->vn_next)) {
		const ElfW(Vernaux) *a = (const void *)((const char *)vn + vn->vn_aux);

		for (unsigned i = 0; i < vn->vn_cnt; i++) {
			if (a->vna_other == v)
				return di->strtab + a->vna_name;
			a = (const void *)((const char *)a + a->vna_next);
		}
		if (!vn->vn_next)
			return NULL;
	}
}

/* The record of slot @addr, or a new one (NULL: the table is full). */
static struct slot *slot_record(uintptr_t addr)
{
	for (size_t i = 0; i < patched.n_slots; i++)
		if (patched.slots[i].addr == addr)
			return &patched.slots[i];
	return patched.n_slots < MAX_SLOTS ? &patched.slots[patched.n_slots] : NULL;
}

/* Redirect the lock calls of one object; returns the slots rewritten. */
static long object_patch_locked(const struct object *o, const ElfW(Dyn) *dyn)
{
	struct dyn_info di;
	long n = 0;

	dyn_read(o, dyn, &di);
	if (!di.symtab || !di.strtab)
		return 0;
	for (int t = 0; t < 2; t++) {
		size_t count = di.rela[t] ? di.rela_size[t] / sizeof(ElfW(Rela)) : 0;

		for (size_t i = 0; i < count; i++) {
			const ElfW(Rela) *r = &di.rela[t][i];
			unsigned type = ELF64_R_TYPE(r->r_info);
			size_t symi = ELF64_R_SYM(r->r_info);
			const struct sp_attach_shim *s;
			const char *ver;
			uintptr_t addr, cur;
			struct slot *rec;

			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || !symi)
				continue;
			s = shim_find(di.strtab + di.symtab[symi].st_name);
			if (!s)
				continue;
			ver = sym_version(&di, symi);
			if (ver && !strcmp(ver, "GLIBC_2.2.5") && !strncmp(s->name, "pthread_cond_", 13))
				continue; /* the old condition variables */
			addr = o->base + r->r_offset;
			cur = __atomic_load_n((uintptr_t *)addr, __ATOMIC_RELAXED);
			if (cur == (uintptr_t)s->fn)
				continue;
			rec = slot_record(addr);
			if (!rec || slot_store(o, addr, (uintptr_t)s->fn)) {
				patched.unpatched++;
				continue;
			}
			if (rec == &patched.slots[patched.n_slots])
				patched.n_slots++;
			rec->addr = addr;
			rec->orig = cur;
			rec->shim = (uintptr_t)s->fn;
			rec->ro = slot_in_relro(o, addr);
			n++;
		}
	}
	return n;
}

static int object_fill(struct dl_phdr_info *info, struct object *o, const ElfW(Dyn) **dyn)
{
	o->base = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	o->phnum = info->dlpi_phnum;
	o->relro_lo = o->relro_hi = 0;
	*dyn = NULL;
	for (int i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];

		if (p->p_type == PT_DYNAMIC)
			*dyn = (const void *)(o->base + p->p_vaddr);
		if (p->p_type == PT_GNU_RELRO) {
			o->relro_lo = (o->base + p->p_vaddr) & ~(page_size - 1);
			o->relro_hi = (o->base + p->p_vaddr + p->p_memsz) & ~(page_size - 1);
		}
	}
	/* Not ours, not the dynamic linker's, not the vDSO (no PT_DYNAMIC
	 * worth reading there: it imports nothing). */
	if (!*dyn || object_contains(o, (uintptr_t)syncprof__attach_start))
		return 0;
	if (info->dlpi_name && (strstr(info->dlpi_name, "/ld-linux") ||
				strstr(info->dlpi_name, "linux-vdso")))
		return 0;
	return 1;
}

static int patch_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object o;
	const ElfW(Dyn) *dyn;

	(void)size;
	patched.seen_adds = info->dlpi_adds;
	if (object_fill(info, &o, &dyn))
		*(long *)arg += object_patch_locked(&o, dyn);
	return 0;
}

static int restore_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct object o;
	const ElfW(Dyn) *dyn;

	(void)size;
	if (!object_fill(info, &o, &dyn))
		return 0;
	for (size_t i = 0; i < patched.n_slots; i++) {
		struct slot *s = &patched.slots[i];

		if (!s->addr || !object_contains(&o, s->addr))
			continue;
		/* Only our own value goes: the loader may have bound it since. */
		if (__atomic_load_n((uintptr_t *)s->addr, __ATOMIC_RELAXED) == s->shim &&
		    !slot_store(&o, s->addr, s->orig))
			(*(long *)arg)++;
		s->addr = 0;
	}
	return 0;
}

static long patch_all_locked(void)
{
	long n = 0;

	dl_iterate_phdr(patch_cb, &n);
	return n;
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

/* The detach's report, into the box (any thread; marked busy by the caller). */
static void report_render(struct sp_attach_box *box)
{
	struct sp_ctl_request req;
	char err[256], *data = NULL;
	size_t len = 0;
	FILE *m;
	int rc;

	rc = sp_ctl_parse(box->request, strlen(box->request), &sp_opts.report, &req, err,
			  sizeof(err));
	if (!rc) {
		m = open_memstream(&data, &len);
		if (!m) {
			rc = -errno;
		} else {
			rc = sp_ctl_execute(&req, m);
			if (fclose(m) && !rc)
				rc = -ENOMEM;
		}
	}
	/* The names are in the report now: close libdw's files. */
	sp_report_lock();
	sp_symbolize_end();
	sp_report_unlock();
	if (rc) {
		free(data);
		data = NULL;
		len = 0;
	}
	box->data = (uintptr_t)data;
	box->len = len;
	box->rc = rc;
	__atomic_store_n(&box->state, SP_ATTACH_DONE, __ATOMIC_RELEASE);
}

enum { RESCAN_RUN, RESCAN_STOP, RESCAN_REPORT };

static void *rescan_main(void *arg)
{
	(void)arg;
	sp_thread_enter(); /* for its whole life: nothing of ours is recorded */
	for (;;) {
		struct timespec t = { 0, RESCAN_MS * 1000000L };
		unsigned long long adds = 0;
		uint32_t cmd;

		sp_futex(&rescan.futex, FUTEX_WAIT_PRIVATE, RESCAN_RUN, &t);
		cmd = __atomic_load_n(&rescan.futex, __ATOMIC_ACQUIRE);
		if (cmd == RESCAN_STOP)
			break;
		if (cmd == RESCAN_REPORT) {
			report_render(&syncprof__attach_box);
			break;
		}
		dl_iterate_phdr(adds_cb, &adds);
		sp_lock(&patch_lock);
		if (patched.attached && adds != patched.seen_adds)
			patch_all_locked();
		sp_unlock(&patch_lock);
	}
	return NULL;
}

static void rescan_start(void)
{
	sigset_t all, old;

	__atomic_store_n(&rescan.futex, RESCAN_RUN, __ATOMIC_RELEASE);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rescan.running = !pthread_create(&rescan.thread, NULL, rescan_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rescan.running)
		pthread_setname_np(rescan.thread, "syncprof-attach");
}

/* Tell the thread @cmd (it stops, or renders the report and stops). */
static void rescan_tell(uint32_t cmd)
{
	__atomic_store_n(&rescan.futex, cmd, __ATOMIC_RELEASE);
	sp_futex(&rescan.futex, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* Stop the thread (done with its report, if it was rendering one). */
static void rescan_join(void)
{
	if (!rescan.running)
		return;
	if (__atomic_load_n(&rescan.futex, __ATOMIC_ACQUIRE) == RESCAN_RUN)
		rescan_tell(RESCAN_STOP);
	pthread_join(rescan.thread, NULL);
	rescan.running = 0;
}

/* ---- fork (see the top of this file) ---------------------------------- */

static void attach_fork_prepare(void)
{
	sp_lock(&patch_lock);
}

static void attach_fork_parent(void)
{
	sp_unlock(&patch_lock);
}

/* Is the page of @addr mapped?  (mincore() says ENOMEM when it is not.) */
static int page_mapped(uintptr_t addr)
{
	unsigned char v;

	return !mincore((void *)(addr & ~(page_size - 1)), page_size, &v);
}

static void attach_fork_child(void)
{
	for (size_t i = 0; patched.attached && i < patched.n_slots; i++) {
		struct slot *s = &patched.slots[i];

		if (s->addr && page_mapped(s->addr) &&
		    __atomic_load_n((uintptr_t *)s->addr, __ATOMIC_RELAXED) == s->shim)
			slot_store_raw(s->addr, s->orig, s->ro);
	}
	patched.n_slots = 0;
	patched.attached = 0;
	/* Profiling off without the state lock (a thread left behind may hold
	 * it): the child is alone, nothing else reads the time it was on. */
	__atomic_fetch_and(&syncprof__enabled, ~SYNCPROF__PROFILING, __ATOMIC_RELAXED);
	/* No rescan thread, no CLI: a later attach to the child starts clean. */
	rescan.running = 0;
	__atomic_store_n(&rescan.futex, RESCAN_STOP, __ATOMIC_RELAXED);
	memset(&syncprof__attach_box, 0, sizeof(syncprof__attach_box));
	sp_unlock(&patch_lock); /* taken by attach_fork_prepare() in this thread */
}

static const struct sp_fork_hooks attach_fork_hooks = {
	attach_fork_prepare, attach_fork_parent, attach_fork_child,
};

#pragma GCC visibility push(default)

long syncprof__attach_start(const char *options)
{
	static int stack_ready;
	struct sp_thread *saved;
	long rc;

	if (!sp_load_relaxed(&sp_runtime_deferred))
		return -EALREADY; /* preloaded: profiled since start-up */
	saved = sp_thread_enter();
	page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (!patched.slots) {
		patched.slots = sp_mmap(MAX_SLOTS * sizeof(*patched.slots));
		if (!patched.slots) {
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = sp_runtime_attach(options);
	if (rc)
		goto out;
	sp_store_release(&sp_attach_fork_hooks, &attach_fork_hooks);
	if (!stack_ready) {
		sp_stack_init((const char *const *)sp_opts.skip, sp_opts.n_skip, sp_opts.frames,
			      sp_opts.skip_frames);
		stack_ready = 1;
	}
	/* Still attached (a CLI that died before its detach): the slots
	 * recorded then stay recorded, and are put back by the next detach. */
	rescan_join();
	if (__atomic_load_n(&syncprof__attach_box.state, __ATOMIC_ACQUIRE) == SP_ATTACH_DONE)
		free((void *)(uintptr_t)syncprof__attach_box.data); /* a CLI died before reading it */
	memset(&syncprof__attach_box, 0, sizeof(syncprof__attach_box));
	sp_lock(&patch_lock);
	rc = patch_all_locked();
	sp_store_relaxed(&patched.attached, 1);
	sp_unlock(&patch_lock);
	syncprof_enable();
	rescan_start();
out:
	sp_thread_leave(saved);
	return rc;
}

long syncprof__attach_stop(const char *request)
{
	struct sp_attach_box *box = &syncprof__attach_box;
	struct sp_thread *saved;
	long n = 0;

	if (!sp_load_relaxed(&sp_runtime_deferred))
		return -EALREADY;
	if (request && strlen(request) >= sizeof(box->request))
		return -E2BIG;
	saved = sp_thread_enter();
	/* A rescan after this finds attached == 0 and patches nothing; the
	 * thread is then told to render the report (or to end). */
	sp_lock(&patch_lock);
	if (patched.attached)
		dl_iterate_phdr(restore_cb, &n);
	patched.n_slots = 0;
	sp_store_relaxed(&patched.attached, 0);
	sp_unlock(&patch_lock);
	syncprof_disable();
	if (request) {
		strcpy(box->request, request);
		box->data = box->len = 0;
		box->rc = 0;
		__atomic_store_n(&box->state, SP_ATTACH_ASKED, __ATOMIC_RELEASE);
		if (rescan.running)
			rescan_tell(RESCAN_REPORT);
		else
			report_render(box);
	} else {
		rescan_join();
	}
	sp_thread_leave(saved);
	return n;
}

void syncprof__attach_release(void)
{
	struct sp_thread *saved = sp_thread_enter();
	struct sp_attach_box *box = &syncprof__attach_box;

	rescan_join();
	if (__atomic_load_n(&box->state, __ATOMIC_ACQUIRE) == SP_ATTACH_DONE)
		free((void *)(uintptr_t)box->data);
	box->data = box->len = 0;
	__atomic_store_n(&box->state, SP_ATTACH_IDLE, __ATOMIC_RELEASE);
	sp_thread_leave(saved);
}

#pragma GCC visibility pop
