/*
 * render/json.c - "profile JSON version 1": the lossless serialization of
 * the profile model (docs/formats.md lists every key; the JSON Schema is
 * docs/profile.schema.json).
 *
 * Every fact of the model is written, so that src/read/profile_load.c
 * reads back the same profile and every renderer gives the same bytes
 * from the saved file as from the live process: metadata (pid, command,
 * clock, elapsed, lost calls, hold tracking and its sampling, the layout
 * of the histograms, how the rows were shaped and how many there were
 * before the top-N cut), per row its key, counters, histograms, resolved
 * site and stack (with offsets and inlined callers), its kind ("lock" for
 * lock contention, "event" for a wait for an event: derived from the type,
 * written for readers that split them as the table does) and, with hold
 * tracking, hold facts and blame; with lock-order checking, "lock_order":
 * the graph's counts and every cycle, each edge's two ends (object, type,
 * site, stack) and thread; the threads' time account ("accounting", and
 * "threads" one per line).
 *
 * The keys of version 1 keep their meaning; keys are only ever added.
 * Strings are escaped per RFC 8259 by sp_json_string() (render/text.c),
 * the one escaper of the project: UTF-8 passes through, control bytes
 * become \u00XX.  File paths are written as recorded, not shortened.
 */
#include "report/profile.h"
#include "report/render/text.h"

static void json_frame(FILE *out, const struct sp_frame *f)
{
	fputs("{\"function\":", out);
	sp_json_string(out, f->function);
	if (f->symbol) {
		fputs(",\"symbol\":", out);
		sp_json_string(out, f->symbol);
	}
	fputs(",\"file\":", out);
	sp_json_string(out, f->file);
	if (f->line)
		fprintf(out, ",\"line\":%u", f->line);
	else
		fputs(",\"line\":null", out);
	fputs(",\"dso\":", out);
	sp_json_string(out, f->dso);
	if (f->address)
		fprintf(out, ",\"address\":\"%#lx\"", (unsigned long)f->address);
	else
		fputs(",\"address\":null", out);
	if (f->offset)
		fprintf(out, ",\"offset\":%lu", (unsigned long)f->offset);
	else
		fputs(",\"offset\":null", out);
	if (f->n_inline) {
		fputs(",\"inlined\":[", out);
		for (unsigned i = 0; i < f->n_inline; i++) {
			fputs(i ? ",{\"function\":" : "{\"function\":", out);
			sp_json_string(out, f->inlined[i].function);
			if (f->inlined[i].symbol) {
				fputs(",\"symbol\":", out);
				sp_json_string(out, f->inlined[i].symbol);
			}
			fputs(",\"file\":", out);
			sp_json_string(out, f->inlined[i].file);
			if (f->inlined[i].line)
				fprintf(out, ",\"line\":%u}", f->inlined[i].line);
			else
				fputs(",\"line\":null}", out);
		}
		fputc(']', out);
	}
	fputc('}', out);
}

/*
 * A histogram twice: "<what>_hist", the log2 histogram that version 1
 * always had (each log-linear bucket lies in one log2 bucket, so it is
 * exact), and "<what>_buckets", the log-linear buckets that are not zero,
 * as [index, count] pairs in index order (the layout is the top level's
 * "hist").
 */
static void json_hist(FILE *out, const char *what, const struct sp_hist *h)
{
	uint64_t log2[SP_LOG2_BUCKETS] = { 0 };
	unsigned last = 0, first = 1;

	for (unsigned i = 0; i < h->n; i++) {
		unsigned k = sp_hist_log2(h->lo + i);

		log2[k] += h->v[i];
		if (log2[k])
			last = k + 1;
	}
	fprintf(out, ",\"%s_hist\":[", what);
	for (unsigned k = 0; k < last; k++)
		fprintf(out, "%s%llu", k ? "," : "", (unsigned long long)log2[k]);
	fprintf(out, "],\"%s_buckets\":[", what);
	for (unsigned i = 0; i < h->n; i++) {
		if (!h->v[i])
			continue;
		fprintf(out, "%s[%u,%llu]", first ? "" : ",", h->lo + i,
			(unsigned long long)h->v[i]);
		first = 0;
	}
	fputc(']', out);
}

