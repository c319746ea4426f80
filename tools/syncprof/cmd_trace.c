/*
 * cmd_trace.c - 'syncprof trace dump|stats|export': read a trace file.
 *
 * Design: the file is read into memory whole and walked once with the
 * library's reader (src/read/trace_reader.c), which keeps the name tables; each
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
 * Export: the trace becomes a timeline of slices, flows and counters
 * (src/analyse/trace_timeline.c), written as Chrome Trace Event JSON
 * (export_chrome.c) or as Perfetto's native protobuf (export_perfetto.c);
 * this file only parses the options and maps errors to exit statuses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "trace_load.h"

#include "report/render/text.h"
#include "base/containers.h"
#include "base/types.h"
#include "read/trace_reader.h"
#include "analyse/trace_timeline.h"

static const char trace_usage[] =
	"Usage: syncprof trace dump FILE [--json] [--sort]\n"
	"       syncprof trace stats FILE\n"
	"       syncprof trace export --format perfetto|chrome FILE -o OUT\n"
	"       syncprof trace what-if FILE --site SITE --factor F [--json] [--top N]\n"
	"                              [--samples N]\n"
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
	"call site.  Lock names (lock_name lines) give a lock's address, its name and\n"
	"where it was created.  Records come in file order: each thread's in time\n"
	"order, threads interleaved in chunks; --sort merges all threads by time\n"
	"(stable).\n"
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
	"Usage: syncprof trace export --format perfetto|chrome FILE -o OUT\n"
	"\n"
	"Write FILE as a timeline that ui.perfetto.dev opens:\n"
	"  perfetto  Perfetto's native protobuf (perfetto.protos.Trace; OUT.pftrace):\n"
	"            a track per thread with its name; a track per lock, with its\n"
	"            holders and a 'waiters' counter; interned names\n"
	"  chrome    Chrome Trace Event JSON (OUT.json; also chrome://tracing)\n"
	"A lock is named by its type and, in this order of preference:\n"
	"  its name (syncprof_name_lock), with its address when another lock has it:\n"
	"            \"mutex journal\";\n"
	"  its address and where it was created (its init, which the trace records\n"
	"            for addresses that had a name): \"mutex 0x55d7... created at main\n"
	"            bank.c:152\";\n"
	"  its address and the site that first acquired it (or waited for it):\n"
	"            \"mutex 0x55d7... transfer bank.c:78\";\n"
	"  its address alone, when the trace has no acquisition of it.\n"
	"Never the site of a release, which often is one unlock line for many locks.\n"
	"Both show, per thread, \"wait SITE\", \"cond wait SITE\" and \"hold SITE\" slices\n"
	"(SITE named as profiles name it: function file:line, or file:line), a flow\n"
	"from each release that let a waiter through to that waiter's hold, the\n"
	"number of waiters per lock, failed trylocks and registered events as\n"
	"instants, and the events a full buffer dropped as slices over their span.\n"
	"A trace with only releases (contended-only tracing) gets its holds from the\n"
	"releases' hold_ns.  With --hold, the holder's state during its long holds\n"
	"('running', 'preempted', 'in fsync()'...) as slices on the holder's thread.\n"
	"-o - writes to stdout.\n"
	"Exit status: 0 complete, 1 error or corrupt file (what came before the damage\n"
	"is exported), 2 usage, 3 incomplete file.\n";

struct trace_file {
	const char *path;
	uint8_t *data;
	size_t size;
	struct sp_trace_reader *r;
};

static void unload(struct trace_file *tf);

static int load(const char *cmd, const char *path, struct trace_file *tf)
{
	memset(tf, 0, sizeof(*tf));
	tf->path = path;
	if (cli_read_whole(cmd, path, &tf->data, &tf->size))
		return -1;
	tf->r = calloc(1, sizeof(*tf->r));
	if (!tf->r) {
		free(tf->data);
		cli_error(cmd, "out of memory");
		return -1;
	}
	if (sp_trace_reader_init(tf->r, tf->data, tf->size)) {
		cli_error(cmd, "'%s': %s", path, tf->r->error);
		unload(tf);
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

/* The writer's errno as text: a value no errno has (a damaged header)
 * is said as such, not as "Unknown error -1". */
static const char *write_error_text(int werr, char *buf, size_t size)
{
	if (werr > 0 && werr < 4096 && strncmp(strerror(werr), "Unknown error", 13))
		return strerror(werr);
	snprintf(buf, size, "an error number no system has, %d: the header may be damaged", werr);
	return buf;
}

