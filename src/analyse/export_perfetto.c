/*
 * export_perfetto.c - a trace timeline (trace_timeline.c) as Perfetto's
 * native protobuf: a perfetto.protos.Trace, i.e. a stream of TracePacket
 * (TrackDescriptor, TrackEvent, InternedData), encoded with protobuf-c from
 * the subset perfetto_trace.proto kept next to this file (upstream field
 * numbers).  ui.perfetto.dev and trace_processor open it.
 *
 * What is written:
 *   - a process track, and under it a track per thread with its name
 *     (ThreadDescriptor); slices that do not nest on a thread (hand-over-
 *     hand locking) go to child tracks "<thread> lane N";
 *   - on each thread: wait and condition-wait slices, hold slices, failed
 *     trylocks and registered events as instants; a child track "dropped
 *     events" with a slice over each span of events its full buffer lost;
 *   - a track per lock, named after the lock (sp_timeline_lock_name():
 *     its name, else where it was created, else the site that first
 *     acquired it; never a release's site), with a slice per hold named
 *     by the holder, and a child counter track "waiters";
 *   - flows from the hold (or release) that let a waiter through to that
 *     waiter's hold (or acquisition): flow_ids on the first slice,
 *     terminating_flow_ids on the second;
 *   - event names, categories and debug-annotation names interned.
 *
 * All packets are on one sequence (trusted_packet_sequence_id 1).  The
 * first says SEQ_INCREMENTAL_STATE_CLEARED; every packet that refers to
 * interned data says SEQ_NEEDS_INCREMENTAL_STATE, and interned entries are
 * emitted in the packet that first uses them.  Timestamps are the trace's
 * CLOCK_MONOTONIC nanoseconds (mono0_ns + offset), in the default clock
 * domain: the file has no other clock to be aligned with.  Events are
 * written in time order (ends before begins at the same instant, outer
 * slices before inner ones), so readers need no re-sorting.
 *
 * Each packet is packed on its own and written as field 1 of Trace (tag,
 * length, bytes): memory stays one packet, whatever the trace's size.
 *
 * Alternatives considered: Perfetto's C SDK (not packaged in Debian, and
 * it is for live tracing, not for converting files); hand-written varint
 * encoding (what protobuf-c generates, without the checks; the pprof
 * output already uses protobuf-c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/types.h"
#include "analyse/trace_timeline.h"
#include "perfetto_trace.pb-c.h"

#define SEQ_ID 1
/* Track uuids: small numbers, short varints (every event names its
 * track).  The low 3 bits say what the rest is. */
#define UUID_PROCESS 1ull
#define UUID_THREAD 2ull  /* tid << 8 | lane */
#define UUID_DROPS 3ull   /* tid (0: the process's) */
#define UUID_PLANE 4ull   /* lane of the process's track */
#define UUID_LOCK 5ull    /* lock << 8 | lane */
#define UUID_COUNTER 6ull /* lock */
#define UUID(kind, id) ((uint64_t)(id) << 3 | (kind))
#define MAX_LANES 255u

/* ---- interning --------------------------------------------------------- */

/* A string's hash -> its index in keys (base/containers.h); its iid is
 * the index + 1, in the order strings came. */
