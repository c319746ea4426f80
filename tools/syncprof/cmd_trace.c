/*
 * cmd_trace.c - 'syncprof trace dump|stats|export': read a trace file.
 *
 * Design: the file is read into memory whole and walked once with the
 * library's reader (src/trace_reader.c), which keeps the name tables; each
 * subcommand is a visitor of the records.  Whatever the file holds up to
 * the first record that cannot be decoded is always output in full; then
 * one line on stderr says where and why reading stopped, and the exit
 * status tells an incomplete file (3: the traced program was killed, is
 * still writing, or could not write it all: a full disk) from a corrupt or
 * foreign one (1).  A file cut short by a write error reads to its end
 * (the writer cut it on a record boundary); its header says so, and its
 * WRITE_LOSS record, when it had room for one, says how many events from
 * when to when are missing: every subcommand shows that.
 *
 * Chrome export (Trace Event Format, loaded by ui.perfetto.dev and
 * chrome://tracing): waits become complete ("X") slices named "wait
 * <site>" on the waiting thread, holds become async ("b"/"e") events from
 * acquisition to release (the hold from the released event when hold
 * tracking supplied it, else from the matching acquired event), a
 * condition wait is a slice and releases/retakes its mutex, drops are
 * instant events, other events are instants with their named arguments,
 * thread names are metadata.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#include "report/render/text.h"
#include "base/types.h"
#include "read/trace_reader.h"

#define EXIT_TRUNCATED 3

static const char trace_usage[] =
	"Usage: syncprof trace dump FILE [--json] [--sort]\n"
	"       syncprof trace stats FILE\n"
	"       syncprof trace export --format chrome FILE -o OUT.json\n"
	"       syncprof trace what-if FILE --site SITE --factor F [--json]\n"
	"       syncprof trace chains FILE [--json]\n"
	"\n"
	"Read a lock-event trace written by libsyncprof (SYNCPROF_OPTIONS=trace=FILE,\n"
	"or syncprof_trace_open()).  'syncprof trace COMMAND --help' describes each.\n"
	"\n"
	"Exit status: 0 the whole file was read; 1 error (unreadable, not a trace,\n"
	"corrupt: records before the damage are still output); 2 usage; 3 the file\n"
	"is incomplete: it ends inside a record (the traced program was killed or is\n"
	"still running), or writing it failed (a full disk: the events after its\n"
	"end are lost); every complete record was output.\n";

static const char dump_usage[] =
	"Usage: syncprof trace dump FILE [--json] [--sort]\n"
	"\n"
	"Print every event and drop record of FILE, one line each: time since the\n"
	"trace started (us), thread, event and its arguments; lock events name their\n"
	"call site.  Records come in file order: each thread's in time order, threads\n"
	"interleaved in chunks; --sort merges all threads by time (stable).\n"
	"--json prints one JSON object per line instead (a \"header\" object first).\n"
	"Exit status: 0 complete, 1 error or corrupt file, 3 incomplete file.\n";

static const char stats_usage[] =
	"Usage: syncprof trace stats FILE\n"
	"\n"
	"Summarise FILE: time span, events per event name and per thread, the events\n"
	"dropped because a thread's buffer was full (total and per thread), and the\n"
	"events lost when writing the file failed (a full disk).\n"
	"Exit status: 0 complete, 1 error or corrupt file, 3 incomplete file.\n";

static const char export_usage[] =
	"Usage: syncprof trace export --format chrome FILE -o OUT.json\n"
	"\n"
	"Write FILE as Chrome Trace Event JSON, which ui.perfetto.dev and\n"
	"chrome://tracing open: per thread, slices \"wait <site>\" for lock and\n"
	"condition waits, holds as async events, drops as instant events, other\n"
	"events as instants, thread names as metadata.  -o - writes to stdout.\n"
	"Exit status: 0 complete, 1 error or corrupt file, 3 incomplete file.\n";

struct trace_file {
	const char *path;
	uint8_t *data;
	size_t size;
	struct sp_trace_reader *r;
};

static int load(const char *cmd, const char *path, struct trace_file *tf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t n = 0;

	memset(tf, 0, sizeof(*tf));
	tf->path = path;
	if (fd < 0 || fstat(fd, &st)) {
		cli_error(cmd, "cannot open '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	tf->data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (!tf->data) {
		cli_error(cmd, "'%s': out of memory", path);
		close(fd);
		return -1;
	}
	while (n < (size_t)st.st_size) {
		ssize_t got = read(fd, tf->data + n, (size_t)st.st_size - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			cli_error(cmd, "cannot read '%s': %s", path, strerror(errno));
			close(fd);
			free(tf->data);
			return -1;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	tf->size = n;
	tf->r = calloc(1, sizeof(*tf->r));
	if (!tf->r) {
		free(tf->data);
		cli_error(cmd, "out of memory");
		return -1;
	}
	if (sp_trace_reader_init(tf->r, tf->data, tf->size)) {
		cli_error(cmd, "'%s': %s", path, tf->r->error);
		return -1;
	}
	return 0;
}

static void unload(struct trace_file *tf)
{
	if (tf->r)
		sp_trace_reader_fini(tf->r);
	free(tf->r);
	free(tf->data);
}

/* The exit status for how reading ended, with the one line on stderr. */
static int finish(const char *cmd, struct trace_file *tf)
{
	struct sp_trace_reader *r = tf->r;
	int werr = sp_trace_reader_write_error(r);

	if (werr && r->write_loss_seen)
		cli_error(cmd,
			  "'%s' is incomplete: writing it failed (%s), and the %" PRIu64
			  " events after its last record were lost",
			  tf->path, strerror(werr), r->write_loss);
	else if (werr)
		cli_error(cmd,
			  "'%s' is incomplete: writing it failed (%s), and the events after its "
			  "end were lost (how many is not in the file)",
			  tf->path, strerror(werr));
	if (r->status == SP_TRACE_READ_TRUNCATED) {
		cli_error(cmd, "'%s' is incomplete: %s; %llu complete records were read", tf->path,
			  r->error, (unsigned long long)r->records);
		return EXIT_TRUNCATED;
	}
	if (r->status == SP_TRACE_READ_CORRUPT) {
		cli_error(cmd, "'%s' is corrupt: %s; reading stopped there", tf->path, r->error);
		return 1;
	}
	return werr ? EXIT_TRUNCATED : 0;
}

