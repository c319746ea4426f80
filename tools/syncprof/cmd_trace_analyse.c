/*
 * cmd_trace_analyse.c - 'syncprof trace what-if' and 'syncprof trace
 * chains': option parsing and output.  The analyses are in the offline
 * layer (src/analyse/trace_model.c, whatif.c, chains.c, trace_sites.c); this
 * file reads the file, refuses what the analysis cannot use with one line
 * on stderr and a non-zero status, and prints text or JSON.
 *
 * Both need a whole trace: a truncated or corrupt file, one whose writer
 * lost events (a full disk) and, for what-if, one whose threads dropped
 * events or that holds only contended acquisitions are refused rather
 * than analysed wrongly (chains notes drops and goes on: a chain it shows
 * did stand, it may miss some).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#include "base/types.h"
#include "analyse/trace_model.h"
#include "report/render/text.h"

#define EXIT_TRUNCATED 3

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

const char cli_chains_usage[] =
	"Usage: syncprof trace chains FILE [--json] [--top N]\n"
	"\n"
	"From FILE, offline: the wait chains - a thread waits for a lock whose holder\n"
	"is itself waiting for a lock, and so on to the root holder - with each\n"
	"link's waiting site and the site where the holder took the lock, by the time\n"
	"the whole chain stood (a cycle is a deadlock); then per lock, who made whom\n"
	"wait: each waiting thread's wait split by the thread that held the lock\n"
	"meanwhile, with the number of that thread's holds it overlapped ('hand-off':\n"
	"nobody held it, the waiter was being woken; the number of waits).\n"
	"Works on contended-only and full traces (holds come from releases' hold\n"
	"times or from acquisitions).  --top N: chains and locks shown (default 20).\n"
	"--json prints one object instead.\n"
	"Exit status: 0 done; 1 error (not a trace, corrupt); 2 usage; 3 incomplete\n"
	"file.\n";

struct analysed {
	const char *cmd, *path;
	uint8_t *data;
	size_t size;
	struct sp_trace_reader r;
	struct sp_trace_model m;
	int have_model;
};

static void release_all(struct analysed *a)
{
	if (a->have_model)
		sp_trace_model_free(&a->m);
	sp_trace_reader_fini(&a->r);
	free(a->data);
}

static int read_file(struct analysed *a)
{
	int fd = open(a->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t n = 0;

	if (fd < 0 || fstat(fd, &st)) {
		cli_error(a->cmd, "cannot open '%s': %s", a->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	a->data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (!a->data) {
		cli_error(a->cmd, "'%s': out of memory", a->path);
		close(fd);
		return -1;
	}
	while (n < (size_t)st.st_size) {
		ssize_t got = read(fd, a->data + n, (size_t)st.st_size - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got < 0)
				cli_error(a->cmd, "cannot read '%s': %s", a->path, strerror(errno));
			close(fd);
			return got < 0 ? -1 : (a->size = n, 0);
		}
		n += (size_t)got;
	}
	close(fd);
	a->size = n;
	return 0;
}

/* Read and model the file; 0, or the exit status after one line. */
static int load_model(struct analysed *a)
{
	if (read_file(a))
		return 1;
	if (sp_trace_reader_init(&a->r, a->data, a->size)) {
		cli_error(a->cmd, "'%s': %s", a->path, a->r.error);
		return 1;
	}
	if (sp_trace_model_build(&a->m, &a->r)) {
		a->have_model = 1;
		cli_error(a->cmd, "'%s': %s", a->path, a->m.error);
		return 1;
	}
	a->have_model = 1;
	if (a->m.read_status == SP_TRACE_READ_TRUNCATED) {
		cli_error(a->cmd, "'%s' is incomplete: %s; analysing needs the whole trace",
			  a->path, a->r.error);
		return EXIT_TRUNCATED;
	}
	if (a->m.read_status == SP_TRACE_READ_CORRUPT) {
		cli_error(a->cmd, "'%s' is corrupt: %s", a->path, a->r.error);
		return 1;
	}
	if (a->m.write_lost) {
		int werr = sp_trace_reader_write_error(&a->r);

		cli_error(a->cmd, "'%s' is incomplete: writing it failed (%s); analysing needs the "
			  "whole trace", a->path, werr ? strerror(werr) : "a write-loss record");
		return EXIT_TRUNCATED;
	}
	if (a->m.out_of_range) {
		cli_error(a->cmd, "'%s' is corrupt: %" PRIu64 " lock events have a time or a wait "
			  "beyond 19 hours", a->path, a->m.out_of_range);
		return 1;
	}
	if (!a->m.n_threads) {
		cli_error(a->cmd, "'%s' holds no lock events: nothing to analyse", a->path);
		return 1;
	}
	if (sp_tm_name_sites(&a->m, &a->r)) {
		cli_error(a->cmd, "'%s': out of memory naming call sites", a->path);
		return 1;
	}
	return 0;
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static const char *lock_type(int type)
{
	return type == SP_TYPE_RWLOCK_READ || type == SP_TYPE_RWLOCK_WRITE ? "rwlock"
									   : sp_type_name(type);
}

/* A lock in text: its address, and its name in quotes when it has one. */
static const char *lock_label(const struct sp_tm_lock *l, char *buf, size_t size)
{
	if (l->name)
		snprintf(buf, size, "0x%" PRIx64 " \"%s\"", l->obj, l->name);
	else
		snprintf(buf, size, "0x%" PRIx64, l->obj);
	return buf;
}

/* JSON: ,"name":"..." when the lock has one. */
static void json_lock_name(const struct sp_tm_lock *l)
{
	if (!l->name)
		return;
	printf(",\"name\":");
	sp_json_string(stdout, l->name);
}

static int parse_top(const char *cmd, const char *v, unsigned *top)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (!*v || *end || n == 0 || n > 1000000 || v[0] == '-') {
		cli_error(cmd, "--top wants a number from 1 to 1000000, not '%s'", v);
		return -1;
	}
	*top = (unsigned)n;
	return 0;
}

