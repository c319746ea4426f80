/*
 * render/table.c - the human-readable report.
 *
 * QSP's columns, in QSP's order - Type, Object, Call site, Wait Time (s),
 * Count, Average (us) - followed by Contended, Max (us), p50 (us),
 * p90 (us) and p99 (us).  Object is the lock's address, or "[N]" when coalescing merged
 * N objects into the row.  Widths follow the content; numbers are right
 * aligned.  A header line says what the report covers, and a footer says
 * how many lock calls could not be recorded when that is not zero.
 * Under it, the threads' time account: how long they lived, ran, were
 * preempted and blocked, and how much of blocked the rows' waits explain.
 * With hold tracking on (hold.c): Hold Time (s), Max hold (us) and Owner
 * chg columns, and under each row its blame lines (largest first, top 4).
 * With lock-order checking on (lockorder.c), a "Lock-order cycles"
 * section follows the rows: every cycle, one line per edge with both
 * locks, both call sites and the thread, then what the graph kept and
 * dropped.
 *
 * Contention first (issue 26): the rows of locks (sp_type_is_lock():
 * mutex, rwlock, spinlock, futex, glibc lock) come first under their own
 * title, and the waits for an event (condition variable, semaphore,
 * barrier, join: no holder to blame, often threads idle by design) follow
 * under theirs, each part in the profile's order, so the sort key orders
 * within a part; both parts share the columns' widths.  The top-N cut is
 * the profile's, made over both parts before they are split, so that
 * every format holds the same rows.  merged=1 (--merged) prints one list,
 * as before.  Alternatives: sorting by kind in the pipeline (the rows of
 * JSON, CSV, folded and pprof would change order, which the issue keeps
 * as they are); one list with a kind column (the mutex the issue found on
 * row 3 would stay on row 3).
 *
 * Columns are rows of a table (key, header, width, alignment), so
 * that --columns / columns= can choose and reorder them by key; without
 * the option every column is printed in the order above.  The text
 * columns (type, object, site), whose widths follow the content, are
 * formatted once into one growing buffer addressed by offsets (main's
 * reportbench: a fixed 544 bytes per row made a 1M-row report page-fault
 * bound); number columns have fixed widths and are printed straight from
 * the row, as before (formatting them into text first made the 300k-row
 * per-object table ~30% slower).
 *
 * Alternatives considered: one printf per row with a fixed format (the
 * first version) cannot leave columns out; a column bitmask cannot reorder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/profile.h"

enum col_id { C_TYPE, C_OBJECT, C_SITE, C_WAIT, C_COUNT, C_AVG, C_CONTENDED, C_MAX, C_P50, C_P90,
	      C_P99, C_HOLD, C_HOLD_MAX, C_OWNER_CHG, N_COLS };

#define N_BASE_COLS C_HOLD /* printed by default; the hold columns with hold=1 */

#define CELL 512

struct col {
	const char *key;
	const char *header;
	int min_width; /* numbers: fixed width, as the first version printed */
	int left;      /* left aligned text, measured and kept in struct cells */
};

static const struct col cols[N_COLS] = {
	[C_TYPE] = { "type", "Type", 4, 1 },
	[C_OBJECT] = { "object", "Object", 6, 0 },
	[C_SITE] = { "site", "Call site", 9, 1 },
	[C_WAIT] = { "wait", "Wait Time (s)", 13, 0 },
	[C_COUNT] = { "count", "Count", 12, 0 },
	[C_AVG] = { "avg", "Average (us)", 12, 0 },
	[C_CONTENDED] = { "contended", "Contended", 10, 0 },
	[C_MAX] = { "max", "Max (us)", 10, 0 },
	[C_P50] = { "p50", "p50 (us)", 10, 0 },
	[C_P90] = { "p90", "p90 (us)", 10, 0 },
	[C_P99] = { "p99", "p99 (us)", 10, 0 },
	[C_HOLD] = { "hold", "Hold Time (s)", 13, 0 },
	[C_HOLD_MAX] = { "max_hold", "Max hold (us)", 13, 0 },
	[C_OWNER_CHG] = { "owner_chg", "Owner chg", 10, 0 },
};