struct intern {
	struct sp_u64map by_hash;
	char **keys;
	size_t n, cap;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

struct intern_key {
	const struct intern *in;
	const char *s;
};

static int intern_eq(const void *ctx, uint64_t i)
{
	const struct intern_key *k = ctx;

	return !strcmp(k->in->keys[i], k->s);
}

/* The iid of @s in @in, *@key its copy (alive as long as @in); *@fresh = 1
 * when just added.  0 on ENOMEM. */
static uint64_t intern(struct intern *in, const char *s, int *fresh, char **key)
{
	struct intern_key k = { in, s };
	uint64_t h = str_hash(s), i;
	char *copy;

	*fresh = 0;
	if (sp_u64map_find(&in->by_hash, h, intern_eq, &k, &i)) {
		*key = in->keys[i];
		return i + 1;
	}
	if (sp_grow(&in->keys, &in->cap, in->n, sizeof(*in->keys)) || !(copy = strdup(s)))
		return 0;
	if (sp_u64map_add(&in->by_hash, h, in->n)) {
		free(copy);
		return 0;
	}
	in->keys[in->n++] = copy;
	*key = copy;
	*fresh = 1;
	return in->n;
}

static void intern_free(struct intern *in)
{
	for (size_t i = 0; i < in->n; i++)
		free(in->keys[i]);
	free(in->keys);
	sp_u64map_free(&in->by_hash);
}

/* ---- the writer -------------------------------------------------------- */

#define MAX_NEW 16 /* interned entries one packet can introduce */
#define MAX_ANN 8  /* debug annotations of one event */

struct pw {
	FILE *out;
	const struct sp_timeline *tl;
	uint8_t *buf;
	size_t cap;
	int err;
	struct intern names, cats, anns;
	/* the packet being built: interned entries it introduces */
	Perfetto__Protos__InternedData idata;
	Perfetto__Protos__EventName name_v[MAX_NEW], *name_p[MAX_NEW];
	Perfetto__Protos__EventCategory cat_v[MAX_NEW], *cat_p[MAX_NEW];
	Perfetto__Protos__DebugAnnotationName ann_v[MAX_NEW], *ann_p[MAX_NEW];
	Perfetto__Protos__DebugAnnotation da_v[MAX_ANN], *da_p[MAX_ANN];
	char *da_str[MAX_ANN];
	size_t n_da;
};

static void put_varint(struct pw *w, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	if (fwrite(b, 1, n, w->out) != n)
		w->err = errno ? errno : EIO;
}

/* Write @pk as one "packet" (field 1, length-delimited) of Trace. */
static void put_packet(struct pw *w, Perfetto__Protos__TracePacket *pk)
{
	size_t n;

	pk->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	pk->trusted_packet_sequence_id = SEQ_ID;
	if (w->idata.n_event_names || w->idata.n_event_categories ||
	    w->idata.n_debug_annotation_names)
		pk->interned_data = &w->idata;
	n = protobuf_c_message_get_packed_size(&pk->base);
	if (n > w->cap) {
		uint8_t *b = realloc(w->buf, n);

		if (!b) {
			w->err = ENOMEM;
			return;
		}
		w->buf = b;
		w->cap = n;
	}
	protobuf_c_message_pack(&pk->base, w->buf);
	put_varint(w, 1 << 3 | 2);
	put_varint(w, n);
	if (n && fwrite(w->buf, 1, n, w->out) != n)
		w->err = errno ? errno : EIO;
	/* the next packet introduces its own entries */
	w->idata.n_event_names = w->idata.n_event_categories = 0;
	w->idata.n_debug_annotation_names = 0;
	for (size_t i = 0; i < w->n_da; i++)
		free(w->da_str[i]);
	w->n_da = 0;
}

static uint64_t name_iid(struct pw *w, const char *s)
{
	int fresh;
	char *key;
	uint64_t iid = intern(&w->names, s, &fresh, &key);
	size_t k = w->idata.n_event_names;

	if (!iid) {
		w->err = ENOMEM;
		return 0;
	}
	if (fresh && k < MAX_NEW) {
		w->name_v[k] = (Perfetto__Protos__EventName)PERFETTO__PROTOS__EVENT_NAME__INIT;
		w->name_v[k].has_iid = 1;
		w->name_v[k].iid = iid;
		w->name_v[k].name = key;
		w->name_p[k] = &w->name_v[k];
		w->idata.event_names = w->name_p;
		w->idata.n_event_names = k + 1;
	}
	return iid;
}

static uint64_t cat_iid(struct pw *w, const char *s)
{
	int fresh;
	char *ckey;
	uint64_t iid = intern(&w->cats, s, &fresh, &ckey);
	size_t k = w->idata.n_event_categories;

	if (!iid) {
		w->err = ENOMEM;
		return 0;
	}
	if (fresh && k < MAX_NEW) {
		w->cat_v[k] = (Perfetto__Protos__EventCategory)PERFETTO__PROTOS__EVENT_CATEGORY__INIT;
		w->cat_v[k].has_iid = 1;
		w->cat_v[k].iid = iid;
		w->cat_v[k].name = ckey;
		w->cat_p[k] = &w->cat_v[k];
		w->idata.event_categories = w->cat_p;
		w->idata.n_event_categories = k + 1;
	}
	return iid;
}

/* A debug annotation of the event being built; its name interned. */
static Perfetto__Protos__DebugAnnotation *ann(struct pw *w, const char *key)
{
	int fresh;
	char *akey;
	uint64_t iid = intern(&w->anns, key, &fresh, &akey);
	Perfetto__Protos__DebugAnnotation *a;
	size_t k = w->idata.n_debug_annotation_names;

	if (!iid || w->n_da == MAX_ANN) {
		w->err = iid ? w->err : ENOMEM;
		return NULL;
	}
	if (fresh && k < MAX_NEW) {
		w->ann_v[k] = (Perfetto__Protos__DebugAnnotationName)
			PERFETTO__PROTOS__DEBUG_ANNOTATION_NAME__INIT;
		w->ann_v[k].has_iid = 1;
		w->ann_v[k].iid = iid;
		w->ann_v[k].name = akey;
		w->ann_p[k] = &w->ann_v[k];
		w->idata.debug_annotation_names = w->ann_p;
		w->idata.n_debug_annotation_names = k + 1;
	}
	a = &w->da_v[w->n_da];
	*a = (Perfetto__Protos__DebugAnnotation)PERFETTO__PROTOS__DEBUG_ANNOTATION__INIT;
	a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
	a->name_iid = iid;
	w->da_p[w->n_da] = a;
	w->da_str[w->n_da] = NULL;
	w->n_da++;
	return a;
}

static void ann_uint(struct pw *w, const char *key, uint64_t v)
{
	Perfetto__Protos__DebugAnnotation *a = ann(w, key);

	if (a) {
		a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
		a->uint_value = v;
	}
}

static void ann_ptr(struct pw *w, const char *key, uint64_t v)
{
	Perfetto__Protos__DebugAnnotation *a = ann(w, key);

	if (a) {
		a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE;
		a->pointer_value = v;
	}
}

static void ann_str(struct pw *w, const char *key, const char *v)
{
	Perfetto__Protos__DebugAnnotation *a = ann(w, key);

	if (a) {
		a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
		w->da_str[w->n_da - 1] = strdup(v);
		a->string_value = w->da_str[w->n_da - 1] ? w->da_str[w->n_da - 1] : (char *)"";
	}
}

/* ---- tracks ------------------------------------------------------------ */

static uint64_t thread_uuid(uint32_t tid, uint32_t lane)
{
	return UUID(UUID_THREAD, (uint64_t)tid << 8 | (lane < MAX_LANES ? lane : MAX_LANES));
}

static uint64_t lock_uuid(uint32_t lock, uint32_t lane)
{
	return UUID(UUID_LOCK, (uint64_t)lock << 8 | (lane < MAX_LANES ? lane : MAX_LANES));
}

static void put_track(struct pw *w, Perfetto__Protos__TrackDescriptor *td)
{
	Perfetto__Protos__TracePacket pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	pk.track_descriptor = td;
	put_packet(w, &pk);
}

static void child_track(struct pw *w, uint64_t uuid, uint64_t parent, const char *name,
			int counter)
{
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;

	td.has_uuid = td.has_parent_uuid = 1;
	td.uuid = uuid;
	td.parent_uuid = parent;
	td.name = (char *)name;
	if (counter) {
		cd.has_unit = 1;
		cd.unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_COUNT;
		td.counter = &cd;
	}
	put_track(w, &td);
}

static void put_tracks(struct pw *w)
{
	const struct sp_timeline *tl = w->tl;
	Perfetto__Protos__TracePacket pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	char name[600], lname[512];

	/* The first packet of the sequence: its incremental state starts here. */
	sp_timeline_process_name(tl, name, sizeof(name));
	pd.has_pid = 1;
	pd.pid = (int32_t)tl->pid;
	pd.process_name = name;
	td.has_uuid = 1;
	td.uuid = UUID_PROCESS;
	td.process = &pd;
	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	pk.track_descriptor = &td;
	pk.has_sequence_flags = 1;
	pk.sequence_flags = PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED;
	pk.has_first_packet_on_sequence = 1;
	pk.first_packet_on_sequence = 1;
	put_packet(w, &pk);

	for (size_t i = 0; i < tl->n_threads; i++) {
		const struct sp_tl_thread *t = &tl->threads[i];
		Perfetto__Protos__TrackDescriptor tt = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__ThreadDescriptor th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;

		th.has_pid = th.has_tid = 1;
		th.pid = (int32_t)tl->pid;
		th.tid = (int32_t)t->tid;
		if (t->name[0])
			th.thread_name = (char *)t->name;
		tt.has_uuid = 1;
		tt.uuid = thread_uuid(t->tid, 0);
		tt.thread = &th;
		put_track(w, &tt);
		for (uint32_t l = 1; l < t->lanes && l <= MAX_LANES; l++) {
			snprintf(name, sizeof(name), "%s %u lane %u", t->name[0] ? t->name : "thread",
				 t->tid, l + 1);
			child_track(w, thread_uuid(t->tid, l), tt.uuid, name, 0);
		}
		if (t->dropped)
			child_track(w, UUID(UUID_DROPS, t->tid), tt.uuid, "dropped events", 0);
	}
	for (size_t i = 0; i < tl->n_slices; i++)
		if (!tl->slices[i].tid && (tl->slices[i].kind == SP_TL_DROPPED ||
					   tl->slices[i].kind == SP_TL_WRITE_LOSS)) {
			child_track(w, UUID(UUID_DROPS, 0), UUID_PROCESS, "lost events (process)", 0);
			break;
		}
	for (uint32_t l = 1; l < tl->process_lanes && l <= MAX_LANES; l++) {
		snprintf(name, sizeof(name), "process lane %u", l + 1);
		child_track(w, UUID(UUID_PLANE, l), UUID_PROCESS, name, 0);
	}
	for (size_t i = 0; i < tl->n_locks; i++) {
		const struct sp_tl_lock *l = &tl->locks[i];

		if (l->type == SP_TYPE_CONDVAR || l->type == SP_TYPE_JOIN || (!l->holds && !l->waits))
			continue;
		sp_timeline_lock_name(tl, l, lname, sizeof(lname));
		child_track(w, lock_uuid((uint32_t)i, 0), UUID_PROCESS, lname, 0);
		for (uint32_t k = 1; k < l->lanes && k <= MAX_LANES; k++) {
			snprintf(name, sizeof(name), "%s lane %u", lname, k + 1);
			child_track(w, lock_uuid((uint32_t)i, k), lock_uuid((uint32_t)i, 0), name, 0);
		}
		if (l->waits)
			child_track(w, UUID(UUID_COUNTER, i), lock_uuid((uint32_t)i, 0), "waiters", 1);
	}
}

/* ---- events ------------------------------------------------------------ */

/* At one instant: ends, counters, begins (outer first), instants, and last
 * the ends of slices that begin there (zero length, innermost first). */
enum { IT_END, IT_COUNTER, IT_BEGIN, IT_INSTANT, IT_END_ZERO };

struct item {
	int64_t ts, other; /* other: BEGIN: end; END: start */
	uint32_t idx;      /* slice, or count */
	uint8_t type, lock_track;
};

static int item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->other != y->other) /* outer begins first, inner ends first */
		return x->other > y->other ? -1 : 1;
	if (x->idx != y->idx) /* zero-length ones: the last begun ends first */
		return (x->idx < y->idx) == (x->type != IT_END_ZERO) ? -1 : 1;
	return x->lock_track - y->lock_track;
}

