/*
 * cmd_trace_whatif.c - 'syncprof trace what-if': option parsing and
 * output.  The analysis is in the offline layer (src/analyse/whatif.c, on
 * trace_model.c's model); this file refuses what it cannot use with one
 * line on stderr and a non-zero status - a trace whose threads dropped
 * events, or that holds only contended acquisitions, besides what
 * trace_load.c refuses - and prints text or JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace_load.h"

#include "analyse/trace_model.h"
#include "report/render/text.h"

const char cli_whatif_usage[] =
	"Usage: syncprof trace what-if FILE --site SITE --factor F [--json] [--top N]\n"
	"                              [--samples N]\n"
	"\n"
	"Predict the wall time of the traced run had every critical section that\n"
	"began at SITE taken F times as long (F > 0: 0.5 halves them).  SITE is\n"
	"'file:line' or a function name, as reports print call sites.  The trace's\n"
	"per-thread timelines are replayed: work outside locks as measured, work in\n"
	"the chosen holds scaled, each lock's hand-off order and its measured\n"
	"hand-off latency (release to waiter running) kept; condition, semaphore,\n"
	"barrier and join waits keep their measured length.  Prints the measured\n"
	"wall time (the span of the trace's lock events), the replay at factor 1\n"
	"(the model's own error), the predicted wall time with a 90% interval,\n"
	"what bounds it (the predicted run's critical path: its threads, their\n"
	"work in and out of the scaled holds, their waits for locks and the waits\n"
	"kept as measured; said plainly when the scaled holds are not on it), the\n"
	"change in wait per lock with its interval, and the threads on the path;\n"
	"--json prints one object instead.  --top N: lock and thread rows shown\n"
	"(default 20).  --samples N: replicates for the intervals, each a pair of\n"
	"replays with every hand-off latency drawn again from the measured ones,\n"
	"and for the wall time a draw of the run's 20 blocks of time, so that it\n"
	"widens when the effect of F changes during the run (default 40, fixed\n"
	"seed: the same file gives the same interval; 0: no interval).\n"
	"Needs a complete trace of every acquisition, with no dropped events:\n"
	"  syncprof run --trace FILE --trace-events all --trace-buffer 268435456 \\\n"
	"      -- PROGRAM [ARGS]\n"
	"(compiled in: SYNCPROF_OPTIONS=trace=FILE,trace_events=all,\n"
	"trace_buffer=268435456); the default trace holds contended acquisitions\n"
	"only and is refused with that line.  docs/whatif.md says what the model\n"
	"assumes and where it breaks (more threads than CPUs, condvars, I/O).\n"
	"Exit status: 0 done; 1 error (not a trace, corrupt, events missing, SITE\n"
	"not in the trace); 2 usage; 3 incomplete file.\n";

static int parse_samples(const char *cmd, const char *v, unsigned *samples)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (!*v || *end || n > 1000 || v[0] == '-') {
		cli_error(cmd, "--samples wants a number from 0 to 1000, not '%s'", v);
		return -1;
	}
	*samples = (unsigned)n;
	return 0;
}

/*
 * The traced program, for the command line that records it again: the
 * first file of the trace's latest MAPS (the kernel lists the executable
 * first), then "ARGS"; "PROGRAM [ARGS]" when the trace has no maps.
 */
static void program_of(const struct sp_trace_reader *r, char *buf, size_t size)
{
	const char *p = r->maps, *end = r->maps ? r->maps + r->maps_len : NULL;

	snprintf(buf, size, "PROGRAM [ARGS]");
	while (p && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *slash = memchr(p, '/', (size_t)(eol - p));

		if (slash) {
			snprintf(buf, size, "%.*s [ARGS]", (int)(eol - slash), slash);
			return;
		}
		p = eol + 1;
	}
}