/* ---- shared formatting ------------------------------------------------ */

static int is_lock_event(const struct sp_trace_rec *rec)
{
	return rec->id >= 1 && rec->id <= SP_EV_LOCK_LAST && rec->nargs > SP_LA_TYPE;
}

static int is_cond_event(const struct sp_trace_rec *rec)
{
	return rec->id == SP_EV_COND_WAIT || rec->id == SP_EV_COND_WOKEN;
}

static const char *event_name(const struct sp_trace_rec *rec, char *buf, size_t size)
{
	if (rec->def)
		return rec->def->name;
	snprintf(buf, size, "event_%u", rec->id);
	return buf;
}

static const char *arg_name(const struct sp_trace_rec *rec, unsigned i, char *buf, size_t size)
{
	if (rec->def && i < rec->def->nargs)
		return rec->def->args[i];
	snprintf(buf, size, "a%u", i);
	return buf;
}

/*
 * A lock event's call site: "file:line (function)" for instrumented code;
 * for a code address, "function+0xNN (dso)" from the DSO's symbol table
 * when the file at that path has one, else "dso+0xOFFSET" (the input of
 * addr2line -e DSO OFFSET).
 */
static const char *site_name(const struct sp_trace_reader *r, const struct sp_trace_rec *rec,
			     char *buf, size_t size)
{
	char dso[512];
	uint64_t off, sym_off;
	const char *fn, *base;

	if (rec->nargs <= SP_LA_LINE || rec->args[SP_LA_LINE] ||
	    !sp_trace_reader_pc_dso(r, rec->args[SP_LA_SITE], dso, sizeof(dso), &off))
		return sp_trace_reader_site(r, rec, buf, size);
	fn = cli_elf_symbol(dso, off, &sym_off);
	base = strrchr(dso, '/') ? strrchr(dso, '/') + 1 : dso;
	if (fn)
		snprintf(buf, size, "%s+0x%" PRIx64 " (%s)", fn, sym_off, base);
	else
		snprintf(buf, size, "%s+0x%" PRIx64, *base ? base : "?", off);
	return buf;
}

static const char *thread_name(const struct sp_trace_reader *r, uint32_t tid)
{
	const char *n = sp_trace_reader_thread(r, tid);

	return n ? n : "";
}

/* ---- dump ------------------------------------------------------------- */

