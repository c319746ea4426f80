/*
 * mappings.c - the executable mappings of the process that a live
 * profile's code addresses fall in: file, address range, file offset and
 * GNU build ID, so that the pprof output can carry Mapping messages
 * (Pyroscope, Parca and `pprof -symbolize` find the binary by its build
 * ID) and a saved profile can be re-rendered with them byte for byte.
 *
 * Design: sp_profile_mappings() gathers every code address of the
 * profile's resolved rows (site, stack, blame) and lock-order ends,
 * sorts them, and walks the loaded objects once with dl_iterate_phdr():
 * each executable PT_LOAD segment that holds at least one of them
 * (binary search) becomes a mapping, page-aligned as /proc/PID/maps shows
 * it; the object's build ID is read from its PT_NOTE segments, which the
 * loader has mapped (no file is opened); the main program, which the
 * loader names "", is named by /proc/self/exe.  Mappings are kept in the
 * profile's arena, main program first (dl_iterate_phdr's order), and
 * rendered by json.c ("mappings") and pprof.c; profile_load.c reads them
 * back.
 *
 * Costs: report path only: one sort of the profile's addresses and one
 * walk of the loaded objects' program headers; nothing on the hot path.
 *
 * Alternatives considered: parsing /proc/self/maps (base/maps.h) and
 * reading each file's ELF notes from disk (an open and reads per DSO, and
 * a file replaced since it was loaded gives a wrong build ID); libdw's
 * dwfl module list (the symbolizer's, but libsyncprof.a may run without
 * libdw, and a mapping needs no debug info).
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/containers.h"
#include "report/profile.h"

struct addrs {
	uintptr_t *v;
	size_t n, cap;
};

struct walk {
	struct sp_profile *p;
	const struct addrs *a;
	struct sp_mapping *m;
	size_t n, cap;
	uintptr_t page;
	int err;
};

static int addrs_add(struct addrs *a, uintptr_t pc)
{
	if (!pc)
		return 0;
	if (sp_grow(&a->v, &a->cap, a->n, sizeof(*a->v)))
		return -ENOMEM;
	a->v[a->n++] = pc;
	return 0;
}

/* @all: also the creation site (unnamed profiles, see addrs_collect). */
static int addrs_names(struct addrs *a, const struct sp_names *nm, int all)
{
	int rc = 0;

	if (!nm)
		return 0;
	rc = addrs_add(a, nm->site.address);
	for (unsigned i = 0; i < nm->n_frames && !rc; i++)
		rc = addrs_add(a, nm->frames[i].address);
	if (!rc && all && nm->created)
		rc = addrs_add(a, nm->created->address);
	return rc;
}

/*
 * The code addresses of @p's names whose mappings a profile carries:
 * sites, stacks, blame holders and lock-order ends.  @all adds the
 * creation sites and the root holders of wait chains: an unnamed profile
 * (sp_profile_resolve_unnamed) needs a mapping for every address it will
 * name offline, and sp_profile_mappings_trim() then drops the mappings
 * that only those hold, so the list is the one a live report gives.
 */
static int addrs_collect(const struct sp_profile *p, struct addrs *a, int all)
{
	int rc = 0;

	for (size_t i = 0; i < p->rows.n && !rc; i++) {
		const struct sp_row *r = &p->rows.v[i];
		const struct sp_row_detail *d = sp_row_d(r);

		rc = addrs_names(a, r->names, all);
		for (uint32_t k = 0; k < d->n_blame && !rc; k++) {
			if (d->blame[k].names)
				rc = addrs_add(a, d->blame[k].names->address);
			if (!rc && all && d->blame[k].root_names)
				rc = addrs_add(a, d->blame[k].root_names->address);
		}
		for (uint32_t k = 0; k < d->n_hold_where && !rc; k++)
			if (d->hold_where[k].names)
				rc = addrs_add(a, d->hold_where[k].names->address);
	}
	for (size_t i = 0; i < p->order.n_cycles && !rc; i++)
		for (unsigned k = 0; k < p->order.cycles[i].n_edges && !rc; k++) {
			const struct sp_order_edge *e = &p->order.cycles[i].edges[k];

			rc = addrs_names(a, e->held.names, all);
			if (!rc)
				rc = addrs_names(a, e->acquired.names, all);
		}
	return rc;
}