/* Cell text of every row, in one growing buffer (offsets, not pointers). */
struct cells {
	char *buf;
	size_t len, cap;
	size_t *off; /* row i, text column k: off[i * n_text + k] */
};

static int cells_add(struct cells *c, const char *s, size_t *off)
{
	size_t n = strlen(s) + 1;

	if (c->len + n > c->cap) {
		size_t cap = (c->cap + n) * 2;
		char *b = realloc(c->buf, cap);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, s, n);
	*off = c->len;
	c->len += n;
	return 0;
}

static void cells_free(struct cells *c)
{
	free(c->buf);
	free(c->off);
}

int sp_columns_parse(const char *list, int *ids, int max, int hold)
{
	int n = 0;

	if (!list || !*list) {
		int all = hold ? N_COLS : N_BASE_COLS;

		for (int i = 0; i < all && i < max; i++)
			ids[n++] = i;
		return n;
	}
	while (*list) {
		size_t len = strcspn(list, ",");
		int found = -1;

		for (int i = 0; i < N_COLS; i++)
			if (strlen(cols[i].key) == len && !strncmp(cols[i].key, list, len))
				found = i;
		if (found < 0 || n >= max)
			return -EINVAL;
		for (int j = 0; j < n; j++)
			if (ids[j] == found)
				return -EINVAL;
		ids[n++] = found;
		list += len;
		if (*list == ',' && !*++list)
			return -EINVAL; /* trailing comma */
	}
	return n ? n : -EINVAL;
}