static void dump_text(const struct sp_trace_reader *r, const struct sp_trace_rec *rec)
{
	char nb[64], ab[32], site[1024];

	if (rec->type == SP_REC_WRITE_LOSS) {
		printf("%14.3f  %-27s LOST %" PRIu64 " events to a write error: %s (%.3f .. %.3f us)\n",
		       (double)sp_trace_reader_rel_ns(r, rec->ts) / 1e3, "(all threads)", rec->count,
		       strerror((int)rec->error), (double)sp_trace_reader_rel_ns(r, rec->ts) / 1e3,
		       (double)sp_trace_reader_rel_ns(r, rec->ts2) / 1e3);
		return;
	}
	if (rec->type == SP_REC_DROPPED) {
		printf("%14.3f  tid %-7u %-15s DROPPED %" PRIu64 " events (%.3f .. %.3f us)\n",
		       (double)sp_trace_reader_rel_ns(r, rec->ts) / 1e3, rec->tid,
		       thread_name(r, rec->tid), rec->count,
		       (double)sp_trace_reader_rel_ns(r, rec->ts) / 1e3,
		       (double)sp_trace_reader_rel_ns(r, rec->ts2) / 1e3);
		return;
	}
	printf("%14.3f  tid %-7u %-15s %s", (double)sp_trace_reader_rel_ns(r, rec->ts) / 1e3,
	       rec->tid, thread_name(r, rec->tid), event_name(rec, nb, sizeof(nb)));
	if (is_lock_event(rec)) {
		printf(" obj=0x%" PRIx64 " site=%s", rec->args[SP_LA_OBJ],
		       site_name(r, rec, site, sizeof(site)));
		if (is_cond_event(rec))
			printf(" mutex=0x%" PRIx64, rec->args[SP_LA_TYPE]);
		else
			printf(" type=%s", sp_type_name((int)(rec->args[SP_LA_TYPE] & 0xff)));
		if (rec->nargs > SP_LA_NS)
			printf(" %s=%" PRIu64, arg_name(rec, SP_LA_NS, ab, sizeof(ab)),
			       rec->args[SP_LA_NS]);
	} else {
		for (unsigned i = 0; i < rec->nargs; i++)
			printf(" %s=%" PRIu64, arg_name(rec, i, ab, sizeof(ab)), rec->args[i]);
	}
	putchar('\n');
}

static void dump_json(const struct sp_trace_reader *r, const struct sp_trace_rec *rec)
{
	char nb[64], ab[32], site[1024];

	if (rec->type == SP_REC_WRITE_LOSS) {
		printf("{\"type\":\"write_loss\",\"ts_ns\":%" PRId64 ",\"last_ts_ns\":%" PRId64
		       ",\"count\":%" PRIu64 ",\"error\":",
		       sp_trace_reader_rel_ns(r, rec->ts), sp_trace_reader_rel_ns(r, rec->ts2),
		       rec->count);
		sp_json_string(stdout, strerror((int)rec->error));
		printf("}\n");
		return;
	}
	if (rec->type == SP_REC_DROPPED) {
		printf("{\"type\":\"dropped\",\"ts_ns\":%" PRId64 ",\"last_ts_ns\":%" PRId64
		       ",\"tid\":%u,\"count\":%" PRIu64 "}\n",
		       sp_trace_reader_rel_ns(r, rec->ts), sp_trace_reader_rel_ns(r, rec->ts2),
		       rec->tid, rec->count);
		return;
	}
	printf("{\"type\":\"event\",\"ts_ns\":%" PRId64 ",\"tid\":%u,\"thread\":",
	       sp_trace_reader_rel_ns(r, rec->ts), rec->tid);
	sp_json_string(stdout, thread_name(r, rec->tid));
	printf(",\"id\":%u,\"event\":", rec->id);
	sp_json_string(stdout, event_name(rec, nb, sizeof(nb)));
	if (is_lock_event(rec)) {
		printf(",\"site\":");
		sp_json_string(stdout, site_name(r, rec, site, sizeof(site)));
		if (!is_cond_event(rec)) {
			printf(",\"lock_type\":");
			sp_json_string(stdout, sp_type_name((int)(rec->args[SP_LA_TYPE] & 0xff)));
		}
	}
	printf(",\"args\":{");
	for (unsigned i = 0; i < rec->nargs; i++) {
		if (i)
			putchar(',');
		sp_json_string(stdout, arg_name(rec, i, ab, sizeof(ab)));
		printf(":%" PRIu64, rec->args[i]);
	}
	printf("}}\n");
}

struct ts_off {
	uint64_t ts, off;
};