/* With hold tracking: hold statistics, owner changes and blame. */
static void json_hold(FILE *out, const struct sp_row *r)
{
	const struct sp_row_detail *d = sp_row_d(r);

	fprintf(out, ",\"holds\":%llu,\"owner_changes\":%llu",
		(unsigned long long)r->holds, (unsigned long long)r->owner_changes);
	json_hist(out, "hold", &d->hold_hist);
	fputs(",\"blame\":[", out);
	for (uint32_t i = 0; i < d->n_blame; i++) {
		static const struct sp_frame unknown;

		fputs(i ? ",{\"site\":" : "{\"site\":", out);
		json_frame(out, d->blame[i].names ? d->blame[i].names : &unknown);
		if (sp_blame_has_root(&d->blame[i])) {
			/* A wait chain was seen: where its root holder took its lock. */
			fputs(",\"root\":", out);
			json_frame(out, d->blame[i].root_names ? d->blame[i].root_names : &unknown);
		}
		fprintf(out, ",\"wait_ns\":%llu,\"count\":%llu}",
			(unsigned long long)d->blame[i].wait_ns,
			(unsigned long long)d->blame[i].count);
	}
	fputc(']', out);
	/* What the holder was doing during the long holds (holdstate.c). */
	if (d->n_hold_states) {
		fputs(",\"hold_states\":{", out);
		for (uint32_t i = 0; i < d->n_hold_states; i++) {
			if (i)
				fputc(',', out);
			sp_json_string(out, d->hold_states[i].name);
			fprintf(out, ":%llu", (unsigned long long)d->hold_states[i].ns);
		}
		fputc('}', out);
	}
	/* ... and where in its code (frames=N); no site: the rest. */
	if (d->n_hold_where) {
		fputs(",\"hold_where\":[", out);
		for (uint32_t i = 0; i < d->n_hold_where; i++) {
			const struct sp_hold_where *w = &d->hold_where[i];
			struct sp_frame buf;

			fputs(i ? ",{" : "{", out);
			if (w->pc && w->names) {
				fputs("\"site\":", out);
				json_frame(out, sp_hold_where_site(w, &buf));
				fputc(',', out);
			}
			fputs("\"state\":", out);
			sp_json_string(out, w->state);
			fprintf(out, ",\"ns\":%llu}", (unsigned long long)w->ns);
		}
		fputc(']', out);
	}
}

static void json_stack(FILE *out, const struct sp_names *nm)
{
	fputs(",\"stack\":[", out);
	for (unsigned i = 0; i < nm->n_frames; i++) {
		if (i)
			fputc(',', out);
		json_frame(out, &nm->frames[i]);
	}
	fputc(']', out);
}

/* A per-object row's lock: its name and where it was created, if known. */
static void json_lock(FILE *out, const struct sp_row *r)
{
	if (r->n_objects != 1)
		return; /* coalesced: many locks */
	if (r->lock_name) {
		fputs(",\"lock_name\":", out);
		sp_json_string(out, r->lock_name);
	}
	if (r->names->created) {
		fputs(",\"created_at\":", out);
		json_frame(out, r->names->created);
		fprintf(out, ",\"created_by\":\"%s\"",
			r->names->created_how == SP_CREATED_INIT ? "init" : "first_use");
	}
}

static void json_row(FILE *out, const struct sp_row *r, int hold)
{
	fprintf(out, "{\"type\":\"%s\",\"kind\":\"%s\",\"object\":", sp_type_name(r->type),
		sp_type_kind(r->type));
	if (r->n_objects == 1)
		fprintf(out, "\"0x%lx\"", (unsigned long)r->obj);
	else
		fputs("null", out);
	fprintf(out, ",\"n_objects\":%llu,\"site\":", (unsigned long long)r->n_objects);
	json_frame(out, &r->names->site);
	json_stack(out, r->names);
	json_lock(out, r);
	fprintf(out,
		",\"acquisitions\":%llu,\"contended\":%llu,\"wait_ns\":%llu,\"wait_max_ns\":%llu",
		(unsigned long long)r->acquisitions, (unsigned long long)r->contended,
		(unsigned long long)r->wait_ns, (unsigned long long)r->wait_max_ns);
	if (hold && sp_type_hold_known(r->type))
		fprintf(out, ",\"hold_ns\":%llu,\"hold_max_ns\":%llu",
			(unsigned long long)r->hold_ns, (unsigned long long)r->hold_max_ns);
	else
		fputs(",\"hold_ns\":null,\"hold_max_ns\":null", out);
	fprintf(out, ",\"wait_p50_ns\":%llu,\"wait_p90_ns\":%llu,\"wait_p99_ns\":%llu",
		(unsigned long long)sp_row_percentile(r, 0.50),
		(unsigned long long)sp_row_percentile(r, 0.90),
		(unsigned long long)sp_row_percentile(r, 0.99));
	json_hist(out, "wait", &sp_row_d(r)->hist);
	if (hold)
		json_hold(out, r);
	fputc('}', out);
}

/*
 * "syscalls_under_lock": the system calls the holders of the rows' long
 * holds were blocked in, largest time first (at most 20; issue 24, I/O
 * under a lock).  Derived from the rows' hold states, so a re-render
 * writes it again from them; present only when there is one.
 */