/* An argument that is no known option: the one FILE, else an error. */
static int take_file(const char *cmd, const char *arg, const char **path)
{
	if (arg[0] == '-' && arg[1]) {
		cli_error(cmd, "unknown option '%s' (see --help)", arg);
		return -1;
	}
	if (*path) {
		cli_error(cmd, "one FILE only (see --help)");
		return -1;
	}
	*path = arg;
	return 0;
}

/* ---- what-if ---------------------------------------------------------- */

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
	       ms(w->predicted_low_ns), ms(w->predicted_high_ns),
	       pct(w->predicted_low_ns - w->measured_wall_ns, w->measured_wall_ns),
	       pct(w->predicted_high_ns - w->measured_wall_ns, w->measured_wall_ns), drawn);
}

static void whatif_text(const struct analysed *a, const struct sp_whatif *w, unsigned top,
			const uint32_t *locks, const uint32_t *threads)
{
	const struct sp_trace_model *m = &a->m;
	const struct sp_whatif_path *cp = &w->path_predicted, *c1 = &w->path_replayed;
	size_t shown = 0;
	int first = 1;
	char bound[512];
	const char *v = verdict(w);

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
	       ms(w->measured_wall_ns));
	printf("replayed wall   %12.3f ms  (factor 1: the model's own error %+.2f%%)\n",
	       ms(w->replay_wall_ns), pct(w->replay_wall_ns - w->measured_wall_ns,
					   w->measured_wall_ns));
	printf("predicted wall  %12.3f ms  (%+.2f%% of measured)\n", ms(w->predicted_wall_ns),
	       pct(w->predicted_wall_ns - w->measured_wall_ns, w->measured_wall_ns));
	if (w->samples && !w->handoffs_measured && !w->blocks)
		printf("  90%% interval  %12.3f .. %.3f ms  (the trace has no hand-off latency to "
		       "draw again)\n", ms(w->predicted_low_ns), ms(w->predicted_high_ns));
	else if (w->samples)
		print_interval(w);
	else
		printf("  (no interval: --samples 0)\n");
	if (w->inconsistent)
		printf("note: %" PRIu64 " acquisitions were granted before the release they follow "
		       "(clock or missing events); the replay waits for the release\n",
		       w->inconsistent);

	printf("\nwhat bounds it: the predicted run's critical path, %.3f ms over %u thread%s "
	       "and %" PRIu64 " hand-off%s, each lock's hand-off order kept as measured:\n",
	       ms(cp->total_ns), cp->threads, cp->threads == 1 ? "" : "s", cp->handoffs,
	       cp->handoffs == 1 ? "" : "s");
	printf("  in the scaled holds     %12.3f ms %6.1f%%  (at factor 1: %.3f ms, %.1f%%)\n",
	       ms(cp->scaled_ns), pct(cp->scaled_ns, cp->total_ns), ms(c1->scaled_ns),
	       pct(c1->scaled_ns, c1->total_ns));
	printf("  other work              %12.3f ms %6.1f%%\n", ms(cp->work_ns),
	       pct(cp->work_ns, cp->total_ns));
	printf("  waiting for locks       %12.3f ms %6.1f%%  (after a release, to the waiter "
	       "running; lock calls)\n",
	       ms(cp->lock_ns), pct(cp->lock_ns, cp->total_ns));
	printf("  waits kept as measured  %12.3f ms %6.1f%%  (condition, semaphore, barrier; "
	       "joins' delays)\n",
	       ms(cp->kept_ns), pct(cp->kept_ns, cp->total_ns));
	if (cp->start_ns)
		printf("  before its first thread %12.3f ms %6.1f%%\n", ms(cp->start_ns),
		       pct(cp->start_ns, cp->total_ns));
	{
		int64_t below = INT64_MAX;

		for (int i = 0; i < 3; i++) {
			uint32_t k = top_kept_site(m, w, below);

			if (k == UINT32_MAX)
				break;
			printf("%s%s %.3f ms", i ? ", " : "  largest kept waits on it: ",
			       m->sites[k].name, ms(w->crit_site_ns[k]));
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
		       w->site, ms(c1->scaled_ns), pct(c1->scaled_ns, c1->total_ns),
		       ms(cp->scaled_ns), pct(cp->scaled_ns, cp->total_ns), w->factor, bound);
	else if (!strcmp(v, "minor"))
		printf("=> the holds begun at %s are only %.3f ms (%.1f%%) of the predicted "
		       "critical path (%.3f ms at factor 1): the wall time is bounded by %s, and "
		       "scaling them moves it little\n",
		       w->site, ms(cp->scaled_ns), pct(cp->scaled_ns, cp->total_ns),
		       ms(c1->scaled_ns), bound);
	else
		printf("=> the holds begun at %s are %.3f ms (%.1f%%) of the predicted critical "
		       "path (%.3f ms at factor 1): the wall time moves with them, as far as the "
		       "measured hand-off order lets it\n",
		       w->site, ms(cp->scaled_ns), pct(cp->scaled_ns, cp->total_ns),
		       ms(c1->scaled_ns));

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
			snprintf(iv, sizeof(iv), "%.3f .. %.3f", ms(wl->wait_low), ms(wl->wait_high));
		else
			snprintf(iv, sizeof(iv), "-");
		printf("%-18.18s %-9s %-32.32s %10" PRIu64 " %10" PRIu64
		       " %12.3f %12.3f %+12.3f %23s\n",
		       obj, lock_type(l->type), m->sites[l->site].name, wl->acquisitions,
		       wl->contended_measured, ms(wl->wait_measured), ms(wl->wait_predicted),
		       ms(wl->wait_predicted - wl->wait_measured), iv);
		shown++;
	}
	if (shown < m->n_locks)
		printf("(%zu more locks)\n", m->n_locks - shown);
	printf("\nper thread (ms since the trace's start; waits on locks):\n"
	       "%-8s %-16s %8s %12s %12s %12s %12s %12s\n",
	       "tid", "thread", "holds", "end", "end pred.", "wait", "wait pred.", "crit. path");
	for (size_t i = 0; i < m->n_threads && i < top; i++) {
		const struct sp_tm_thread *th = &m->threads[threads[i]];
		const struct sp_whatif_thread *wt = &w->threads[threads[i]];

		printf("%-8u %-16.16s %8" PRId64 " %12.3f %12.3f %12.3f %12.3f %12.3f\n", th->tid,
		       th->name, wt->scaled_holds, ms(wt->end_measured - m->first_ns),
		       ms(wt->end_predicted - m->first_ns), ms(wt->wait_measured),
		       ms(wt->wait_predicted), ms(wt->critical_ns));
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
		       pct(wt->critical_ns, w->predicted_wall_ns), ms(wt->crit_scaled_ns),
		       ms(wt->crit_lock_ns), ms(wt->crit_kept_ns));
	}
	printf("\n");
}