static int ts_off_cmp(const void *a, const void *b)
{
	const struct ts_off *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	struct trace_file tf;
	struct sp_trace_rec rec;
	struct ts_off *order = NULL;
	size_t n_order = 0, cap_order = 0;
	int json = 0, sort = 0, rc, werr;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(dump_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--sort")) {
			sort = 1;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("trace dump", "unknown option '%s' (see --help)", argv[i]);
			return 2;
		} else if (!path) {
			path = argv[i];
		} else {
			cli_error("trace dump", "one FILE only (see --help)");
			return 2;
		}
	}
	if (!path) {
		fputs(dump_usage, stderr);
		return 2;
	}
	if (load("trace dump", path, &tf))
		return 1;
	werr = sp_trace_reader_write_error(tf.r);
	if (json) {
		printf("{\"type\":\"header\",\"format\":\"syncprof-trace\",\"version\":%u,\"pid\":%u,"
		       "\"clock\":\"%s\",\"ticks_per_sec\":%" PRIu64 ",\"mono0_ns\":%" PRIu64
		       ",\"realtime0_ns\":%" PRIu64,
		       tf.r->hdr.version, tf.r->hdr.pid,
		       tf.r->hdr.clock == SP_TRACE_CLOCK_TSC ? "tsc" : "monotonic",
		       tf.r->hdr.ticks_per_sec, tf.r->hdr.mono0_ns, tf.r->hdr.realtime0_ns);
		if (werr) {
			printf(",\"write_error\":");
			sp_json_string(stdout, strerror(werr));
		}
		printf("}\n");
	} else {
		printf("# syncprof trace v%u, pid %u, clock %s; times in us since the start\n",
		       tf.r->hdr.version, tf.r->hdr.pid,
		       tf.r->hdr.clock == SP_TRACE_CLOCK_TSC ? "tsc" : "monotonic");
		if (werr)
			printf("# incomplete: writing this file failed (%s); the events after its "
			       "end are lost\n",
			       strerror(werr));
	}
	while (sp_trace_reader_next(tf.r, &rec) > 0) {
		if (rec.type != SP_REC_EVENT && rec.type != SP_REC_DROPPED &&
		    rec.type != SP_REC_WRITE_LOSS)
			continue;
		if (sort) {
			if (n_order == cap_order) {
				size_t cap = cap_order ? cap_order * 2 : 4096;
				struct ts_off *v = realloc(order, cap * sizeof(*v));

				if (!v) {
					cli_error("trace dump", "out of memory for --sort");
					free(order);
					unload(&tf);
					return 1;
				}
				order = v;
				cap_order = cap;
			}
			order[n_order].ts = rec.ts;
			order[n_order].off = rec.off;
			n_order++;
		} else if (json) {
			dump_json(tf.r, &rec);
		} else {
			dump_text(tf.r, &rec);
		}
	}
	if (sort) {
		/* Stable: equal timestamps keep file order (offsets). */
		qsort(order, n_order, sizeof(*order), ts_off_cmp);
		for (size_t i = 0; i < n_order; i++) {
			if (sp_trace_reader_read_at(tf.r, order[i].off, &rec))
				continue;
			if (json)
				dump_json(tf.r, &rec);
			else
				dump_text(tf.r, &rec);
		}
		free(order);
	}
	fflush(stdout);
	rc = finish("trace dump", &tf);
	unload(&tf);
	return rc;
}

/* ---- stats ------------------------------------------------------------ */

struct count_row {
	uint32_t key;
	uint64_t events, dropped, drop_records;
};

struct counts {
	struct count_row *v;
	size_t n, cap;
	size_t last; /* index of the last row found: records come in runs */
};

static struct count_row *counts_get(struct counts *c, uint32_t key)
{
	if (c->last < c->n && c->v[c->last].key == key)
		return &c->v[c->last];
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].key == key)
			return &c->v[c->last = i];
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct count_row *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		c->v = v;
		c->cap = cap;
	}
	memset(&c->v[c->n], 0, sizeof(*c->v));
	c->v[c->n].key = key;
	c->last = c->n;
	return &c->v[c->n++];
}