static void json_syscalls_under_lock(FILE *out, const struct sp_rows *rows)
{
	struct sp_syscall_under_lock v[20];
	size_t n = sp_syscalls_under_lock(rows, v, 20);

	if (!n)
		return;
	if (n > 20)
		n = 20;
	fputs(",\"syscalls_under_lock\":[", out);
	for (size_t i = 0; i < n; i++) {
		const struct sp_row *r = v[i].row;

		fprintf(out, "%s{\"type\":\"%s\",\"object\":", i ? "," : "", sp_type_name(r->type));
		if (r->n_objects == 1)
			fprintf(out, "\"0x%lx\"", (unsigned long)r->obj);
		else
			fputs("null", out);
		fputs(",\"site\":", out);
		json_frame(out, &r->names->site);
		fputs(",\"syscall\":", out);
		sp_json_string(out, v[i].syscall);
		fprintf(out, ",\"ns\":%llu}", (unsigned long long)v[i].ns);
	}
	fputc(']', out);
}

static void json_order_end(FILE *out, const char *key, const struct sp_order_end *e)
{
	static const struct sp_names unknown;
	const struct sp_names *nm = e->names ? e->names : &unknown;

	fprintf(out, "\"%s\":{\"object\":\"0x%lx\",\"type\":\"%s\",\"site\":", key,
		(unsigned long)e->obj, sp_type_name(e->type));
	json_frame(out, &nm->site);
	json_stack(out, nm);
	fputc('}', out);
}

/* "lock_order": the graph's counts, then the cycles, one per line. */
static void json_order(FILE *out, const struct sp_lock_order *o)
{
	fprintf(out,
		",\"lock_order\":{\"edges_kept\":%llu,\"edges_dropped\":%llu,"
		"\"cycles_dropped\":%llu,\"searches_cut\":%llu,\"cycles\":[",
		(unsigned long long)o->edges_kept, (unsigned long long)o->edges_dropped,
		(unsigned long long)o->cycles_dropped, (unsigned long long)o->searches_cut);
	for (size_t i = 0; i < o->n_cycles; i++) {
		const struct sp_cycle *c = &o->cycles[i];

		fprintf(out, "%s{\"count\":%llu,\"edges\":[", i ? ",\n" : "\n",
			(unsigned long long)c->count);
		for (unsigned k = 0; k < c->n_edges; k++) {
			fputs(k ? ",{" : "{", out);
			json_order_end(out, "held", &c->edges[k].held);
			fputc(',', out);
			json_order_end(out, "acquired", &c->edges[k].acquired);
			fprintf(out, ",\"thread\":%d}", c->edges[k].tid);
		}
		fputs("]}", out);
	}
	fputs("]}", out);
}

/* "mappings": the executable mappings that the rows' addresses fall in
 * (mappings.c), when there are any. */
static void json_mappings(FILE *out, const struct sp_profile *p)
{
	if (!p->n_mappings)
		return;
	fputs("\"mappings\":[", out);
	for (size_t i = 0; i < p->n_mappings; i++) {
		const struct sp_mapping *m = &p->mappings[i];

		fprintf(out, "%s{\"start\":\"0x%lx\",\"limit\":\"0x%lx\",\"offset\":\"0x%lx\","
			"\"file\":",
			i ? "," : "", (unsigned long)m->start, (unsigned long)m->limit,
			(unsigned long)m->offset);
		sp_json_string(out, m->file);
		fputs(",\"build_id\":", out);
		sp_json_string(out, m->build_id);
		fputc('}', out);
	}
	fputs("],", out);
}

static void json_figs(FILE *out, uint64_t lifetime, uint64_t running, uint64_t preempted,
		      uint64_t blocked, uint64_t sync_wait)
{
	fprintf(out,
		"\"lifetime_ns\":%llu,\"running_ns\":%llu,\"preempted_ns\":%llu,"
		"\"blocked_ns\":%llu,\"sync_wait_ns\":%llu",
		(unsigned long long)lifetime, (unsigned long long)running,
		(unsigned long long)preempted, (unsigned long long)blocked,
		(unsigned long long)sync_wait);
}

/* "accounting" and "threads": the threads' time (collect.c), when kept;
 * "accounting":{"unavailable":"why"} when the kernel gave none. */