/* The exit status for how reading ended, with one line on stderr. */
static int finish(const char *cmd, struct trace_file *tf)
{
	struct sp_trace_reader *r = tf->r;
	int werr = sp_trace_reader_write_error(r);
	char why[160], loss[200] = "";

	if (werr && r->write_loss_seen)
		snprintf(loss, sizeof(loss),
			 "; writing it failed (%s), and the %" PRIu64
			 " events after its last record were lost",
			 write_error_text(werr, why, sizeof(why)), r->write_loss);
	else if (werr)
		snprintf(loss, sizeof(loss),
			 "; writing it failed (%s), and the events after its end were lost (how "
			 "many is not in the file)",
			 write_error_text(werr, why, sizeof(why)));
	if (r->status == SP_TRACE_READ_TRUNCATED) {
		cli_error(cmd, "'%s' is incomplete: %s; %llu complete records were read%s", tf->path,
			  r->error, (unsigned long long)r->records, loss);
		return EXIT_TRUNCATED;
	}
	if (r->status == SP_TRACE_READ_CORRUPT) {
		cli_error(cmd, "'%s' is corrupt: %s; reading stopped there%s", tf->path, r->error,
			  loss);
		return 1;
	}
	if (werr)
		cli_error(cmd, "'%s' is incomplete: %s", tf->path, loss + 2);
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

/* A LOCK_NAME record's creation site, or NULL when it has none. */
static const char *created_site(const struct sp_trace_reader *r, const struct sp_trace_rec *rec,
				char *buf, size_t size)
{
	if (!rec->args[SP_LA_SITE] && !rec->args[SP_LA_LINE])
		return NULL;
	return site_name(r, rec, buf, size);
}

/* How that site was learnt (JSON's words, as profiles say "created_by"). */
static const char *created_how(const struct sp_trace_rec *rec)
{
	return rec->aux == SP_CREATED_INIT  ? "init"
	       : rec->aux == SP_CREATED_USE ? "first_use"
					    : NULL;
}

static void dump_lock_name_text(const struct sp_trace_reader *r, const struct sp_trace_rec *rec)
{
	char site[1024];
	const char *created = created_site(r, rec, site, sizeof(site)), *how = created_how(rec);

	printf("%14.3f  %-27s lock_name obj=0x%" PRIx64 " name=",
	       (double)sp_trace_reader_rel_ns(r, rec->ts) / 1e3, "(lock)", rec->args[SP_LA_OBJ]);
	sp_json_string(stdout, rec->str); /* quoted, control bytes escaped */
	if (created)
		printf(" created=%s%s%s", created, how ? " by " : "", how ? how : "");
	putchar('\n');
}

static void dump_lock_name_json(const struct sp_trace_reader *r, const struct sp_trace_rec *rec)
{
	char site[1024];
	const char *created = created_site(r, rec, site, sizeof(site)), *how = created_how(rec);

	printf("{\"type\":\"lock_name\",\"ts_ns\":%" PRId64 ",\"obj\":\"0x%" PRIx64 "\",\"name\":",
	       sp_trace_reader_rel_ns(r, rec->ts), rec->args[SP_LA_OBJ]);
	sp_json_string(stdout, rec->str);
	printf(",\"created_at\":");
	if (created)
		sp_json_string(stdout, created);
	else
		printf("null");
	printf(",\"created_by\":");
	if (created && how)
		sp_json_string(stdout, how);
	else
		printf("null");
	printf("}\n");
}

static void dump_text(const struct sp_trace_reader *r, const struct sp_trace_rec *rec)
{
	char nb[64], ab[32], site[1024];

	if (rec->type == SP_REC_LOCK_NAME) {
		dump_lock_name_text(r, rec);
		return;
	}
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

	if (rec->type == SP_REC_LOCK_NAME) {
		dump_lock_name_json(r, rec);
		return;
	}
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

/* The first line of a dump: the file's header, and its write error. */
static void dump_header(const struct sp_trace_reader *r, int json)
{
	int werr = sp_trace_reader_write_error(r);
	const char *clock = r->hdr.clock == SP_TRACE_CLOCK_TSC ? "tsc" : "monotonic";

	if (json) {
		printf("{\"type\":\"header\",\"format\":\"syncprof-trace\",\"version\":%u,\"pid\":%u,"
		       "\"clock\":\"%s\",\"ticks_per_sec\":%" PRIu64 ",\"mono0_ns\":%" PRIu64
		       ",\"realtime0_ns\":%" PRIu64,
		       r->hdr.version, r->hdr.pid, clock, r->hdr.ticks_per_sec, r->hdr.mono0_ns,
		       r->hdr.realtime0_ns);
		if (werr) {
			printf(",\"write_error\":");
			sp_json_string(stdout, strerror(werr));
		}
		printf("}\n");
		return;
	}
	printf("# syncprof trace v%u, pid %u, clock %s; times in us since the start\n",
	       r->hdr.version, r->hdr.pid, clock);
	if (werr)
		printf("# incomplete: writing this file failed (%s); the events after its "
		       "end are lost\n",
		       strerror(werr));
}

static void dump_one(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, int json)
{
	if (json)
		dump_json(r, rec);
	else
		dump_text(r, rec);
}

/* The records a dump shows, in file order or (@sort) by time: 0, or 1
 * after one line on stderr. */
static int dump_records(struct sp_trace_reader *r, int json, int sort)
{
	struct sp_trace_rec rec;
	struct ts_off *order = NULL;
	size_t n_order = 0, cap_order = 0;

	while (sp_trace_reader_next(r, &rec) > 0) {
		if (rec.type != SP_REC_EVENT && rec.type != SP_REC_DROPPED &&
		    rec.type != SP_REC_WRITE_LOSS && rec.type != SP_REC_LOCK_NAME)
			continue;
		if (!sort) {
			dump_one(r, &rec, json);
			continue;
		}
		if (sp_grow(&order, &cap_order, n_order, sizeof(*order))) {
			cli_error("trace dump", "out of memory for --sort");
			free(order);
			return 1;
		}
		order[n_order].ts = rec.ts;
		order[n_order].off = rec.off;
		n_order++;
	}
	/* Stable: equal timestamps keep file order (offsets). */
	if (n_order)
		qsort(order, n_order, sizeof(*order), ts_off_cmp);
	for (size_t i = 0; i < n_order; i++)
		if (!sp_trace_reader_read_at(r, order[i].off, &rec))
			dump_one(r, &rec, json);
	free(order);
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	struct trace_file tf;
	int json = 0, sort = 0, rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(dump_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--sort")) {
			sort = 1;
		} else if (cli_take_file("trace dump", argv[i], &path)) {
			return 2;
		}
	}
	if (!path) {
		cli_error("trace dump", "the trace FILE is missing (syncprof trace dump FILE "
			  "[--json] [--sort]; see --help)");
		return 2;
	}
	if (load("trace dump", path, &tf))
		return 1;
	dump_header(tf.r, json);
	if (dump_records(tf.r, json, sort)) {
		unload(&tf);
		return 1;
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
	if (sp_grow(&c->v, &c->cap, c->n, sizeof(*c->v)))
		return NULL;
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

/* What 'trace stats' counts in one pass over the file. */
struct stats {
	struct counts per_event, per_thread;
	uint64_t events, dropped, drop_records, first, last;
	int have_ts;
};

static void stats_count(struct sp_trace_reader *r, struct stats *st)
{
	struct sp_trace_rec rec;

	while (sp_trace_reader_next(r, &rec) > 0) {
		struct count_row *e, *t;
		uint64_t end = rec.type != SP_REC_EVENT ? rec.ts2 : rec.ts;

		if (rec.type != SP_REC_EVENT && rec.type != SP_REC_DROPPED &&
		    rec.type != SP_REC_WRITE_LOSS)
			continue;
		if (!st->have_ts || rec.ts < st->first)
			st->first = rec.ts;
		if (!st->have_ts || end > st->last)
			st->last = end;
		st->have_ts = 1;
		if (rec.type == SP_REC_WRITE_LOSS)
			continue; /* of no one thread: stats_write_loss() */
		t = counts_get(&st->per_thread, rec.tid);
		if (rec.type == SP_REC_DROPPED) {
			st->dropped += rec.count;
			st->drop_records++;
			if (t) {
				t->dropped += rec.count;
				t->drop_records++;
			}
			continue;
		}
		st->events++;
		e = counts_get(&st->per_event, rec.id);
		if (e)
			e->events++;
		if (t)
			t->events++;
	}
}

static void stats_print(const struct sp_trace_reader *r, const char *path, const struct stats *st)
{
	printf("file:     %s\n", path);
	printf("process:  pid %u, clock %s (%" PRIu64 " ticks/s)\n", r->hdr.pid,
	       r->hdr.clock == SP_TRACE_CLOCK_TSC ? "tsc" : "monotonic", r->hdr.ticks_per_sec);
	printf("span:     %.6f s\n",
	       st->have_ts ? (double)(sp_trace_reader_rel_ns(r, st->last) -
				      sp_trace_reader_rel_ns(r, st->first)) / 1e9
			   : 0.0);
	printf("events:   %" PRIu64 " recorded, %" PRIu64 " dropped (in %" PRIu64
	       " dropped records)\n",
	       st->events, st->dropped, st->drop_records);
	/* The lock-event mode in force at the end (LOCK_MODE records). */
	if (!r->lock_mode_seen || r->lock_mode == SP_TRACE_LOCKS_ALL)
		printf("locks:    every acquisition and release (trace_events=all)\n");
	else
		printf("locks:    contended only (waits of at least %" PRIu64
		       " ns and the releases that let a waiter through)\n",
		       r->min_wait_ns);
	stats_write_loss(r);
	printf("\n%-32s %12s\n", "event", "count");
	for (size_t i = 0; i < st->per_event.n; i++) {
		const struct sp_trace_def *d = sp_trace_reader_def(r, st->per_event.v[i].key);
		char nb[64];

		snprintf(nb, sizeof(nb), "event_%u", st->per_event.v[i].key);
		if (d)
			snprintf(nb, sizeof(nb), "%s", d->name);
		printf("%-32s %12" PRIu64 "\n", nb, st->per_event.v[i].events);
	}
	printf("\n%-8s %-16s %12s %12s\n", "tid", "thread", "events", "dropped");
	for (size_t i = 0; i < st->per_thread.n; i++)
		printf("%-8u %-16s %12" PRIu64 " %12" PRIu64 "\n", st->per_thread.v[i].key,
		       st->per_thread.v[i].key ? thread_name(r, st->per_thread.v[i].key)
					       : "(no thread)",
		       st->per_thread.v[i].events, st->per_thread.v[i].dropped);
}

static int cmd_stats(int argc, char **argv)
{
	const char *path = NULL;
	struct stats st = { 0 };
	struct trace_file tf;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(stats_usage, stdout);
			return 0;
		} else if (cli_take_file("trace stats", argv[i], &path)) {
			return 2;
		}
	}
	if (!path) {
		cli_error("trace stats", "the trace FILE is missing (syncprof trace stats FILE; "
			  "see --help)");
		return 2;
	}
	if (load("trace stats", path, &tf))
		return 1;
	stats_count(tf.r, &st);
	stats_print(tf.r, path, &st);
	fflush(stdout);
	rc = finish("trace stats", &tf);
	free(st.per_event.v);
	free(st.per_thread.v);
	unload(&tf);
	return rc;
}

/* ---- export --format chrome|perfetto ------------------------------------ */

static int cmd_export(int argc, char **argv)
{
	const char *path = NULL, *out_path = NULL, *format = NULL;
	struct sp_timeline tl;
	struct trace_file tf;
	FILE *out;
	int rc, erc, perfetto, progress;

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
		} else if (cli_take_file("trace export", argv[i], &path)) {
			return 2;
		}
	}
	/* One line naming what is missing (the usage is --help's). */
	if (!path || !out_path || !format) {
		cli_error("trace export", "%s is missing (syncprof trace export --format "
			  "perfetto|chrome FILE -o OUT; see --help)",
			  !format ? "--format" : !path ? "the trace FILE" : "-o OUT");
		return 2;
	}
	if (strcmp(format, "chrome") && strcmp(format, "perfetto")) {
		cli_error("trace export", "unknown format '%s' (known: chrome, perfetto)", format);
		return 2;
	}
	perfetto = !strcmp(format, "perfetto");
	if (load("trace export", path, &tf))
		return 1;
	/* A large trace takes a while (689 MB: ~28 s): say what is going on
	 * to a user who watches (a terminal), never into a log. */
	progress = isatty(STDERR_FILENO) && tf.size >= (32u << 20);
	if (progress)
		fprintf(stderr, "syncprof trace export: reading %s (%.0f MB)...\n", path,
			(double)tf.size / 1e6);
	if (sp_timeline_build(&tl, tf.r)) {
		cli_error("trace export", "'%s': out of memory", path);
		sp_timeline_free(&tl);
		unload(&tf);
		return 1;
	}
	out = strcmp(out_path, "-") ? fopen(out_path, "we") : stdout;
	if (!out) {
		cli_error("trace export", "cannot create '%s': %s", out_path, strerror(errno));
		sp_timeline_free(&tl);
		unload(&tf);
		return 1;
	}
	if (progress)
		fprintf(stderr, "syncprof trace export: writing %s (%zu slices)...\n", out_path,
			tl.n_slices);
	erc = perfetto ? sp_export_perfetto(out, &tl) : sp_export_chrome(out, &tl);
	rc = finish("trace export", &tf);
	if (erc || (out != stdout && fclose(out)) || (out == stdout && fflush(stdout))) {
		cli_error("trace export", "writing '%s' failed: %s", out_path,
			  strerror(erc ? -erc : errno));
		rc = 1;
	} else if (out != stdout && rc == 0) {
		/* (a damaged file's one line already says what was written) */
		fprintf(stderr, "syncprof trace export: wrote %s: %zu slices, %zu threads, %zu locks\n",
			out_path, tl.n_slices, tl.n_threads, tl.n_locks);
	}
	sp_timeline_free(&tl);
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