/* The "lost:" line of a file whose writer hit a write error. */
static void stats_write_loss(const struct sp_trace_reader *r)
{
	int werr = sp_trace_reader_write_error(r);

	if (!werr)
		return;
	if (r->write_loss_seen)
		printf("lost:     %" PRIu64 " events after a write error (%s), %.6f s to %.6f s; "
		       "the file is incomplete\n",
		       r->write_loss, strerror(werr),
		       (double)sp_trace_reader_rel_ns(r, r->write_loss_first) / 1e9,
		       (double)sp_trace_reader_rel_ns(r, r->write_loss_last) / 1e9);
	else
		printf("lost:     the events after a write error (%s), how many is not in the file; "
		       "the file is incomplete\n",
		       strerror(werr));
}

static int cmd_stats(int argc, char **argv)
{
	const char *path = NULL;
	struct counts per_event = { 0 }, per_thread = { 0 };
	struct trace_file tf;
	struct sp_trace_rec rec;
	uint64_t events = 0, dropped = 0, drop_records = 0, first = 0, last = 0;
	int have_ts = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(stats_usage, stdout);
			return 0;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("trace stats", "unknown option '%s' (see --help)", argv[i]);
			return 2;
		} else if (!path) {
			path = argv[i];
		} else {
			cli_error("trace stats", "one FILE only (see --help)");
			return 2;
		}
	}
	if (!path) {
		fputs(stats_usage, stderr);
		return 2;
	}
	if (load("trace stats", path, &tf))
		return 1;
	while (sp_trace_reader_next(tf.r, &rec) > 0) {
		struct count_row *e, *t;

		if (rec.type != SP_REC_EVENT && rec.type != SP_REC_DROPPED &&
		    rec.type != SP_REC_WRITE_LOSS)
			continue;
		if (!have_ts || rec.ts < first)
			first = rec.ts;
		if (!have_ts || (rec.type != SP_REC_EVENT ? rec.ts2 : rec.ts) > last)
			last = rec.type != SP_REC_EVENT ? rec.ts2 : rec.ts;
		have_ts = 1;
		if (rec.type == SP_REC_WRITE_LOSS)
			continue; /* of no one thread: below */
		t = counts_get(&per_thread, rec.tid);
		if (rec.type == SP_REC_DROPPED) {
			dropped += rec.count;
			drop_records++;
			if (t) {
				t->dropped += rec.count;
				t->drop_records++;
			}
			continue;
		}
		events++;
		e = counts_get(&per_event, rec.id);
		if (e)
			e->events++;
		if (t)
			t->events++;
	}
	printf("file:     %s\n", path);
	printf("process:  pid %u, clock %s (%" PRIu64 " ticks/s)\n", tf.r->hdr.pid,
	       tf.r->hdr.clock == SP_TRACE_CLOCK_TSC ? "tsc" : "monotonic",
	       tf.r->hdr.ticks_per_sec);
	printf("span:     %.6f s\n",
	       have_ts ? (double)(sp_trace_reader_rel_ns(tf.r, last) -
				  sp_trace_reader_rel_ns(tf.r, first)) / 1e9
		       : 0.0);
	printf("events:   %" PRIu64 " recorded, %" PRIu64 " dropped (in %" PRIu64
	       " dropped records)\n",
	       events, dropped, drop_records);
	stats_write_loss(tf.r);
	printf("\n%-32s %12s\n", "event", "count");
	for (size_t i = 0; i < per_event.n; i++) {
		const struct sp_trace_def *d = sp_trace_reader_def(tf.r, per_event.v[i].key);
		char nb[64];

		snprintf(nb, sizeof(nb), "event_%u", per_event.v[i].key);
		if (d)
			snprintf(nb, sizeof(nb), "%s", d->name);
		printf("%-32s %12" PRIu64 "\n", nb, per_event.v[i].events);
	}
	printf("\n%-8s %-16s %12s %12s\n", "tid", "thread", "events", "dropped");
	for (size_t i = 0; i < per_thread.n; i++)
		printf("%-8u %-16s %12" PRIu64 " %12" PRIu64 "\n", per_thread.v[i].key,
		       per_thread.v[i].key ? thread_name(tf.r, per_thread.v[i].key)
					   : "(no thread)",
		       per_thread.v[i].events, per_thread.v[i].dropped);
	fflush(stdout);
	rc = finish("trace stats", &tf);
	free(per_event.v);
	free(per_thread.v);
	unload(&tf);
	return rc;
}

/* ---- export --format chrome ------------------------------------------- */

struct hold {
	uint32_t tid;
	uint64_t obj;
	int64_t start_ns;
	char site[256];
};

/* A wait in progress: lock_wait or cond_wait seen, not yet over. */
struct pending {
	uint32_t tid;
	uint64_t obj;
	int64_t start_ns;
};