static uint64_t slice_track(const struct sp_timeline *tl, const struct sp_tl_slice *s, int on_lock)
{
	if (on_lock)
		return lock_uuid(s->lock, s->lock_lane);
	if (s->kind == SP_TL_DROPPED || s->kind == SP_TL_WRITE_LOSS)
		return UUID(UUID_DROPS, s->tid);
	if (!s->tid)
		return s->lane ? UUID(UUID_PLANE, s->lane < MAX_LANES ? s->lane : MAX_LANES)
			       : UUID_PROCESS;
	return thread_uuid(s->tid, s->lane);
}

static void slice_args(struct pw *w, const struct sp_tl_slice *s, int on_lock)
{
	const struct sp_timeline *tl = w->tl;

	if (on_lock)
		return; /* the name says it all; the thread's slice has the rest */
	if (s->lock != SP_TL_NONE) {
		const struct sp_tl_lock *l = &tl->locks[s->lock];

		ann_ptr(w, l->type == SP_TYPE_CONDVAR ? "condvar" : "lock", l->obj);
	}
	switch (s->kind) {
	case SP_TL_WAIT:
	case SP_TL_COND_WAIT:
		if (!(s->flags & (SP_TL_CUT_DROP | SP_TL_OPEN_END)))
			ann_uint(w, "wait_ns", s->value);
		break;
	case SP_TL_HOLD:
		ann_uint(w, "hold_ns", s->value);
		break;
	case SP_TL_WAKE:
		ann_uint(w, "woken", s->value);
		break;
	case SP_TL_DROPPED:
	case SP_TL_WRITE_LOSS:
		ann_uint(w, "events", s->value);
		break;
	case SP_TL_EVENT: {
		struct sp_trace_rec rec;

		if (sp_trace_reader_read_at(tl->r, s->value, &rec))
			break;
		for (unsigned i = 0; i < rec.nargs && w->n_da < MAX_ANN; i++) {
			char an[32];

			snprintf(an, sizeof(an), "a%u", i);
			ann_uint(w, rec.def && i < rec.def->nargs ? rec.def->args[i] : an,
				 rec.args[i]);
		}
		break;
	}
	default:
		break;
	}
	if (s->flags & SP_TL_CUT_DROP)
		ann_str(w, "note", "cut short: the events after this point were lost");
	else if (s->flags & SP_TL_OPEN_END)
		ann_str(w, "note", "still open when the trace ended");
	else if (s->flags & SP_TL_FROM_NS)
		ann_str(w, "note", s->kind == SP_TL_HOLD ? "start = release - hold_ns"
							  : "start = acquisition - wait_ns");
}