static const char *sort_label(enum syncprof_sort s)
{
	switch (s) {
	case SYNCPROF_SORT_AVG: return "average wait";
	case SYNCPROF_SORT_MAX: return "longest wait";
	case SYNCPROF_SORT_COUNT: return "acquisitions";
	case SYNCPROF_SORT_CONTENDED: return "contended attempts";
	case SYNCPROF_SORT_HOLD: return "total hold time";
	case SYNCPROF_SORT_TOTAL:
	default: return "total wait";
	}
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

/* Text of a text column (type, object, site) into @buf of CELL bytes. */
static void text_cell(const struct sp_row *r, int id, const struct syncprof_report_options *o,
		      size_t auto_len, char *buf)
{
	switch (id) {
	case C_TYPE: snprintf(buf, CELL, "%s", sp_type_name(r->type)); break;
	case C_OBJECT:
		if (r->n_objects > 1)
			snprintf(buf, CELL, "[%llu]", (unsigned long long)r->n_objects);
		else
			snprintf(buf, CELL, "%#lx", (unsigned long)r->obj);
		break;
	case C_SITE: sp_frame_format(&r->names->site, o->src_root, auto_len, buf, CELL); break;
	default: buf[0] = '\0';
	}
}

/* A number column, printed straight to @out (no intermediate text). */
static void print_number(FILE *out, const struct sp_row *r, int id, int width)
{
	switch (id) {
	case C_WAIT: fprintf(out, "%*.5f", width, (double)r->wait_ns / 1e9); break;
	case C_COUNT: fprintf(out, "%*llu", width, (unsigned long long)r->acquisitions); break;
	case C_AVG: fprintf(out, "%*.2f", width, us(sp_row_avg(r))); break;
	case C_CONTENDED: fprintf(out, "%*llu", width, (unsigned long long)r->contended); break;
	case C_MAX: fprintf(out, "%*.2f", width, us(r->wait_max_ns)); break;
	case C_P50: fprintf(out, "%*.2f", width, us(sp_row_percentile(r, 0.50))); break;
	case C_P90: fprintf(out, "%*.2f", width, us(sp_row_percentile(r, 0.90))); break;
	case C_P99: fprintf(out, "%*.2f", width, us(sp_row_percentile(r, 0.99))); break;
	/* A futex or glibc lock's holds are not seen: unknown, not 0. */
	case C_HOLD:
		if (!sp_type_hold_known(r->type))
			fprintf(out, "%*s", width, "-");
		else
			fprintf(out, "%*.5f", width, (double)r->hold_ns / 1e9);
		break;
	case C_HOLD_MAX:
		if (!sp_type_hold_known(r->type))
			fprintf(out, "%*s", width, "-");
		else
			fprintf(out, "%*.2f", width, us(r->hold_max_ns));
		break;
	case C_OWNER_CHG: fprintf(out, "%*llu", width, (unsigned long long)r->owner_changes); break;
	default: break;
	}
}

/* With hold tracking: "waited X s (N times) for holders at SITE" lines,
 * the four largest. */
/* The row of the holder site @h of a lock of @r's (its object when @r has
 * one), with hold states; NULL if none is printed. */
static const struct sp_row *holder_row(const struct sp_rows *rows, const struct sp_row *r,
				       const struct sp_site *h)
{
	for (size_t i = 0; i < rows->n; i++) {
		const struct sp_row *x = &rows->v[i];

		if (!sp_row_d(x)->n_hold_states || x->pc != h->pc || x->line != h->line ||
		    (x->file != h->file && (!x->file || !h->file || strcmp(x->file, h->file))))
			continue;
		if (r->n_objects == 1 && x->n_objects == 1 && x->obj != r->obj)
			continue;
		return x;
	}
	return NULL;
}

/* " 71% in fsync(), 20% running, 9% preempted": the @max largest of a
 * row's long-hold states (record/holdstate.c), those under 1% left out
 * after the first. */
static void hold_states_list(FILE *out, const struct sp_row_detail *d, uint64_t total,
			     uint32_t max)
{
	for (uint32_t i = 0; i < d->n_hold_states && i < max; i++) {
		const struct sp_hold_state *st = &d->hold_states[i];
		double pct = 100.0 * (double)st->ns / (double)total;

		if (i && pct < 1.0)
			break; /* largest first: the rest is under 1% too */
		fputs(i ? ", " : " ", out);
		if (!strncmp(st->name, "syscall:", 8))
			fprintf(out, "%.0f%% in %s()", pct, st->name + 8);
		else if (!strcmp(st->name, "lock"))
			fprintf(out, "%.0f%% waiting for another lock", pct);
		else
			fprintf(out, "%.0f%% %s", pct, st->name);
	}
}

/* "; during their long holds the holders were 60% preempted, 30% running":
 * the holder row's states, after a blame line. */
static void holder_states(FILE *out, const struct sp_row *x)
{
	const struct sp_row_detail *d = sp_row_d(x);

	fputs("; during their long holds the holders were", out);
	hold_states_list(out, d, sp_hold_states_total(d), 3);
}

static void blame_lines(FILE *out, const struct sp_rows *rows, const struct sp_row *r,
			const struct syncprof_report_options *o, size_t auto_len)
{
	const struct sp_row_detail *d = sp_row_d(r);

	for (uint32_t i = 0; i < d->n_blame && i < 4; i++) {
		static const struct sp_frame unknown;
		const struct sp_blame *b = &d->blame[i];
		char site[512];

		sp_frame_format(b->names ? b->names : &unknown, o->src_root, auto_len, site,
				sizeof(site));
		/* A futex lock's holder is not seen: its waker is. */
		fprintf(out,
			r->type == SP_TYPE_FUTEX
				? "    blame: waited %.5f s (%llu time%s), woken by releases at %s"
				: "    blame: waited %.5f s (%llu time%s) for holders that took it at %s",
			(double)b->wait_ns / 1e9, (unsigned long long)b->count,
			b->count == 1 ? "" : "s", site);
		if (sp_blame_has_root(b)) {
			/* The holders waited in turn: the chain's root. */
			sp_frame_format(b->root_names ? b->root_names : &unknown, o->src_root,
					auto_len, site, sizeof(site));
			fprintf(out, ", themselves waiting on a chain whose root holder took "
				     "its lock at %s",
				site);
		}
		if (r->type != SP_TYPE_FUTEX) {
			const struct sp_row *x = holder_row(rows, r, &b->holder);

			if (x)
				holder_states(out, x);
		}
		fputc('\n', out);
	}
}

/*
 * With hold tracking: what the holder did during the row's long holds,
 * "    held long 0.82 s: 71% in fsync(), 20% running, 9% preempted", the
 * four largest states (issue 24; record/holdstate.c).
 */
static void hold_state_line(FILE *out, const struct sp_row *r,
			    const struct syncprof_report_options *o, size_t auto_len)
{
	const struct sp_row_detail *d = sp_row_d(r);
	uint64_t total = sp_hold_states_total(d), sampled = sp_hold_where_total(d);

	if (!total)
		return;
	fprintf(out, "    held long %.5f s:", (double)total / 1e9);
	hold_states_list(out, d, total, 4);
	fputc('\n', out);
	/* frames=N: where in the holder's code, the three largest points
	 * ("      at flush_journal FILE:88, in fsync(): 0.60000 s (73% of the
	 * time sampled there)") */
	for (uint32_t i = 0, shown = 0; i < d->n_hold_where && shown < 3; i++) {
		const struct sp_hold_where *w = &d->hold_where[i];
		struct sp_frame buf;
		char site[512];

		if (!w->pc || !w->names)
			continue;
		sp_frame_format(sp_hold_where_site(w, &buf), o->src_root, auto_len, site,
				sizeof(site));
		fprintf(out, "      at %s, ", site);
		if (!strncmp(w->state, "syscall:", 8))
			fprintf(out, "in %s()", w->state + 8);
		else if (!strcmp(w->state, "other"))
			fputs("blocked outside a system call", out);
		else
			fputs(w->state, out);
		fprintf(out, ": %.5f s (%.0f%% of the time sampled there)\n", (double)w->ns / 1e9,
			100.0 * (double)w->ns / (double)sampled);
		shown++;
	}
}

/* Under a per-object row: the lock's name, and where it was created (its
 * init, or its first use when no init was seen, unless that first use is
 * the row's own site: then the row has said it). */
static void lock_line(FILE *out, const struct sp_row *r, const struct syncprof_report_options *o,
		      size_t auto_len)
{
	char site[512], own[512];
	int created = r->names->created != NULL;

	if (r->n_objects != 1)
		return; /* coalesced rows: the Object column says how many locks */
	if (created && r->names->created_how != SP_CREATED_INIT) {
		/* First used at this row's own site: the row says it already. */
		sp_frame_format(r->names->created, o->src_root, auto_len, site, sizeof(site));
		sp_frame_format(&r->names->site, o->src_root, auto_len, own, sizeof(own));
		created = strcmp(site, own) != 0;
	}
	if (!r->lock_name && !created)
		return;
	fputs("    lock", out);
	if (r->lock_name) {
		fputs(" \"", out);
		for (const char *c = r->lock_name; *c; c++) /* one line: no control bytes */
			fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, out);
		fputc('"', out);
	}
	if (created) {
		sp_frame_format(r->names->created, o->src_root, auto_len, site, sizeof(site));
		fprintf(out, "%s created at %s (%s)", r->lock_name ? "," : "", site,
			r->names->created_how == SP_CREATED_INIT ? "init" : "first use");
	}
	fputc('\n', out);
}