static int cmp_addr(const void *x, const void *y)
{
	uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;

	return a < b ? -1 : a > b;
}

/* Is an address of @a in [lo, hi)? */
static int addrs_any(const struct addrs *a, uintptr_t lo, uintptr_t hi)
{
	size_t l = 0, h = a->n;

	while (l < h) { /* the first address >= lo */
		size_t mid = l + (h - l) / 2;

		if (a->v[mid] < lo)
			l = mid + 1;
		else
			h = mid;
	}
	return l < a->n && a->v[l] < hi;
}

/* The GNU build ID of the object, hex, from its mapped PT_NOTE segments;
 * NULL when it has none. */
static const char *build_id(struct sp_profile *p, const struct dl_phdr_info *info)
{
	char hex[129];

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE &&
		    sp_build_id_hex((const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
				    ph->p_memsz, hex))
			return sp_profile_intern(p, hex);
	}
	return NULL;
}

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	const char *file = NULL, *id = NULL;
	int named = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && !w->err; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo, hi;
		struct sp_mapping *m;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lo = (info->dlpi_addr + ph->p_vaddr) & ~(w->page - 1);
		hi = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + w->page - 1) & ~(w->page - 1);
		if (!addrs_any(w->a, lo, hi))
			continue;
		if (!named) {
			char exe[4096];
			ssize_t n;

			named = 1;
			file = info->dlpi_name;
			if (!file || !*file) {
				n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
				exe[n > 0 ? n : 0] = '\0';
				file = exe;
			}
			file = *file ? sp_profile_intern(w->p, file) : NULL;
			id = build_id(w->p, info);
		}
		if (sp_grow(&w->m, &w->cap, w->n, sizeof(*w->m))) {
			w->err = -ENOMEM;
			return 1;
		}
		m = &w->m[w->n++];
		m->start = lo;
		m->limit = hi;
		m->offset = ph->p_offset & ~(w->page - 1);
		m->file = file;
		m->build_id = id;
	}
	return w->err ? 1 : 0;
}

int sp_profile_mappings(struct sp_profile *p)
{
	struct addrs a = { 0 };
	struct walk w = { 0 };
	int rc;

	if (p->n_mappings)
		return 0; /* read back from a saved profile */
	rc = addrs_collect(p, &a, p->unnamed);
	if (rc || !a.n) {
		free(a.v);
		return rc;
	}
	qsort(a.v, a.n, sizeof(*a.v), cmp_addr);
	w.p = p;
	w.a = &a;
	w.page = (uintptr_t)sysconf(_SC_PAGESIZE);
	dl_iterate_phdr(on_object, &w);
	rc = w.err;
	if (!rc && w.n) {
		p->mappings = sp_profile_alloc(p, w.n * sizeof(*p->mappings));
		if (p->mappings) {
			memcpy(p->mappings, w.m, w.n * sizeof(*p->mappings));
			p->n_mappings = w.n;
		} else {
			rc = -ENOMEM;
		}
	}
	free(w.m);
	free(a.v);
	return rc;
}

void sp_profile_mappings_trim(struct sp_profile *p)
{
	struct addrs a = { 0 };
	size_t n = 0;

	if (!p->n_mappings)
		return;
	if (addrs_collect(p, &a, 0)) {
		free(a.v);
		return; /* out of memory: keep them all, more is harmless */
	}
	qsort(a.v, a.n, sizeof(*a.v), cmp_addr);
	for (size_t i = 0; i < p->n_mappings; i++)
		if (addrs_any(&a, p->mappings[i].start, p->mappings[i].limit))
			p->mappings[n++] = p->mappings[i];
	p->n_mappings = n;
	free(a.v);
}

const struct sp_mapping *sp_mapping_find(const struct sp_profile *p, uintptr_t addr)
{
	for (size_t i = 0; addr && i < p->n_mappings; i++)
		if (addr >= p->mappings[i].start && addr < p->mappings[i].limit)
			return &p->mappings[i];
	return NULL;
}