static int lock_row_cmp(const void *a, const void *b, void *arg)
{
	const struct sp_whatif *sort_w = arg;
	const struct sp_whatif_lock *x = &sort_w->locks[*(const uint32_t *)a];
	const struct sp_whatif_lock *y = &sort_w->locks[*(const uint32_t *)b];
	int64_t dx = llabs(x->wait_predicted - x->wait_measured);
	int64_t dy = llabs(y->wait_predicted - y->wait_measured);

	if (dx != dy)
		return dx > dy ? -1 : 1;
	if (x->wait_measured != y->wait_measured)
		return x->wait_measured > y->wait_measured ? -1 : 1;
	if (x->acquisitions != y->acquisitions)
		return x->acquisitions > y->acquisitions ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int thread_crit_cmp(const void *a, const void *b, void *arg)
{
	const struct sp_whatif *sort_w = arg;
	const struct sp_whatif_thread *x = &sort_w->threads[*(const uint32_t *)a];
	const struct sp_whatif_thread *y = &sort_w->threads[*(const uint32_t *)b];

	if (x->critical_ns != y->critical_ns)
		return x->critical_ns > y->critical_ns ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int kept_site_cmp(const void *a, const void *b, void *arg)
{
	const struct sp_whatif *sort_w = arg;
	int64_t x = sort_w->crit_site_ns[*(const uint32_t *)a];
	int64_t y = sort_w->crit_site_ns[*(const uint32_t *)b];

	if (x != y)
		return x > y ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static uint32_t *order_of(size_t n, const struct sp_whatif *w,
			  int (*cmp)(const void *, const void *, void *))
{
	uint32_t *v = malloc((n ? n : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	qsort_r(v, n, sizeof(*v), cmp, (void *)w);
	return v;
}

static double pct(int64_t part, int64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The site with the most time (under @below) in waits kept as measured
 * on the predicted critical path, or UINT32_MAX. */
static uint32_t top_kept_site(const struct sp_trace_model *m, const struct sp_whatif *w,
			      int64_t below)
{
	uint32_t best = UINT32_MAX;

	for (size_t i = 0; i < m->n_sites; i++)
		if (w->crit_site_ns[i] > 0 && w->crit_site_ns[i] < below &&
		    (best == UINT32_MAX || w->crit_site_ns[i] > w->crit_site_ns[best]))
			best = (uint32_t)i;
	return best;
}

/* Where the prediction stands: the scaled holds off the critical path at
 * factor 1 and at F; leaving it at F (under 1% of it, from 1% or more);
 * under 1% at both; on it (1% or more at F). */
static const char *verdict(const struct sp_whatif *w)
{
	const struct sp_whatif_path *cp = &w->path_predicted, *c1 = &w->path_replayed;
	int small = cp->scaled_ns * 100 < cp->total_ns;

	if (cp->scaled_ns <= 0 && c1->scaled_ns <= 0)
		return "off_path";
	if (!small)
		return "on_path";
	return c1->scaled_ns * 100 >= c1->total_ns ? "leaves_path" : "minor";
}

/* What bounds the path other than the scaled holds, in words. */
static void bound_words(const struct sp_trace_model *m, const struct sp_whatif *w, char *buf,
			size_t size)
{
	const struct sp_whatif_path *cp = &w->path_predicted;

	if (cp->kept_ns >= cp->work_ns && cp->kept_ns >= cp->lock_ns && cp->kept_ns > 0) {
		uint32_t k = top_kept_site(m, w, INT64_MAX);

		snprintf(buf, size, "the waits kept as measured (%.1f%% of it%s%s), which do not "
			 "move with F", pct(cp->kept_ns, cp->total_ns),
			 k != UINT32_MAX ? ", most at " : "", k != UINT32_MAX ? m->sites[k].name : "");
	} else if (cp->lock_ns > cp->work_ns) {
		snprintf(buf, size, "waiting for locks (%.1f%% of it: hand-offs after a release "
			 "and lock calls, in the measured order)", pct(cp->lock_ns, cp->total_ns));
	} else {
		snprintf(buf, size, "the threads' work outside the scaled holds (%.1f%% of it), "
			 "kept as measured", pct(cp->work_ns, cp->total_ns));
	}
}

/* The interval's line: its bounds, as changes from the measured wall,
 * and what its replicates drew again. */
static void print_interval(const struct sp_whatif *w)
{
	char drawn[160];

	if (w->handoffs_measured && w->blocks)
		snprintf(drawn, sizeof(drawn), "%u replays with the %" PRIu64 " measured hand-off "
			 "latencies and the run's %u blocks drawn again", w->samples,
			 w->handoffs_measured, w->blocks);
	else if (w->handoffs_measured)
		snprintf(drawn, sizeof(drawn), "%u replays with the %" PRIu64 " measured hand-off "
			 "latencies drawn again", w->samples, w->handoffs_measured);
	else
		snprintf(drawn, sizeof(drawn), "the run's %u blocks drawn again %u times; no "
			 "hand-off latency to draw", w->blocks, w->samples);
	printf("  90%% interval  %12.3f .. %.3f ms  (%+.2f%% .. %+.2f%%: %s)\n",
	       cli_ms(w->predicted_low_ns), cli_ms(w->predicted_high_ns),
	       pct(w->predicted_low_ns - w->measured_wall_ns, w->measured_wall_ns),
	       pct(w->predicted_high_ns - w->measured_wall_ns, w->measured_wall_ns), drawn);
}

/* The text's head: the site and factor, the measured, replayed and
 * predicted wall times, the interval. */
static void whatif_walls(const struct sp_trace_model *m, const struct sp_whatif *w)
{
	int first = 1;

	printf("what-if: every critical section begun at %s takes %gx as long\n", w->site,
	       w->factor);
	printf("sites:   ");
	for (size_t i = 0; i < m->n_sites; i++)
		if (w->scaled_site[i]) {
			printf("%s%s", first ? "" : ", ", m->sites[i].name);
			first = 0;
		}
	printf(" (%" PRIu64 " holds)\n\n", w->scaled_holds);
	printf("measured wall   %12.3f ms  (the span of the trace's lock events)\n",
	       cli_ms(w->measured_wall_ns));
	printf("replayed wall   %12.3f ms  (factor 1: the model's own error %+.2f%%)\n",
	       cli_ms(w->replay_wall_ns), pct(w->replay_wall_ns - w->measured_wall_ns,
					   w->measured_wall_ns));
	printf("predicted wall  %12.3f ms  (%+.2f%% of measured)\n", cli_ms(w->predicted_wall_ns),
	       pct(w->predicted_wall_ns - w->measured_wall_ns, w->measured_wall_ns));
	if (w->samples && !w->handoffs_measured && !w->blocks)
		printf("  90%% interval  %12.3f .. %.3f ms  (the trace has no hand-off latency to "
		       "draw again)\n", cli_ms(w->predicted_low_ns), cli_ms(w->predicted_high_ns));
	else if (w->samples)
		print_interval(w);
	else
		printf("  (no interval: --samples 0)\n");
	if (w->inconsistent)
		printf("note: %" PRIu64 " acquisitions were granted before the release they follow "
		       "(clock or missing events); the replay waits for the release\n",
		       w->inconsistent);
}

/* What bounds the predicted run: its critical path in parts, and where
 * the scaled holds stand on it (verdict()). */
static void whatif_bound(const struct sp_trace_model *m, const struct sp_whatif *w)
{
	const struct sp_whatif_path *cp = &w->path_predicted, *c1 = &w->path_replayed;
	char bound[512];
	const char *v = verdict(w);

	printf("\nwhat bounds it: the predicted run's critical path, %.3f ms over %u thread%s "
	       "and %" PRIu64 " hand-off%s, each lock's hand-off order kept as measured:\n",
	       cli_ms(cp->total_ns), cp->threads, cp->threads == 1 ? "" : "s", cp->handoffs,
	       cp->handoffs == 1 ? "" : "s");
	printf("  in the scaled holds     %12.3f ms %6.1f%%  (at factor 1: %.3f ms, %.1f%%)\n",
	       cli_ms(cp->scaled_ns), pct(cp->scaled_ns, cp->total_ns), cli_ms(c1->scaled_ns),
	       pct(c1->scaled_ns, c1->total_ns));
	printf("  other work              %12.3f ms %6.1f%%\n", cli_ms(cp->work_ns),
	       pct(cp->work_ns, cp->total_ns));
	printf("  waiting for locks       %12.3f ms %6.1f%%  (after a release, to the waiter "
	       "running; lock calls)\n",
	       cli_ms(cp->lock_ns), pct(cp->lock_ns, cp->total_ns));
	printf("  waits kept as measured  %12.3f ms %6.1f%%  (condition, semaphore, barrier; "
	       "joins' delays)\n",
	       cli_ms(cp->kept_ns), pct(cp->kept_ns, cp->total_ns));
	if (cp->start_ns)
		printf("  before its first thread %12.3f ms %6.1f%%\n", cli_ms(cp->start_ns),
		       pct(cp->start_ns, cp->total_ns));
	{
		int64_t below = INT64_MAX;

		for (int i = 0; i < 3; i++) {
			uint32_t k = top_kept_site(m, w, below);

			if (k == UINT32_MAX)
				break;
			printf("%s%s %.3f ms", i ? ", " : "  largest kept waits on it: ",
			       m->sites[k].name, cli_ms(w->crit_site_ns[k]));
			below = w->crit_site_ns[k];
		}
		if (below != INT64_MAX)
			printf("\n");
	}
	bound_words(m, w, bound, sizeof(bound));
	if (!strcmp(v, "off_path"))
		printf("=> the holds begun at %s are not on the critical path, at factor 1 nor at "
		       "%g: the wall time is bounded by %s, and scaling them does not change it "
		       "(their locks' waits still move: below)\n",
		       w->site, w->factor, bound);
	else if (!strcmp(v, "leaves_path"))
		printf("=> the holds begun at %s are %.3f ms (%.1f%%) of the critical path at "
		       "factor 1, and only %.3f ms (%.1f%%) at %g: the wall time is then bounded by "
		       "%s\n",
		       w->site, cli_ms(c1->scaled_ns), pct(c1->scaled_ns, c1->total_ns),
		       cli_ms(cp->scaled_ns), pct(cp->scaled_ns, cp->total_ns), w->factor, bound);
	else if (!strcmp(v, "minor"))
		printf("=> the holds begun at %s are only %.3f ms (%.1f%%) of the predicted "
		       "critical path (%.3f ms at factor 1): the wall time is bounded by %s, and "
		       "scaling them moves it little\n",
		       w->site, cli_ms(cp->scaled_ns), pct(cp->scaled_ns, cp->total_ns),
		       cli_ms(c1->scaled_ns), bound);
	else
		printf("=> the holds begun at %s are %.3f ms (%.1f%%) of the predicted critical "
		       "path (%.3f ms at factor 1): the wall time moves with them, as far as the "
		       "measured hand-off order lets it\n",
		       w->site, cli_ms(cp->scaled_ns), pct(cp->scaled_ns, cp->total_ns),
		       cli_ms(c1->scaled_ns));
}

/* The wait per lock, @top rows in the order @locks. */
static void whatif_lock_rows(const struct sp_trace_model *m, const struct sp_whatif *w,
			     unsigned top, const uint32_t *locks)
{
	size_t shown = 0;

	printf("\nwait per lock (ms; the interval from the same replays' hand-off latencies):\n"
	       "%-18s %-9s %-32s %10s %10s %12s %12s %12s %23s\n",
	       "lock", "type", "first site", "acquired", "contended", "measured", "predicted",
	       "change", "90% interval");
	for (size_t i = 0; i < m->n_locks && shown < top; i++) {
		const struct sp_tm_lock *l = &m->locks[locks[i]];
		const struct sp_whatif_lock *wl = &w->locks[locks[i]];
		char obj[32], iv[48];

		if (!wl->acquisitions)
			continue;
		if (l->name)
			snprintf(obj, sizeof(obj), "%s", l->name);
		else
			snprintf(obj, sizeof(obj), "0x%" PRIx64, l->obj);
		if (w->samples && w->lock_intervals)
			snprintf(iv, sizeof(iv), "%.3f .. %.3f", cli_ms(wl->wait_low), cli_ms(wl->wait_high));
		else
			snprintf(iv, sizeof(iv), "-");
		printf("%-18.18s %-9s %-32.32s %10" PRIu64 " %10" PRIu64
		       " %12.3f %12.3f %+12.3f %23s\n",
		       obj, cli_lock_type(l->type), m->sites[l->site].name, wl->acquisitions,
		       wl->contended_measured, cli_ms(wl->wait_measured), cli_ms(wl->wait_predicted),
		       cli_ms(wl->wait_predicted - wl->wait_measured), iv);
		shown++;
	}
	if (shown < m->n_locks)
		printf("(%zu more locks)\n", m->n_locks - shown);
}

/* Per thread, @top rows in the order @threads, and the critical path's
 * threads. */
static void whatif_thread_rows(const struct sp_trace_model *m, const struct sp_whatif *w,
			       unsigned top, const uint32_t *threads)
{
	printf("\nper thread (ms since the trace's start; waits on locks):\n"
	       "%-8s %-16s %8s %12s %12s %12s %12s %12s\n",
	       "tid", "thread", "holds", "end", "end pred.", "wait", "wait pred.", "crit. path");
	for (size_t i = 0; i < m->n_threads && i < top; i++) {
		const struct sp_tm_thread *th = &m->threads[threads[i]];
		const struct sp_whatif_thread *wt = &w->threads[threads[i]];

		printf("%-8u %-16.16s %8" PRId64 " %12.3f %12.3f %12.3f %12.3f %12.3f\n", th->tid,
		       th->name, wt->scaled_holds, cli_ms(wt->end_measured - m->first_ns),
		       cli_ms(wt->end_predicted - m->first_ns), cli_ms(wt->wait_measured),
		       cli_ms(wt->wait_predicted), cli_ms(wt->critical_ns));
	}
	if (m->n_threads > top)
		printf("(%zu more threads)\n", m->n_threads - top);
	printf("\ncritical path of the predicted run:");
	for (size_t i = 0; i < m->n_threads && i < top; i++) {
		const struct sp_whatif_thread *wt = &w->threads[threads[i]];

		if (wt->critical_ns <= 0)
			break;
		printf("%s %u %s %.1f%% (scaled %.3f, lock waits %.3f, kept waits %.3f ms)",
		       i ? "," : "", m->threads[threads[i]].tid, m->threads[threads[i]].name,
		       pct(wt->critical_ns, w->predicted_wall_ns), cli_ms(wt->crit_scaled_ns),
		       cli_ms(wt->crit_lock_ns), cli_ms(wt->crit_kept_ns));
	}
	printf("\n");
}

static void whatif_text(const struct cli_trace *a, const struct sp_whatif *w, unsigned top,
			const uint32_t *locks, const uint32_t *threads)
{
	whatif_walls(&a->m, w);
	whatif_bound(&a->m, w);
	whatif_lock_rows(&a->m, w, top, locks);
	whatif_thread_rows(&a->m, w, top, threads);
}

static void json_path(const char *key, const struct sp_whatif_path *cp)
{
	printf("\"%s\":{\"total_ns\":%" PRId64 ",\"scaled_ns\":%" PRId64 ",\"work_ns\":%" PRId64
	       ",\"lock_wait_ns\":%" PRId64 ",\"kept_wait_ns\":%" PRId64 ",\"start_ns\":%" PRId64
	       ",\"handoffs\":%" PRIu64 ",\"joins\":%" PRIu64 ",\"threads\":%u}",
	       key, cp->total_ns, cp->scaled_ns, cp->work_ns, cp->lock_ns, cp->kept_ns,
	       cp->start_ns, cp->handoffs, cp->joins, cp->threads);
}

/* The waits kept as measured on the predicted critical path, by site,
 * in the order @kept. */
static void json_kept_waits(const struct sp_trace_model *m, const struct sp_whatif *w,
			    const uint32_t *kept)
{
	int first;

	first = 1;
	for (size_t j = 0; j < m->n_sites; j++) {
		uint32_t i = kept[j];

		if (w->crit_site_ns[i] <= 0)
			break;
		printf("%s{\"site\":", first ? "" : ",");
		sp_json_string(stdout, m->sites[i].name);
		printf(",\"ns\":%" PRId64 "}", w->crit_site_ns[i]);
		first = 0;
	}
}

/* Each lock acquired, in the order @locks. */
static void json_per_lock(const struct sp_trace_model *m, const struct sp_whatif *w,
			  const uint32_t *locks)
{
	int first;

	first = 1;
	for (size_t i = 0; i < m->n_locks; i++) {
		const struct sp_tm_lock *l = &m->locks[locks[i]];
		const struct sp_whatif_lock *wl = &w->locks[locks[i]];

		if (!wl->acquisitions)
			continue;
		printf("%s{\"object\":\"0x%" PRIx64 "\"", first ? "" : ",", l->obj);
		cli_json_lock_name(l);
		printf(",\"type\":");
		sp_json_string(stdout, cli_lock_type(l->type));
		printf(",\"site\":");
		sp_json_string(stdout, m->sites[l->site].name);
		printf(",\"acquisitions\":%" PRIu64 ",\"contended_measured\":%" PRIu64
		       ",\"contended_predicted\":%" PRIu64 ",\"wait_measured_ns\":%" PRId64
		       ",\"wait_replayed_ns\":%" PRId64 ",\"wait_predicted_ns\":%" PRId64
		       ",\"wait_change_ns\":%" PRId64 ",\"wait_predicted_low_ns\":%" PRId64
		       ",\"wait_predicted_high_ns\":%" PRId64 ",\"critical_path_handoff_ns\":%" PRId64
		       ",\"critical_path_handoffs\":%" PRIu64 "}",
		       wl->acquisitions, wl->contended_measured, wl->contended_predicted,
		       wl->wait_measured, wl->wait_replayed, wl->wait_predicted,
		       wl->wait_predicted - wl->wait_measured, wl->wait_low, wl->wait_high,
		       wl->crit_handoff_ns, wl->crit_handoffs);
		first = 0;
	}
}

static void json_per_thread(const struct sp_trace_model *m, const struct sp_whatif *w)
{
	for (size_t i = 0; i < m->n_threads; i++) {
		const struct sp_tm_thread *th = &m->threads[i];
		const struct sp_whatif_thread *wt = &w->threads[i];

		printf("%s{\"tid\":%u,\"name\":", i ? "," : "", th->tid);
		sp_json_string(stdout, th->name);
		printf(",\"holds_at_site\":%" PRId64 ",\"held_at_site_ns\":%" PRId64
		       ",\"end_measured_ns\":%" PRId64 ",\"end_predicted_ns\":%" PRId64
		       ",\"wait_measured_ns\":%" PRId64 ",\"wait_predicted_ns\":%" PRId64
		       ",\"critical_path_ns\":%" PRId64 ",\"critical_path_scaled_ns\":%" PRId64
		       ",\"critical_path_lock_wait_ns\":%" PRId64
		       ",\"critical_path_kept_wait_ns\":%" PRId64 "}",
		       wt->scaled_holds, wt->scaled_ns_measured, wt->end_measured - m->first_ns,
		       wt->end_predicted - m->first_ns, wt->wait_measured, wt->wait_predicted,
		       wt->critical_ns, wt->crit_scaled_ns, wt->crit_lock_ns, wt->crit_kept_ns);
	}
}

static void whatif_json(const struct cli_trace *a, const struct sp_whatif *w,
			const uint32_t *locks, const uint32_t *threads, const uint32_t *kept)
{
	const struct sp_trace_model *m = &a->m;
	int first = 1;

	printf("{\"format\":\"syncprof-whatif\",\"version\":1,\"trace\":");
	sp_json_string(stdout, a->path);
	printf(",\"site\":");
	sp_json_string(stdout, w->site);
	printf(",\"matched_sites\":[");
	for (size_t i = 0; i < m->n_sites; i++)
		if (w->scaled_site[i]) {
			if (!first)
				putchar(',');
			sp_json_string(stdout, m->sites[i].name);
			first = 0;
		}
	printf("],\"factor\":%.17g,\"scaled_holds\":%" PRIu64 ",\"measured_wall_ns\":%" PRId64
	       ",\"replay_wall_ns\":%" PRId64 ",\"predicted_wall_ns\":%" PRId64
	       ",\"predicted_wall_low_ns\":%" PRId64 ",\"predicted_wall_high_ns\":%" PRId64
	       ",\"interval\":{\"level\":0.9,\"samples\":%u,\"seed\":%" PRIu64
	       ",\"handoffs_measured\":%" PRIu64 ",\"blocks\":%u}"
	       ",\"handoff_median_ns\":%" PRId64 ",\"inconsistent\":%" PRIu64 ",\"bound\":{"
	       "\"verdict\":\"%s\",\"order_kept\":true,",
	       w->factor, w->scaled_holds, w->measured_wall_ns, w->replay_wall_ns,
	       w->predicted_wall_ns, w->predicted_low_ns, w->predicted_high_ns, w->samples,
	       SP_WHATIF_SEED, w->handoffs_measured, w->blocks, w->handoff_median_ns,
	       w->inconsistent,
	       verdict(w));
	json_path("predicted", &w->path_predicted);
	putchar(',');
	json_path("replayed", &w->path_replayed);
	printf(",\"kept_waits\":[");
	json_kept_waits(m, w, kept);
	printf("]},\"per_lock\":[");
	json_per_lock(m, w, locks);
	printf("],\"per_thread\":[");
	json_per_thread(m, w);
	printf("],\"critical_path\":[");
	for (size_t i = 0; i < m->n_threads; i++) {
		const struct sp_whatif_thread *wt = &w->threads[threads[i]];

		if (wt->critical_ns <= 0)
			break;
		printf("%s{\"tid\":%u,\"ns\":%" PRId64 "}", i ? "," : "",
		       m->threads[threads[i]].tid, wt->critical_ns);
	}
	printf("]}\n");
}

/* What the command line asks for. */
struct whatif_args {
	const char *path, *site;
	double factor;
	unsigned top, samples;
	int json;
};

/* The factor's text: 0, or -1 after one line on stderr. */
static int parse_factor(const char *cmd, const char *v, double *factor)
{
	char *end;

	errno = 0;
	*factor = strtod(v, &end);
	if (!*v || *end || errno || !isfinite(*factor) || *factor <= 0 || *factor > 1e6) {
		cli_error(cmd, "--factor wants a number above 0 and at most 1e6, not '%s'", v);
		return -1;
	}
	return 0;
}

/* The command line into @o: 0, 2 (usage, after one line on stderr) or
 * -1 (--help printed). */
static int parse_whatif(const char *cmd, int argc, char **argv, struct whatif_args *o)
{
	const char *factor_s = NULL;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL, *opt = argv[i];

		if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
			fputs(cli_whatif_usage, stdout);
			return -1;
		} else if (!strcmp(opt, "--json")) {
			o->json = 1;
			continue;
		} else if (!strcmp(opt, "--site") || !strcmp(opt, "--factor") ||
			   !strcmp(opt, "--top") || !strcmp(opt, "--samples")) {
			if (i + 1 == argc) {
				cli_error(cmd, "%s needs a value (see --help)", opt);
				return 2;
			}
			v = argv[++i];
		} else if (!strncmp(opt, "--site=", 7) || !strncmp(opt, "--factor=", 9) ||
			   !strncmp(opt, "--top=", 6) || !strncmp(opt, "--samples=", 10)) {
			v = strchr(opt, '=') + 1;
		} else {
			if (cli_take_file(cmd, opt, &o->path))
				return 2;
			continue;
		}
		if (!strncmp(opt, "--site", 6))
			o->site = v;
		else if (!strncmp(opt, "--factor", 8))
			factor_s = v;
		else if (!strncmp(opt, "--samples", 9) ? parse_samples(cmd, v, &o->samples)
						       : cli_parse_top(cmd, v, &o->top))
			return 2;
	}
	if (!o->path || !o->site || !factor_s) {
		cli_error(cmd, "FILE, --site and --factor are needed (see --help)");
		return 2;
	}
	if (!*o->site) {
		cli_error(cmd, "--site is empty: give 'file:line' or a function name");
		return 2;
	}
	return parse_factor(cmd, factor_s, &o->factor) ? 2 : 0;
}

/* A model the replay cannot use, refused with one line: 1; else 0. */
static int refused(const struct cli_trace *a)
{
	char prog[512];

	if (a->m.dropped) {
		cli_error(a->cmd,
			  "'%s': %" PRIu64 " events were dropped (a thread's buffer was full): the "
			  "replay needs every event; trace again with a larger trace_buffer",
			  a->path, a->m.dropped);
		return 1;
	}
	if (!a->m.contended_only && !a->m.missing_acquires && !a->m.missing_releases)
		return 0;
	program_of(&a->r, prog, sizeof(prog));
	cli_error(a->cmd,
		  "'%s' %s (%" PRIu64 " releases without their acquisition, %" PRIu64
		  " acquisitions without their release); the replay needs every hold, "
		  "so record it again with: syncprof run --trace %s --trace-events all "
		  "--trace-buffer 268435456 -- %s (compiled in: SYNCPROF_OPTIONS=trace=%s,"
		  "trace_events=all,trace_buffer=268435456)",
		  a->path,
		  a->m.contended_only ? "is a default trace, of contended acquisitions only"
				      : "lacks acquisitions or releases",
		  a->m.missing_acquires, a->m.missing_releases, a->path, prog, a->path);
	return 1;
}

/* sp_whatif_run() failed with @rc: one line, naming a few sites when the
 * site is not in the trace, so that the user can pick one. */
static void run_failed(const struct cli_trace *a, const struct sp_whatif *w, int rc)
{
	char hint[512];
	size_t n = 0;

	if (rc != -ENOENT) {
		cli_error(a->cmd, "'%s': %s", a->path, w->error);
		return;
	}
	hint[0] = '\0';
	for (size_t i = 0; i < a->m.n_sites && i < 4 && n < sizeof(hint); i++)
		n += (size_t)snprintf(hint + n, sizeof(hint) - n, "%s'%s'", i ? ", " : "",
				      a->m.sites[i].name);
	cli_error(a->cmd, "%s (sites in '%s' include %s)", w->error, a->path, hint);
}

/* The report of @w, text or JSON: 0, or 1 after one line. */
static int report(const struct cli_trace *a, const struct sp_whatif *w,
		  const struct whatif_args *o)
{
	uint32_t *locks = order_of(a->m.n_locks, w, lock_row_cmp);
	uint32_t *threads = order_of(a->m.n_threads, w, thread_crit_cmp);
	uint32_t *kept = order_of(a->m.n_sites, w, kept_site_cmp);
	int rc = 0;

	if (!locks || !threads || !kept) {
		cli_error(a->cmd, "out of memory");
		rc = 1;
	} else if (o->json) {
		whatif_json(a, w, locks, threads, kept);
	} else {
		whatif_text(a, w, o->top, locks, threads);
	}
	if (!rc && fflush(stdout)) {
		cli_error(a->cmd, "writing the output failed: %s", strerror(errno));
		rc = 1;
	}
	free(locks);
	free(threads);
	free(kept);
	return rc;
}

int cmd_trace_whatif(int argc, char **argv)
{
	const char *cmd = "trace what-if";
	struct cli_trace a = { .cmd = cmd };
	struct whatif_args o = { .top = 20, .samples = SP_WHATIF_SAMPLES };
	struct sp_whatif w;
	int rc = parse_whatif(cmd, argc, argv, &o);

	if (rc)
		return rc < 0 ? 0 : rc;
	a.path = o.path;
	rc = cli_trace_load(&a);
	if (!rc)
		rc = refused(&a);
	if (!rc) {
		rc = sp_whatif_run(&a.m, o.site, o.factor, o.samples, &w);
		if (rc) {
			run_failed(&a, &w, rc);
			rc = 1;
		} else {
			rc = report(&a, &w, &o);
		}
		sp_whatif_free(&w);
	}
	cli_trace_release(&a);
	return rc;
}