/* With lock-order checking: the cycles, every edge with both sites. */
/* "I/O under locks": the system calls that holders of long holds were
 * blocked in, the ten largest (issue 24). */
static void syscall_section(FILE *out, const struct sp_rows *rows,
			    const struct syncprof_report_options *o, size_t auto_len)
{
	struct sp_syscall_under_lock v[10];
	size_t n = sp_syscalls_under_lock(rows, v, 10);

	if (!n)
		return;
	fprintf(out, "\nSystem calls under locks (holders blocked in them during long holds):\n");
	for (size_t i = 0; i < n && i < 10; i++) {
		const struct sp_row *r = v[i].row;
		char site[512];

		sp_frame_format(&r->names->site, o->src_root, auto_len, site, sizeof(site));
		fprintf(out, "  %10.5f s  %s()  holding %s", (double)v[i].ns / 1e9, v[i].syscall,
			sp_type_name(r->type));
		if (r->n_objects == 1)
			fprintf(out, " 0x%lx", (unsigned long)r->obj);
		fprintf(out, " taken at %s\n", site);
	}
	if (n > 10)
		fprintf(out, "  (%zu more)\n", n - 10);
}

static void order_section(FILE *out, const struct sp_profile *p,
			  const struct syncprof_report_options *o, size_t auto_len)
{
	const struct sp_lock_order *lo = &p->order;
	static const struct sp_frame unknown;

	int incomplete = lo->edges_dropped || lo->cycles_dropped || lo->searches_cut;

	fprintf(out, "\nLock-order cycles (potential deadlocks): ");
	if (lo->n_cycles)
		fprintf(out, "%zu%s", lo->n_cycles, incomplete ? " found, the check incomplete" : "");
	else
		fputs(incomplete ? "none found, but the check was incomplete" : "none", out);
	fprintf(out, " (lock-order graph: %llu edge%s kept, %llu dropped)\n",
		(unsigned long long)lo->edges_kept, lo->edges_kept == 1 ? "" : "s",
		(unsigned long long)lo->edges_dropped);
	for (size_t i = 0; i < lo->n_cycles; i++) {
		const struct sp_cycle *c = &lo->cycles[i];

		fprintf(out, "cycle %zu: %u locks, found %llu time%s\n", i + 1, c->n_edges,
			(unsigned long long)c->count, c->count == 1 ? "" : "s");
		for (unsigned k = 0; k < c->n_edges; k++) {
			const struct sp_order_edge *e = &c->edges[k];
			char held[512], acq[512];

			sp_frame_format(e->held.names ? &e->held.names->site : &unknown,
					o->src_root, auto_len, held, sizeof(held));
			sp_frame_format(e->acquired.names ? &e->acquired.names->site : &unknown,
					o->src_root, auto_len, acq, sizeof(acq));
			fprintf(out, "  thread %d took %s %#lx at %s\n    while holding %s %#lx, taken "
				     "at %s\n",
				e->tid, sp_type_name(e->acquired.type), (unsigned long)e->acquired.obj,
				acq, sp_type_name(e->held.type), (unsigned long)e->held.obj, held);
		}
	}
	if (incomplete)
		fprintf(out, "syncprof: lock order: %llu new edge%s dropped (edge table full), %llu "
			     "cycle%s dropped (cycle table full), %llu search%s cut short: cycles "
			     "may be missing\n",
			(unsigned long long)lo->edges_dropped, lo->edges_dropped == 1 ? "" : "s",
			(unsigned long long)lo->cycles_dropped, lo->cycles_dropped == 1 ? "" : "s",
			(unsigned long long)lo->searches_cut, lo->searches_cut == 1 ? "" : "es");
}