static void put_event(struct pw *w, const struct item *it, uint64_t *flows, uint64_t *term)
{
	const struct sp_timeline *tl = w->tl;
	Perfetto__Protos__TracePacket pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	uint64_t cat;
	char name[1200];

	/* mono0_ns + it->ts, in unsigned arithmetic, 0 at the least */
	pk.has_timestamp = 1;
	if (it->ts >= 0)
		pk.timestamp = tl->mono0_ns + (uint64_t)it->ts;
	else
		pk.timestamp = tl->mono0_ns > (uint64_t)-it->ts ? tl->mono0_ns - (uint64_t)-it->ts
								: 0;
	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	pk.track_event = &te;
	te.has_type = te.has_track_uuid = 1;
	if (it->type == IT_COUNTER) {
		const struct sp_tl_count *c = &tl->counts[it->idx];

		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
		te.track_uuid = UUID(UUID_COUNTER, c->lock);
		te.counter_value_field_case =
			PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
		te.counter_value = c->waiters;
		put_packet(w, &pk);
		return;
	}
	{
		const struct sp_tl_slice *s = &tl->slices[it->idx];

		te.track_uuid = slice_track(tl, s, it->lock_track);
		if (it->type == IT_END || it->type == IT_END_ZERO) {
			te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
			put_packet(w, &pk);
			return;
		}
		te.type = it->type == IT_BEGIN ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN
					       : PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
		if (it->lock_track) {
			const struct sp_tl_thread *t = sp_timeline_thread(tl, s->tid);

			snprintf(name, sizeof(name), "%s %u: %s", t && t->name[0] ? t->name : "tid",
				 s->tid, s->site != SP_TL_NONE ? tl->sites[s->site].name : "?");
		} else {
			sp_timeline_slice_name(tl, s, name, sizeof(name));
		}
		te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
		te.name_iid = name_iid(w, name);
		cat = cat_iid(w, it->lock_track ? "lock" : sp_timeline_slice_category(s));
		te.n_category_iids = 1;
		te.category_iids = &cat;
		slice_args(w, s, it->lock_track);
		te.n_debug_annotations = w->n_da;
		te.debug_annotations = w->da_p;
		if (!it->lock_track) {
			size_t n = 0;

			for (uint32_t f = s->flow_out; f != SP_TL_NONE && n < 64; f = tl->flows[f].next_out)
				if (tl->flows[f].dst != SP_TL_NONE)
					flows[n++] = f + 1;
			te.n_flow_ids = n;
			te.flow_ids = flows;
			n = 0;
			for (uint32_t f = s->flow_in; f != SP_TL_NONE && n < 64; f = tl->flows[f].next_in)
				term[n++] = f + 1;
			te.n_terminating_flow_ids = n;
			te.terminating_flow_ids = term;
		}
		pk.has_sequence_flags = 1;
		pk.sequence_flags =
			PERFETTO__PROTOS__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE;
		put_packet(w, &pk);
	}
}