static void json_path(const char *key, const struct sp_whatif_path *cp)
{
	printf("\"%s\":{\"total_ns\":%" PRId64 ",\"scaled_ns\":%" PRId64 ",\"work_ns\":%" PRId64
	       ",\"lock_wait_ns\":%" PRId64 ",\"kept_wait_ns\":%" PRId64 ",\"start_ns\":%" PRId64
	       ",\"handoffs\":%" PRIu64 ",\"joins\":%" PRIu64 ",\"threads\":%u}",
	       key, cp->total_ns, cp->scaled_ns, cp->work_ns, cp->lock_ns, cp->kept_ns,
	       cp->start_ns, cp->handoffs, cp->joins, cp->threads);
}

static void whatif_json(const struct analysed *a, const struct sp_whatif *w,
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
	printf("]},\"per_lock\":[");
	first = 1;
	for (size_t i = 0; i < m->n_locks; i++) {
		const struct sp_tm_lock *l = &m->locks[locks[i]];
		const struct sp_whatif_lock *wl = &w->locks[locks[i]];

		if (!wl->acquisitions)
			continue;
		printf("%s{\"object\":\"0x%" PRIx64 "\"", first ? "" : ",", l->obj);
		json_lock_name(l);
		printf(",\"type\":");
		sp_json_string(stdout, lock_type(l->type));
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
	printf("],\"per_thread\":[");
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

int cmd_trace_whatif(int argc, char **argv)
{
	const char *cmd = "trace what-if", *path = NULL, *site = NULL, *factor_s = NULL;
	struct analysed a = { .cmd = cmd };
	struct sp_whatif w;
	unsigned top = 20, samples = SP_WHATIF_SAMPLES;
	uint32_t *locks = NULL, *threads = NULL, *kept = NULL;
	double factor;
	char *end;
	int json = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(cli_whatif_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--site") || !strcmp(argv[i], "--factor") ||
			   !strcmp(argv[i], "--top") || !strcmp(argv[i], "--samples")) {
			if (i + 1 == argc) {
				cli_error(cmd, "%s needs a value (see --help)", argv[i]);
				return 2;
			}
			if (!strcmp(argv[i], "--site"))
				site = argv[++i];
			else if (!strcmp(argv[i], "--factor"))
				factor_s = argv[++i];
			else if (!strcmp(argv[i], "--samples")) {
				if (parse_samples(cmd, argv[++i], &samples))
					return 2;
			} else if (parse_top(cmd, argv[++i], &top))
				return 2;
		} else if (!strncmp(argv[i], "--site=", 7)) {
			site = argv[i] + 7;
		} else if (!strncmp(argv[i], "--factor=", 9)) {
			factor_s = argv[i] + 9;
		} else if (!strncmp(argv[i], "--top=", 6)) {
			if (parse_top(cmd, argv[i] + 6, &top))
				return 2;
		} else if (!strncmp(argv[i], "--samples=", 10)) {
			if (parse_samples(cmd, argv[i] + 10, &samples))
				return 2;
		} else if (take_file(cmd, argv[i], &path)) {
			return 2;
		}
	}
	if (!path || !site || !factor_s) {
		cli_error(cmd, "FILE, --site and --factor are needed (see --help)");
		return 2;
	}
	if (!*site) {
		cli_error(cmd, "--site is empty: give 'file:line' or a function name");
		return 2;
	}
	errno = 0;
	factor = strtod(factor_s, &end);
	if (!*factor_s || *end || errno || !isfinite(factor) || factor <= 0 || factor > 1e6) {
		cli_error(cmd, "--factor wants a number above 0 and at most 1e6, not '%s'",
			  factor_s);
		return 2;
	}
	a.path = path;
	rc = load_model(&a);
	if (rc)
		goto out;
	if (a.m.dropped) {
		cli_error(cmd,
			  "'%s': %" PRIu64 " events were dropped (a thread's buffer was full): the "
			  "replay needs every event; trace again with a larger trace_buffer",
			  path, a.m.dropped);
		rc = 1;
		goto out;
	}
	if (a.m.contended_only || a.m.missing_acquires || a.m.missing_releases) {
		char prog[512];

		program_of(&a.r, prog, sizeof(prog));
		cli_error(cmd,
			  "'%s' %s (%" PRIu64 " releases without their acquisition, %" PRIu64
			  " acquisitions without their release); the replay needs every hold, "
			  "so record it again with: syncprof run --trace %s --trace-events all "
			  "--trace-buffer 268435456 -- %s (compiled in: SYNCPROF_OPTIONS=trace=%s,"
			  "trace_events=all,trace_buffer=268435456)",
			  path,
			  a.m.contended_only ? "is a default trace, of contended acquisitions only"
					     : "lacks acquisitions or releases",
			  a.m.missing_acquires, a.m.missing_releases, path, prog, path);
		rc = 1;
		goto out;
	}
	rc = sp_whatif_run(&a.m, site, factor, samples, &w);
	if (rc) {
		if (rc == -ENOENT) {
			/* Name a few sites so the user can pick one. */
			char hint[512];
			size_t n = 0;

			hint[0] = '\0';
			for (size_t i = 0; i < a.m.n_sites && i < 4 && n < sizeof(hint); i++)
				n += (size_t)snprintf(hint + n, sizeof(hint) - n, "%s'%s'",
						      i ? ", " : "", a.m.sites[i].name);
			cli_error(cmd, "%s (sites in '%s' include %s)", w.error, path, hint);
		} else {
			cli_error(cmd, "'%s': %s", path, w.error);
		}
		sp_whatif_free(&w);
		rc = 1;
		goto out;
	}
	locks = order_of(a.m.n_locks, &w, lock_row_cmp);
	threads = order_of(a.m.n_threads, &w, thread_crit_cmp);
	kept = order_of(a.m.n_sites, &w, kept_site_cmp);
	if (!locks || !threads || !kept) {
		cli_error(cmd, "out of memory");
		rc = 1;
	} else if (json) {
		whatif_json(&a, &w, locks, threads, kept);
	} else {
		whatif_text(&a, &w, top, locks, threads);
	}
	sp_whatif_free(&w);
	if (!rc && fflush(stdout)) {
		cli_error(cmd, "writing the output failed: %s", strerror(errno));
		rc = 1;
	}
out:
	free(locks);
	free(threads);
	free(kept);
	release_all(&a);
	return rc;
}

/* ---- chains ----------------------------------------------------------- */

static void thread_label(const struct sp_trace_model *m, uint32_t t, char *buf, size_t size)
{
	if (t == UINT32_MAX)
		snprintf(buf, size, "(hand-off)");
	else if (m->threads[t].name[0])
		snprintf(buf, size, "%u %s", m->threads[t].tid, m->threads[t].name);
	else
		snprintf(buf, size, "%u", m->threads[t].tid);
}

static void chains_text(const struct analysed *a, const struct sp_chains *c, unsigned top)
{
	const struct sp_trace_model *m = &a->m;
	char wb[64], hb[64], lb[128];
	size_t locks_shown = 0;
	uint32_t cur = UINT32_MAX;

	if (m->dropped)
		printf("note: %" PRIu64 " events were dropped (buffers full): chains and waits in "
		       "the lost spans are missing\n\n",
		       m->dropped);
	printf("wait chains (a waiter whose lock's holder waits too), by time the whole chain "
	       "stood: %zu\n",
	       c->n_chains);
	for (size_t i = 0; i < c->n_chains && i < top; i++) {
		const struct sp_chain *ch = &c->chains[i];

		printf("\n%10.3f ms, %" PRIu64 " times%s\n", ms(ch->ns), ch->count,
		       ch->cycle ? "  DEADLOCK CYCLE" : "");
		for (unsigned k = 0; k < ch->n; k++) {
			const struct sp_chain_link *l = &ch->link[k];

			thread_label(m, l->waiter, wb, sizeof(wb));
			thread_label(m, l->holder, hb, sizeof(hb));
			printf("  %s waits at %s for %s (%s), held by %s since %s%s\n",
			       wb, m->sites[l->site].name,
			       lock_label(&m->locks[l->lock], lb, sizeof(lb)),
			       lock_type(m->locks[l->lock].type), hb, m->sites[l->hold_site].name,
			       k + 1 < ch->n ? ","
			       : ch->cycle   ? " (a waiter above)"
					     : " (root, running)");
		}
	}
	if (c->n_chains > top)
		printf("\n(%zu more chains)\n", c->n_chains - top);
	printf("\nwho made whom wait, per lock (ms; hand-off: nobody held it, the waiter was being "
	       "woken):\n");
	for (size_t i = 0; i < c->n_cells; i++) {
		const struct sp_blame_cell *e = &c->cells[i];

		if (e->lock != cur) {
			if (locks_shown == top)
				break;
			cur = e->lock;
			locks_shown++;
			printf("\nlock %s (%s, first taken at %s): %.3f ms waited\n",
			       lock_label(&m->locks[cur], lb, sizeof(lb)),
			       lock_type(m->locks[cur].type),
			       m->sites[m->locks[cur].site].name, ms(c->lock_wait[cur]));
			printf("  %-24s %-24s %12s %10s\n", "waiter", "holder", "wait", "holds");
		}
		thread_label(m, e->waiter, wb, sizeof(wb));
		thread_label(m, e->holder, hb, sizeof(hb));
		printf("  %-24.24s %-24.24s %12.3f %10" PRIu64 "\n", wb, hb, ms(e->ns), e->count);
	}
	if (!c->n_cells)
		printf("  (no waits on locks in the trace)\n");
}

static void json_thread(const struct sp_trace_model *m, const char *key, uint32_t t)
{
	printf("\"%s_tid\":", key);
	if (t == UINT32_MAX) {
		printf("null,\"%s\":null", key);
		return;
	}
	printf("%u,\"%s\":", m->threads[t].tid, key);
	sp_json_string(stdout, m->threads[t].name);
}

static void chains_json(const struct analysed *a, const struct sp_chains *c, unsigned top)
{
	const struct sp_trace_model *m = &a->m;
	uint32_t cur = UINT32_MAX;
	size_t locks_shown = 0;

	printf("{\"format\":\"syncprof-chains\",\"version\":1,\"trace\":");
	sp_json_string(stdout, a->path);
	printf(",\"dropped\":%" PRIu64 ",\"waits\":%" PRIu64 ",\"chains\":[", m->dropped, c->waits);
	for (size_t i = 0; i < c->n_chains && i < top; i++) {
		const struct sp_chain *ch = &c->chains[i];

		printf("%s{\"wait_ns\":%" PRId64 ",\"count\":%" PRIu64 ",\"cycle\":%s,\"links\":[",
		       i ? "," : "", ch->ns, ch->count, ch->cycle ? "true" : "false");
		for (unsigned k = 0; k < ch->n; k++) {
			const struct sp_chain_link *l = &ch->link[k];

			printf("%s{", k ? "," : "");
			json_thread(m, "waiter", l->waiter);
			printf(",\"object\":\"0x%" PRIx64 "\"", m->locks[l->lock].obj);
			json_lock_name(&m->locks[l->lock]);
			printf(",\"site\":");
			sp_json_string(stdout, m->sites[l->site].name);
			putchar(',');
			json_thread(m, "holder", l->holder);
			printf(",\"hold_site\":");
			sp_json_string(stdout, m->sites[l->hold_site].name);
			putchar('}');
		}
		printf("]}");
	}
	printf("],\"per_lock\":[");
	for (size_t i = 0; i < c->n_cells; i++) {
		const struct sp_blame_cell *e = &c->cells[i];

		if (e->lock != cur) {
			if (locks_shown == top)
				break;
			if (cur != UINT32_MAX)
				printf("]},");
			cur = e->lock;
			locks_shown++;
			printf("{\"object\":\"0x%" PRIx64 "\"", m->locks[cur].obj);
			json_lock_name(&m->locks[cur]);
			printf(",\"type\":");
			sp_json_string(stdout, lock_type(m->locks[cur].type));
			printf(",\"site\":");
			sp_json_string(stdout, m->sites[m->locks[cur].site].name);
			printf(",\"wait_ns\":%" PRId64 ",\"matrix\":[", c->lock_wait[cur]);
		} else {
			putchar(',');
		}
		putchar('{');
		json_thread(m, "waiter", e->waiter);
		putchar(',');
		json_thread(m, "holder", e->holder);
		printf(",\"wait_ns\":%" PRId64 ",\"count\":%" PRIu64 "}", e->ns, e->count);
	}
	if (cur != UINT32_MAX)
		printf("]}");
	printf("]}\n");
}

int cmd_trace_chains(int argc, char **argv)
{
	const char *cmd = "trace chains", *path = NULL;
	struct analysed a = { .cmd = cmd };
	struct sp_chains c;
	unsigned top = 20;
	int json = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(cli_chains_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--top")) {
			if (i + 1 == argc) {
				cli_error(cmd, "--top needs a value (see --help)");
				return 2;
			}
			if (parse_top(cmd, argv[++i], &top))
				return 2;
		} else if (!strncmp(argv[i], "--top=", 6)) {
			if (parse_top(cmd, argv[i] + 6, &top))
				return 2;
		} else if (take_file(cmd, argv[i], &path)) {
			return 2;
		}
	}
	if (!path) {
		cli_error(cmd, "FILE is needed (see --help)");
		return 2;
	}
	a.path = path;
	rc = load_model(&a);
	if (rc)
		goto out;
	if (sp_chains_run(&a.m, &c)) {
		cli_error(cmd, "'%s': out of memory", path);
		rc = 1;
		goto out;
	}
	if (json)
		chains_json(&a, &c, top);
	else
		chains_text(&a, &c, top);
	sp_chains_free(&c);
	if (fflush(stdout)) {
		cli_error(cmd, "writing the output failed: %s", strerror(errno));
		rc = 1;
	}
out:
	release_all(&a);
	return rc;
}