struct layout {
	int ids[SP_MAX_COLUMNS], width[SP_MAX_COLUMNS], text[SP_MAX_COLUMNS];
	int n, n_text; /* columns; text columns (text[c]: their index, or -1) */
};

static void print_cell(FILE *out, const struct layout *l, int c, const char *s)
{
	if (cols[l->ids[c]].left && c == l->n - 1)
		fputs(s, out); /* no trailing blanks */
	else
		fprintf(out, cols[l->ids[c]].left ? "%-*s" : "%*s", l->width[c], s);
	fputs(c == l->n - 1 ? "\n" : "  ", out);
}

static void print_row(FILE *out, const struct layout *l, const struct cells *cells,
		      const struct sp_row *r, size_t i)
{
	for (int c = 0; c < l->n; c++) {
		if (l->text[c] >= 0) {
			print_cell(out, l, c,
				   cells->buf + cells->off[i * (size_t)l->n_text + (size_t)l->text[c]]);
			continue;
		}
		print_number(out, r, l->ids[c], l->width[c]);
		fputs(c == l->n - 1 ? "\n" : "  ", out);
	}
}

/* Which rows a part of the table holds: all of them (merged, or no rows),
 * the locks' (sp_type_is_lock()), the waits for an event. */
enum part { PART_ALL, PART_LOCKS, PART_EVENTS };