static void json_account(FILE *out, const struct sp_account *a)
{
	if (a->state == SP_ACCOUNT_NONE)
		return;
	if (a->state == SP_ACCOUNT_UNAVAILABLE) {
		fputs("\"accounting\":{\"unavailable\":", out);
		sp_json_string(out, a->unavailable ? a->unavailable : "");
		fputs("},", out);
		return;
	}
	fprintf(out, "\"accounting\":{\"threads\":%llu,\"exited\":%llu,",
		(unsigned long long)a->threads, (unsigned long long)a->exited);
	if (a->unread)
		fprintf(out, "\"exited_unread\":%llu,", (unsigned long long)a->unread);
	if (a->skipped)
		fprintf(out, "\"exited_skipped\":%llu,", (unsigned long long)a->skipped);
	if (a->reset)
		fputs("\"rows_reset\":true,", out);
	json_figs(out, a->lifetime_ns, a->running_ns, a->preempted_ns, a->blocked_ns,
		  a->sync_wait_ns);
	fputs("},\"threads\":[", out);
	for (size_t i = 0; i < a->n; i++) {
		const struct sp_thread_account *t = &a->v[i];

		fprintf(out, "%s{\"tid\":%d,\"name\":", i ? ",\n" : "\n", t->tid);
		sp_json_string(out, t->name);
		fprintf(out, ",\"exited\":%s,", t->exited ? "true" : "false");
		json_figs(out, t->lifetime_ns, t->running_ns, t->preempted_ns, t->blocked_ns,
			  t->sync_wait_ns);
		fputc('}', out);
	}
	fputs("],\n", out);
}

int sp_render_json(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o)
{
	const struct sp_rows *rows = &p->rows;

	(void)o; /* the profile says how it was shaped */
	fprintf(out, "{\"format\":\"syncprof-profile\",\"version\":1,\"pid\":%d,\"command\":",
		p->pid);
	sp_json_string(out, p->command ? p->command : "");
	if (p->interrupted) {
		fputs(",\"interrupted\":", out);
		sp_json_string(out, p->interrupted);
	}
	fputs(",\"clock\":", out);
	sp_json_string(out, p->clock ? p->clock : "monotonic");
	fprintf(out,
		",\"elapsed_ns\":%llu,\"coalesced\":%s,\"sort\":\"%s\","
		"\"lost_events\":%llu,\"hold_tracking\":%s,",
		(unsigned long long)p->elapsed_ns, p->coalesced ? "true" : "false",
		sp_sort_name(p->sort), (unsigned long long)p->lost, p->hold ? "true" : "false");
	if (p->hold)
		fprintf(out, "\"hold_sample\":%u,\"hold_untracked\":%llu,\"blame_lost\":%llu,",
			p->hold_sample ? p->hold_sample : 1, (unsigned long long)p->hold_untracked,
			(unsigned long long)p->blame_lost);
	if (p->hold && p->hold_state_samples)
		fprintf(out, "\"hold_state_samples\":%llu,\"hold_state_cpu_ns\":%llu,",
			(unsigned long long)p->hold_state_samples,
			(unsigned long long)p->hold_state_cpu_ns);
	if (p->hold && (p->hold_clock_ns || p->hold_clock_switches))
		fprintf(out, "\"hold_clock_ns\":%llu,\"hold_clock_switches\":%llu,",
			(unsigned long long)p->hold_clock_ns,
			(unsigned long long)p->hold_clock_switches);
	if (p->hold && p->hold_state_unread)
		fprintf(out, "\"hold_state_unread\":%llu,", (unsigned long long)p->hold_state_unread);
	if (p->hold && (p->hold_where_points || p->hold_where_lost))
		fprintf(out, "\"hold_where_points\":%llu,\"hold_where_lost\":%llu,",
			(unsigned long long)p->hold_where_points,
			(unsigned long long)p->hold_where_lost);
	if (p->hold && p->hold_late_ticks)
		fprintf(out, "\"hold_ticker_late\":%llu,\"hold_ticker_gap_max_ns\":%llu,",
			(unsigned long long)p->hold_late_ticks,
			(unsigned long long)p->hold_gap_max_ns);
	if (p->names_lost)
		fprintf(out, "\"names_lost\":%llu,", (unsigned long long)p->names_lost);
	fprintf(out, "\"hist\":{\"layout\":\"log-linear\",\"sub_buckets\":%u,\"buckets\":%u},",
		SP_HIST_SUB, SP_HIST_BUCKETS);
	json_mappings(out, p);
	json_account(out, &p->account);
	fprintf(out, "\"rows_total\":%zu,\"rows\":[", rows->n_total > rows->n ? rows->n_total
									   : rows->n);
	for (size_t i = 0; i < rows->n; i++) {
		fputs(i ? ",\n" : "\n", out);
		json_row(out, &rows->v[i], p->hold);
	}
	fputc(']', out);
	json_syscalls_under_lock(out, rows);
	if (p->order.on)
		json_order(out, &p->order);
	fputs("}\n", out);
	return 0;
}