struct export_state {
	FILE *out;
	const struct sp_trace_reader *r;
	int first;
	uint32_t pid;
	struct hold *holds; /* open holds, searched from the end (few) */
	size_t n_holds, cap_holds;
	struct pending *waits;
	size_t n_waits, cap_waits;
	uint64_t next_id;
	int64_t last_ns;
};

static void wait_begin(struct export_state *s, uint32_t tid, uint64_t obj, int64_t ts)
{
	for (size_t i = 0; i < s->n_waits; i++) {
		if (s->waits[i].tid == tid) { /* one wait per thread at a time */
			s->waits[i].obj = obj;
			s->waits[i].start_ns = ts;
			return;
		}
	}
	if (s->n_waits == s->cap_waits) {
		size_t cap = s->cap_waits ? s->cap_waits * 2 : 64;
		struct pending *v = realloc(s->waits, cap * sizeof(*v));

		if (!v)
			return;
		s->waits = v;
		s->cap_waits = cap;
	}
	s->waits[s->n_waits++] = (struct pending){ tid, obj, ts };
}

/* Start of the wait of @tid on @obj ending at @end after @wait_ns: the
 * begin event's timestamp when there was one (same clock as @end), else
 * @end - @wait_ns (the wait is measured with CLOCK_MONOTONIC). */
static int64_t wait_start(struct export_state *s, uint32_t tid, uint64_t obj, int64_t end,
			  uint64_t wait_ns)
{
	for (size_t i = 0; i < s->n_waits; i++) {
		struct pending *p = &s->waits[i];

		if (p->tid != tid)
			continue;
		if (p->obj == obj && p->start_ns <= end) {
			int64_t start = p->start_ns;

			s->waits[i] = s->waits[--s->n_waits];
			return start;
		}
		break;
	}
	return end - (int64_t)wait_ns;
}

static void ev_begin(struct export_state *s, const char *ph, const char *name, int64_t ts_ns,
		    uint32_t tid)
{
	fputs(s->first ? "\n" : ",\n", s->out);
	s->first = 0;
	fprintf(s->out, "{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"name\":", ph, s->pid,
		tid, (double)ts_ns / 1e3);
	sp_json_string(s->out, name);
}

static void hold_open(struct export_state *s, uint32_t tid, uint64_t obj, int64_t ts,
		      const char *site)
{
	struct hold *h;

	if (s->n_holds == s->cap_holds) {
		size_t cap = s->cap_holds ? s->cap_holds * 2 : 64;
		struct hold *v = realloc(s->holds, cap * sizeof(*v));

		if (!v)
			return;
		s->holds = v;
		s->cap_holds = cap;
	}
	h = &s->holds[s->n_holds++];
	h->tid = tid;
	h->obj = obj;
	h->start_ns = ts;
	snprintf(h->site, sizeof(h->site), "%s", site);
}

static void hold_emit(struct export_state *s, uint32_t tid, uint64_t obj, int64_t start,
		      int64_t end, const char *site)
{
	char name[300], objs[32];
	uint64_t id = ++s->next_id;

	snprintf(name, sizeof(name), "hold %s", site);
	snprintf(objs, sizeof(objs), "0x%" PRIx64, obj);
	ev_begin(s, "b", name, start, tid);
	fprintf(s->out, ",\"cat\":\"hold\",\"id\":\"0x%" PRIx64 "\",\"args\":{\"obj\":", id);
	sp_json_string(s->out, objs);
	fputs("}}", s->out);
	ev_begin(s, "e", name, end, tid);
	fprintf(s->out, ",\"cat\":\"hold\",\"id\":\"0x%" PRIx64 "\"}", id);
}

/* Close the hold of @obj by @tid at @end; @hold_ns >= 0 overrides. */
static void hold_close(struct export_state *s, uint32_t tid, uint64_t obj, int64_t end,
		       int64_t hold_ns, const char *site)
{
	for (size_t i = s->n_holds; i-- > 0;) {
		struct hold *h = &s->holds[i];

		if (h->tid != tid || h->obj != obj)
			continue;
		hold_emit(s, tid, obj, hold_ns >= 0 ? end - hold_ns : h->start_ns, end, h->site);
		s->holds[i] = s->holds[--s->n_holds];
		return;
	}
	if (hold_ns >= 0)
		hold_emit(s, tid, obj, end - hold_ns, end, site);
}