static int in_part(const struct sp_row *r, enum part part)
{
	return part == PART_ALL || (part == PART_LOCKS) == (sp_type_is_lock(r->type) != 0);
}

/*
 * One part of the table: its title (none for PART_ALL), the column
 * headers and a rule, then its rows in the profile's order (the sort key
 * orders each part) with their lines.  Both parts share the columns'
 * widths, so that they read as one table.
 */
static void print_part(FILE *out, const struct sp_profile *p,
		       const struct syncprof_report_options *o, const struct layout *l,
		       const struct cells *cells, size_t auto_len, int rule, enum part part)
{
	const struct sp_rows *rows = &p->rows;
	size_t n = 0;

	for (size_t i = 0; i < rows->n; i++)
		n += in_part(&rows->v[i], part);
	if (part == PART_LOCKS)
		fprintf(out, "\nLock contention (mutex, rwlock, spinlock, futex, glibc lock): %zu "
			     "row%s\n", n, n == 1 ? "" : "s");
	else if (part == PART_EVENTS)
		fprintf(out, "\nWaits for an event (condition variable, semaphore, barrier, join): "
			     "%zu row%s\n", n, n == 1 ? "" : "s");
	for (int c = 0; c < l->n; c++)
		print_cell(out, l, c, cols[l->ids[c]].header);
	for (int i = 0; i < rule; i++)
		fputc('-', out);
	fputc('\n', out);
	for (size_t i = 0; i < rows->n; i++) {
		if (!in_part(&rows->v[i], part))
			continue;
		print_row(out, l, cells, &rows->v[i], i);
		lock_line(out, &rows->v[i], o, auto_len);
		if (p->hold) {
			hold_state_line(out, &rows->v[i], o, auto_len);
			blame_lines(out, rows, &rows->v[i], o, auto_len);
		}
	}
	if (part == PART_LOCKS && !n) {
		if (rows->n_total > rows->n)
			fprintf(out, "(none in the top %zu rows)\n", rows->n);
		else
			fputs("(none)\n", out);
	}
}

/* What the threads' time went to (collect.c): one line of lifetime
 * parts, one of what the rows explain of blocked; one line saying why
 * when the kernel gave no account. */