static int build_items(const struct sp_timeline *tl, struct item **out, size_t *n_out)
{
	size_t n = 0, cap = tl->n_slices * 4 + tl->n_counts + 1;
	struct item *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < tl->n_slices; i++) {
		const struct sp_tl_slice *s = &tl->slices[i];
		int lock_track = s->kind == SP_TL_HOLD && s->lock != SP_TL_NONE &&
				 tl->locks[s->lock].type != SP_TYPE_CONDVAR;

		for (int on = 0; on <= lock_track; on++) {
			if (s->start == s->end && s->kind != SP_TL_HOLD && s->kind != SP_TL_WAIT &&
			    s->kind != SP_TL_COND_WAIT && s->kind != SP_TL_DROPPED &&
			    s->kind != SP_TL_WRITE_LOSS) {
				v[n++] = (struct item){ s->start, 0, (uint32_t)i, IT_INSTANT, (uint8_t)on };
				continue;
			}
			v[n++] = (struct item){ s->start, s->end, (uint32_t)i, IT_BEGIN, (uint8_t)on };
			v[n++] = (struct item){ s->end, s->start, (uint32_t)i,
						s->end == s->start ? IT_END_ZERO : IT_END, (uint8_t)on };
		}
	}
	for (size_t i = 0; i < tl->n_counts; i++)
		v[n++] = (struct item){ tl->counts[i].ts, 0, (uint32_t)i, IT_COUNTER, 0 };
	if (n > 1)
		qsort(v, n, sizeof(*v), item_cmp);
	*out = v;
	*n_out = n;
	return 0;
}

int sp_export_perfetto(FILE *out, const struct sp_timeline *tl)
{
	struct pw *w = calloc(1, sizeof(*w));
	struct item *items = NULL;
	size_t n = 0;
	uint64_t flows[64], term[64];
	int rc;

	if (!w)
		return -ENOMEM;
	w->out = out;
	w->tl = tl;
	w->idata = (Perfetto__Protos__InternedData)PERFETTO__PROTOS__INTERNED_DATA__INIT;
	rc = build_items(tl, &items, &n);
	if (!rc) {
		put_tracks(w);
		for (size_t i = 0; i < n && !w->err; i++)
			put_event(w, &items[i], flows, term);
		rc = w->err ? -w->err : 0;
	}
	free(items);
	free(w->buf);
	intern_free(&w->names);
	intern_free(&w->cats);
	intern_free(&w->anns);
	free(w);
	return rc;
}