static void export_wait(struct export_state *s, const struct sp_trace_rec *rec, int64_t ts,
			const char *what, const char *site)
{
	char name[300], objs[32];
	uint64_t wait = rec->args[SP_LA_NS];

	int64_t start;

	if (!wait)
		return;
	start = wait_start(s, rec->tid, rec->args[SP_LA_OBJ], ts, wait);
	snprintf(name, sizeof(name), "%s %s", what, site);
	snprintf(objs, sizeof(objs), "0x%" PRIx64, rec->args[SP_LA_OBJ]);
	ev_begin(s, "X", name, start, rec->tid);
	fprintf(s->out, ",\"cat\":\"lock\",\"dur\":%.3f,\"args\":{\"obj\":",
		(double)(ts - start) / 1e3);
	sp_json_string(s->out, objs);
	fputs(",\"type\":", s->out);
	sp_json_string(s->out, is_cond_event(rec) ? "condvar"
					    : sp_type_name((int)(rec->args[SP_LA_TYPE] & 0xff)));
	fprintf(s->out, ",\"wait_ns\":%" PRIu64 "}}", wait);
}

static void export_lock(struct export_state *s, const struct sp_trace_rec *rec, int64_t ts)
{
	char site[256];
	uint64_t obj = rec->args[SP_LA_OBJ];

	site_name(s->r, rec, site, sizeof(site));
	switch (rec->id) {
	case SP_EV_LOCK_ACQUIRED:
		export_wait(s, rec, ts, "wait", site);
		/* semaphores, barriers and joins are waited for, never held */
		if ((rec->args[SP_LA_TYPE] & 0xff) < SP_TYPE_SEMAPHORE)
			hold_open(s, rec->tid, obj, ts, site);
		break;
	case SP_EV_LOCK_RELEASED:
		hold_close(s, rec->tid, obj, ts,
			   rec->nargs > SP_LA_NS ? (int64_t)rec->args[SP_LA_NS] : -1, site);
		break;
	case SP_EV_COND_WAIT:
		/* The wait releases its mutex (in the type argument). */
		hold_close(s, rec->tid, rec->args[SP_LA_TYPE], ts, -1, site);
		wait_begin(s, rec->tid, obj, ts);
		break;
	case SP_EV_LOCK_WAIT:
		wait_begin(s, rec->tid, obj, ts);
		break;
	case SP_EV_COND_WOKEN:
		export_wait(s, rec, ts, "cond wait", site);
		if (rec->args[SP_LA_TYPE])
			hold_open(s, rec->tid, rec->args[SP_LA_TYPE], ts, site);
		break;
	case SP_EV_LOCK_TRY_FAILED: {
		char name[300];

		snprintf(name, sizeof(name), "trylock failed %s", site);
		ev_begin(s, "i", name, ts, rec->tid);
		fprintf(s->out, ",\"cat\":\"lock\",\"s\":\"t\",\"args\":{\"obj\":\"0x%" PRIx64 "\"}}",
			obj);
		break;
	}
	default:
		break;
	}
}