static void account_lines(FILE *out, const struct sp_account *a)
{
	uint64_t elsewhere;

	if (a->state == SP_ACCOUNT_UNAVAILABLE) {
		fprintf(out, "syncprof: no thread time account: the kernel gives no per-thread "
			     "schedstat (%s)\n", a->unavailable ? a->unavailable : "?");
		return;
	}
	if (a->state != SP_ACCOUNT_KEPT)
		return;
	elsewhere = a->blocked_ns > a->sync_wait_ns ? a->blocked_ns - a->sync_wait_ns : 0;
	fprintf(out, "syncprof: %llu thread%s (%llu exited) lived %.2f s: %.2f s running, "
		     "%.2f s preempted, %.2f s blocked\n",
		(unsigned long long)a->threads, a->threads == 1 ? "" : "s",
		(unsigned long long)a->exited, (double)a->lifetime_ns / 1e9,
		(double)a->running_ns / 1e9, (double)a->preempted_ns / 1e9,
		(double)a->blocked_ns / 1e9);
	fprintf(out, "syncprof: threads blocked %.2f s: %.2f s in the waits %s, %.2f s elsewhere "
		     "(I/O, sleep, poll)\n",
		(double)a->blocked_ns / 1e9, (double)a->sync_wait_ns / 1e9,
		a->reset ? "seen since the threads started (the rows: since the reset)" : "below",
		(double)elsewhere / 1e9);
	/* A waiter that was woken waits for a CPU before its wait ends: the
	 * kernel counts that as preempted, the rows as waiting. */
	if (a->sync_wait_ns > a->blocked_ns)
		fprintf(out, "syncprof: the waits exceed the blocked time by %.2f s: a woken "
			     "waiter's wait lasts until it runs, which the kernel counts as "
			     "preempted\n",
			(double)(a->sync_wait_ns - a->blocked_ns) / 1e9);
	if (a->unread)
		fprintf(out, "syncprof: %llu exited thread%s could not be accounted (/proc "
			     "unreadable at its exit)\n",
			(unsigned long long)a->unread, a->unread == 1 ? "" : "s");
	if (a->skipped)
		fprintf(out, "syncprof: %llu more exited thread%s not accounted: threads exited "
			     "faster than their /proc files are read (docs/accounting.md); the "
			     "figures above are those of the threads read\n",
			(unsigned long long)a->skipped, a->skipped == 1 ? "" : "s");
}

/* The columns' layout (@l) and the text cells of every row (@cells),
 * whose widths it takes: 0, -EINVAL (bad columns) or -ENOMEM. */
static int layout_cells(const struct sp_profile *p, const struct syncprof_report_options *o,
			size_t auto_len, struct layout *l, struct cells *cells)
{
	const struct sp_rows *rows = &p->rows;

	l->n = sp_columns_parse(o->columns, l->ids, SP_MAX_COLUMNS, p->hold);
	if (l->n < 0)
		return -EINVAL;
	l->n_text = 0;
	for (int c = 0; c < l->n; c++) {
		int id = l->ids[c];

		l->text[c] = id == C_TYPE || id == C_OBJECT || id == C_SITE ? l->n_text++ : -1;
		l->width[c] = (int)strlen(cols[id].header);
		if (l->width[c] < cols[id].min_width)
			l->width[c] = cols[id].min_width;
	}
	cells->off = malloc((rows->n + 1) * (size_t)(l->n_text + 1) * sizeof(*cells->off));
	if (!cells->off)
		return -ENOMEM;
	for (size_t i = 0; i < rows->n; i++)
		for (int c = 0; c < l->n; c++) {
			char b[CELL];
			int w;

			if (l->text[c] < 0)
				continue;
			text_cell(&rows->v[i], l->ids[c], o, auto_len, b);
			if (cells_add(cells, b,
				      &cells->off[i * (size_t)l->n_text + (size_t)l->text[c]])) {
				cells_free(cells);
				return -ENOMEM;
			}
			w = (int)strlen(b);
			l->width[c] = w > l->width[c] ? w : l->width[c];
		}
	return 0;
}

/* The lines above the table: the process, the span, the rows, the sort,
 * the time account. */
static void table_head(FILE *out, const struct sp_profile *p)
{
	const struct sp_rows *rows = &p->rows;

	fprintf(out, "syncprof: pid %d: %s\n", p->pid,
		p->command && *p->command ? p->command : "?");
	if (p->interrupted)
		fprintf(out, "syncprof: interrupted by %s: the profile up to then\n", p->interrupted);
	fprintf(out, "syncprof: %.3f s profiled, ", (double)p->elapsed_ns / 1e9);
	if (rows->n_total > rows->n)
		fprintf(out, "top %zu of %zu rows", rows->n, rows->n_total);
	else
		fprintf(out, "%zu row%s", rows->n, rows->n == 1 ? "" : "s");
	fprintf(out, ", sorted by %s%s\n", sort_label(p->sort),
		p->coalesced ? ", objects coalesced per call site" : "");
	account_lines(out, &p->account);
}

