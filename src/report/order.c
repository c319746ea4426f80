/*
 * order.c - the lock-order cycles of a profile (record/lockorder.c finds
 * them; collect.c copies them in; src/read/profile_load.c reads them back)
 * put in their one order before they are named and rendered.
 *
 * A profile's cycles are few (the recorder keeps 256 at most), each once
 * per sequence of sites, so shaping them is only sorting: most often found
 * first, then the shortest, then by their edges' sites, objects, types and
 * threads.  Sites compare by address first, then by file, line and
 * function: a live interposed site is keyed by its address alone, the
 * same site read back from JSON by its address and names, and only an
 * order that the address decides is the same for both (as for rows,
 * pipeline.c) - so the saved profile renders to the same bytes.  The top-N
 * cut and coalescing apply to rows only: every cycle is reported.
 *
 * Thread-safety: none needed; the profile belongs to the report being made.
 */
#include <stdlib.h>
#include <string.h>

#include "report/profile.h"


static int end_cmp(const struct sp_order_end *a, const struct sp_order_end *b)
{
	int c = sp_site_cmp(&a->site, &b->site);

	if (c)
		return c;
	if (a->obj != b->obj)
		return a->obj < b->obj ? -1 : 1;
	return a->type - b->type;
}

static int cycle_cmp(const void *pa, const void *pb)
{
	const struct sp_cycle *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->n_edges != b->n_edges)
		return a->n_edges < b->n_edges ? -1 : 1;
	for (unsigned k = 0; k < a->n_edges; k++) {
		const struct sp_order_edge *x = &a->edges[k], *y = &b->edges[k];
		int c = end_cmp(&x->held, &y->held);

		if (c || (c = end_cmp(&x->acquired, &y->acquired)))
			return c;
		if (x->tid != y->tid)
			return x->tid < y->tid ? -1 : 1;
	}
	return 0;
}

void sp_order_sort(struct sp_lock_order *o)
{
	if (o->n_cycles > 1)
		qsort(o->cycles, o->n_cycles, sizeof(*o->cycles), cycle_cmp);
}