static void export_record(struct export_state *s, const struct sp_trace_rec *rec)
{
	char nb[64], ab[32];
	int64_t ts;

	switch (rec->type) {
	case SP_REC_THREAD:
		ev_begin(s, "M", "thread_name", 0, rec->tid);
		fputs(",\"args\":{\"name\":", s->out);
		sp_json_string(s->out, rec->str);
		fputs("}}", s->out);
		return;
	case SP_REC_DROPPED: {
		char name[64];
		int64_t t2 = sp_trace_reader_rel_ns(s->r, rec->ts2);

		ts = sp_trace_reader_rel_ns(s->r, rec->ts);
		snprintf(name, sizeof(name), "dropped %" PRIu64 " events", rec->count);
		ev_begin(s, "i", name, ts, rec->tid);
		fprintf(s->out,
			",\"cat\":\"syncprof\",\"s\":\"%s\",\"args\":{\"count\":%" PRIu64
			",\"first_us\":%.3f,\"last_us\":%.3f}}",
			rec->tid ? "t" : "p", rec->count, (double)ts / 1e3, (double)t2 / 1e3);
		if (t2 > s->last_ns)
			s->last_ns = t2;
		return;
	}
	case SP_REC_WRITE_LOSS: {
		char name[96];
		int64_t t2 = sp_trace_reader_rel_ns(s->r, rec->ts2);

		ts = sp_trace_reader_rel_ns(s->r, rec->ts);
		snprintf(name, sizeof(name), "lost %" PRIu64 " events to a write error", rec->count);
		ev_begin(s, "i", name, ts, 0);
		fprintf(s->out,
			",\"cat\":\"syncprof\",\"s\":\"g\",\"args\":{\"count\":%" PRIu64
			",\"first_us\":%.3f,\"last_us\":%.3f,\"error\":",
			rec->count, (double)ts / 1e3, (double)t2 / 1e3);
		sp_json_string(s->out, strerror((int)rec->error));
		fputs("}}", s->out);
		if (t2 > s->last_ns)
			s->last_ns = t2;
		return;
	}
	case SP_REC_EVENT:
		break;
	default:
		return;
	}
	ts = sp_trace_reader_rel_ns(s->r, rec->ts);
	if (ts > s->last_ns)
		s->last_ns = ts;
	if (is_lock_event(rec)) {
		export_lock(s, rec, ts);
		return;
	}
	ev_begin(s, "i", event_name(rec, nb, sizeof(nb)), ts, rec->tid);
	fputs(",\"cat\":\"event\",\"s\":\"t\",\"args\":{", s->out);
	for (unsigned i = 0; i < rec->nargs; i++) {
		if (i)
			fputc(',', s->out);
		sp_json_string(s->out, arg_name(rec, i, ab, sizeof(ab)));
		fprintf(s->out, ":%" PRIu64, rec->args[i]);
	}
	fputs("}}", s->out);
}

static int cmd_export(int argc, char **argv)
{
	const char *path = NULL, *out_path = NULL, *format = NULL;
	struct export_state s = { 0 };
	struct trace_file tf;
	struct sp_trace_rec rec;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(export_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			format = argv[++i];
		} else if (!strncmp(argv[i], "--format=", 9)) {
			format = argv[i] + 9;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out_path = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("trace export", "unknown option '%s' (see --help)", argv[i]);
			return 2;
		} else if (!path) {
			path = argv[i];
		} else {
			cli_error("trace export", "one FILE only (see --help)");
			return 2;
		}
	}
	if (!path || !out_path || !format) {
		fputs(export_usage, stderr);
		return 2;
	}
	if (strcmp(format, "chrome")) {
		cli_error("trace export", "unknown format '%s' (known: chrome)", format);
		return 2;
	}
	if (load("trace export", path, &tf))
		return 1;
	s.out = strcmp(out_path, "-") ? fopen(out_path, "we") : stdout;
	if (!s.out) {
		cli_error("trace export", "cannot create '%s': %s", out_path, strerror(errno));
		unload(&tf);
		return 1;
	}
	s.r = tf.r;
	s.first = 1;
	s.pid = tf.r->hdr.pid;
	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"syncprof\"},"
	      "\"traceEvents\":[",
	      s.out);
	ev_begin(&s, "M", "process_name", 0, 0);
	fprintf(s.out, ",\"args\":{\"name\":\"syncprof trace of pid %u\"}}", s.pid);
	while (sp_trace_reader_next(tf.r, &rec) > 0)
		export_record(&s, &rec);
	/* Holds still open when the trace ends end there. */
	while (s.n_holds) {
		struct hold *h = &s.holds[--s.n_holds];

		hold_emit(&s, h->tid, h->obj, h->start_ns,
			  s.last_ns > h->start_ns ? s.last_ns : h->start_ns, h->site);
	}
	fputs("\n]}\n", s.out);
	rc = finish("trace export", &tf);
	if ((s.out != stdout && fclose(s.out)) || (s.out == stdout && fflush(stdout))) {
		cli_error("trace export", "writing '%s' failed: %s", out_path, strerror(errno));
		rc = 1;
	}
	free(s.holds);
	free(s.waits);
	unload(&tf);
	return rc;
}

int cmd_trace(int argc, char **argv)
{
	if (argc < 2) {
		fputs(trace_usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(trace_usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stats"))
		return cmd_stats(argc - 1, argv + 1);
	if (!strcmp(argv[1], "export"))
		return cmd_export(argc - 1, argv + 1);
	if (!strcmp(argv[1], "what-if"))
		return cmd_trace_whatif(argc - 1, argv + 1);
	if (!strcmp(argv[1], "chains"))
		return cmd_trace_chains(argc - 1, argv + 1);
	cli_error("trace", "unknown subcommand '%s' (dump, stats, export, what-if or chains; "
		  "see --help)", argv[1]);
	return 2;
}