/* The notes under the table: what could not be recorded or measured. */
static void table_notes(FILE *out, const struct sp_profile *p)
{
	if (p->lost)
		fprintf(out, "syncprof: %llu lock call%s could not be recorded (out of memory or "
			     "during thread exit); they are missing from the counts above\n",
			(unsigned long long)p->lost, p->lost == 1 ? "" : "s");
	if (p->hold_untracked)
		fprintf(out, "syncprof: %llu acquisition%s made while a thread held more than 32 "
			     "locks were not hold-tracked (no hold time, owner change or blame)\n",
			(unsigned long long)p->hold_untracked, p->hold_untracked == 1 ? "" : "s");
	if (p->hold && p->hold_late_ticks)
		fprintf(out, "syncprof: the hold ticker was late %llu time%s (longest gap %.2f ms: "
			     "starved of CPU); holds shorter than %.2f ms may have been estimated as "
			     "short ones instead of measured\n",
			(unsigned long long)p->hold_late_ticks, p->hold_late_ticks == 1 ? "" : "s",
			(double)p->hold_gap_max_ns / 1e6, (double)(p->hold_gap_max_ns + 250000) / 1e6);
	if (p->blame_lost)
		fprintf(out, "syncprof: %llu wait%s could not be blamed (the blame table was "
			     "full); their time is in the rows, without blame\n",
			(unsigned long long)p->blame_lost, p->blame_lost == 1 ? "" : "s");
	if (p->names_lost)
		fprintf(out, "syncprof: %llu lock name%s or creation site%s could not be kept (the "
			     "name table was full or busy)\n",
			(unsigned long long)p->names_lost, p->names_lost == 1 ? "" : "s",
			p->names_lost == 1 ? "" : "s");
	if (p->hold && p->hold_state_unread)
		fprintf(out, "syncprof: %llu of %llu samples of long holds' holders could not read "
			     "/proc/self/task (no /proc or no schedstat): their time is in 'other'\n",
			(unsigned long long)p->hold_state_unread,
			(unsigned long long)p->hold_state_samples);
	if (p->hold && p->hold_where_lost)
		fprintf(out, "syncprof: %llu of %llu samples of long holds' holders found no point "
			     "in their code (frames=N; no stack, or no answer to the signal): their "
			     "time is in the hold states only\n",
			(unsigned long long)p->hold_where_lost,
			(unsigned long long)(p->hold_where_lost + p->hold_where_points));
}

int sp_render_table(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o)
{
	const struct sp_rows *rows = &p->rows;
	size_t auto_len = sp_rows_common_prefix(rows);
	struct cells cells = { 0 };
	struct layout l;
	int total = 0, rc = layout_cells(p, o, auto_len, &l, &cells);

	if (rc)
		return rc;
	table_head(out, p);
	for (int c = 0; c < l.n; c++)
		total += l.width[c] + (c ? 2 : 0);
	if (o->merged || !rows->n) {
		print_part(out, p, o, &l, &cells, auto_len, total, PART_ALL);
	} else {
		size_t locks = 0;

		for (size_t i = 0; i < rows->n; i++)
			locks += sp_type_is_lock(rows->v[i].type) != 0;
		/* The locks' section even when empty: it says none was taken. */
		print_part(out, p, o, &l, &cells, auto_len, total, PART_LOCKS);
		if (locks < rows->n)
			print_part(out, p, o, &l, &cells, auto_len, total, PART_EVENTS);
	}
	if (!rows->n)
		fputs("(no lock activity recorded)\n", out);
	table_notes(out, p);
	if (p->hold)
		syscall_section(out, rows, o, auto_len);
	if (p->order.on)
		order_section(out, p, o, auto_len);
	cells_free(&cells);
	return 0;
}
