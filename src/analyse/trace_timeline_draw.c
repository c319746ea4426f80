/*
 * trace_timeline_draw.c - the timeline (trace_timeline.c) made drawable:
 * slices dealt into lanes where they do not nest, and names for sites,
 * slices, locks and the process, shared by both exporters.
 *
 * Lanes: a track's slices, sorted by start (longest first), go each to the
 * first lane whose innermost open slice contains it; a lane's open slices
 * are a stack of ends.  O(slices x lanes); lanes are few (one more per
 * level of hand-over-hand locking, or per concurrent reader on a rwlock's
 * track).  A slice whose start came from wait_ns or hold_ns (another clock
 * than the trace's timestamps) and that overlaps its neighbour by at most
 * 1 us is trimmed to start where the neighbour ends instead: that overlap
 * is clock skew, not a crossing.
 *
 * Names: sites as the profile's table names them (report/names.c), with
 * the directory prefix all sites share taken off, as the table does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/syscall_names.h"
#include "base/types.h"
#include "analyse/trace_timeline.h"
#include "report/profile.h"

#define TRIM_NS 1000 /* overlaps this small are clock skew: trim, no lane */

/* Sort key of a slice for lanes: its track, then start, longest first. */
struct lane_key {
	uint64_t track;
	int64_t start, end;
	uint32_t idx;
};

static int lane_cmp(const void *a, const void *b)
{
	const struct lane_key *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Drops have a track of their own per thread (they span what they cut). */
static int is_drop(const struct sp_tl_slice *s)
{
	return s->kind == SP_TL_DROPPED || s->kind == SP_TL_WRITE_LOSS;
}

static int thread_cmp(const void *a, const void *b)
{
	const struct sp_tl_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct sp_tl_thread *thread_of(struct sp_timeline *tl, uint32_t tid)
{
	struct sp_tl_thread key = { .tid = tid };

	if (!tl->n_threads)
		return NULL;
	return bsearch(&key, tl->threads, tl->n_threads, sizeof(*tl->threads), thread_cmp);
}

struct lane {
	int64_t *ends;
	size_t n, cap;
};

/*
 * Deal the slices of @keys (sorted) into lanes per track; write each
 * slice's lane with @set.  Returns the most lanes of a track in *@max
 * through @track_lanes, called once per track.
 */
static int assign_lanes(struct sp_timeline *tl, struct lane_key *keys, size_t n, int lock_track)
{
	struct lane *lanes = NULL;
	size_t n_lanes = 0, cap_lanes = 0, used = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		struct sp_tl_slice *s = &tl->slices[keys[i].idx];
		int64_t start = s->start, end = s->end;
		size_t l;

		if (!i || keys[i].track != keys[i - 1].track) {
			for (size_t k = 0; k < n_lanes; k++)
				lanes[k].n = 0;
			used = 0;
		}
		for (l = 0;; l++) {
			struct lane *ln;

			if (l == n_lanes) {
				if (sp_grow(&lanes, &cap_lanes, n_lanes, sizeof(*lanes))) {
					rc = -ENOMEM;
					goto out;
				}
				memset(&lanes[n_lanes++], 0, sizeof(*lanes));
			}
			ln = &lanes[l];
			while (ln->n && ln->ends[ln->n - 1] <= start)
				ln->n--;
			if (ln->n && ln->ends[ln->n - 1] < end && !lock_track &&
			    (s->flags & SP_TL_FROM_NS) && ln->ends[ln->n - 1] - start <= TRIM_NS) {
				/* clock skew: start where the neighbour ends */
				start = s->start = ln->ends[ln->n - 1];
				while (ln->n && ln->ends[ln->n - 1] <= start)
					ln->n--;
			}
			if (!ln->n || ln->ends[ln->n - 1] >= end) {
				if (sp_grow(&ln->ends, &ln->cap, ln->n, sizeof(*ln->ends))) {
					rc = -ENOMEM;
					goto out;
				}
				ln->ends[ln->n++] = end;
				break;
			}
		}
		if (lock_track)
			s->lock_lane = (uint32_t)l;
		else
			s->lane = (uint32_t)l;
		if (l + 1 > used) {
			used = l + 1;
			if (lock_track)
				tl->locks[s->lock].lanes = (uint32_t)used;
			else if (s->tid && !is_drop(s))
				thread_of(tl, s->tid)->lanes = (uint32_t)used;
			else if (!s->tid && !is_drop(s))
				tl->process_lanes = (uint32_t)used;
		}
	}
out:
	for (size_t k = 0; k < n_lanes; k++)
		free(lanes[k].ends);
	free(lanes);
	return rc;
}

int sp_timeline_lanes(struct sp_timeline *tl)
{
	struct lane_key *keys = malloc((tl->n_slices ? tl->n_slices : 1) * sizeof(*keys));
	size_t n = 0;
	int rc;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < tl->n_slices; i++) {
		const struct sp_tl_slice *s = &tl->slices[i];

		keys[n++] = (struct lane_key){ (uint64_t)s->tid << 1 | (uint64_t)is_drop(s), s->start,
					       s->end, (uint32_t)i };
	}
	if (n > 1)
		qsort(keys, n, sizeof(*keys), lane_cmp);
	rc = assign_lanes(tl, keys, n, 0);
	n = 0;
	for (size_t i = 0; !rc && i < tl->n_slices; i++) {
		const struct sp_tl_slice *s = &tl->slices[i];

		if (s->kind == SP_TL_HOLD && s->lock != SP_TL_NONE)
			keys[n++] = (struct lane_key){ s->lock, s->start, s->end, (uint32_t)i };
	}
	if (!rc) {
		if (n > 1)
			qsort(keys, n, sizeof(*keys), lane_cmp);
		rc = assign_lanes(tl, keys, n, 1);
	}
	free(keys);
	return rc;
}

/* Names of the sites, paths without the directory prefix they share. */
int sp_timeline_name_sites(struct sp_timeline *tl)
{
	size_t auto_len = 0;
	const char *first = NULL;

	for (size_t i = 0; i < tl->n_sites; i++) {
		const char *f = tl->sites[i].file;
		size_t k = 0;

		if (!f || f[0] != '/')
			continue;
		if (!first) {
			first = f;
			auto_len = strrchr(f, '/') - f + 1;
			continue;
		}
		while (k < auto_len && f[k] == first[k])
			k++;
		while (k && first[k - 1] != '/')
			k--;
		auto_len = k;
	}
	for (size_t i = 0; i < tl->n_sites; i++) {
		struct sp_tl_site *s = &tl->sites[i];
		struct sp_frame f;
		char buf[1024];

		memset(&f, 0, sizeof(f));
		f.function = s->function;
		f.file = s->file;
		f.dso = s->dso;
		f.line = s->line;
		f.offset = s->offset;
		f.address = s->address;
		sp_frame_format(&f, NULL, auto_len, buf, sizeof(buf));
		s->name = strdup(buf);
		if (!s->name)
			return -ENOMEM;
	}
	return 0;
}

const struct sp_tl_thread *sp_timeline_thread(const struct sp_timeline *tl, uint32_t tid)
{
	return thread_of((struct sp_timeline *)tl, tid);
}

const char *sp_timeline_kind_name(unsigned kind)
{
	static const char *const names[SP_TL_KINDS] = {
		[SP_TL_WAIT] = "wait",		   [SP_TL_COND_WAIT] = "cond wait",
		[SP_TL_HOLD] = "hold",		   [SP_TL_RELEASE] = "release",
		[SP_TL_ACQUIRE] = "acquired",	   [SP_TL_TRY_FAILED] = "trylock failed",
		[SP_TL_EVENT] = "event",	   [SP_TL_DROPPED] = "dropped",
		[SP_TL_WRITE_LOSS] = "write loss", [SP_TL_WAKE] = "futex wake",
		[SP_TL_STATE] = "holder state",
	};

	return kind < SP_TL_KINDS ? names[kind] : "?";
}

const char *sp_timeline_slice_name(const struct sp_timeline *tl, const struct sp_tl_slice *s,
				   char *buf, size_t size)
{
	const char *site = s->site != SP_TL_NONE ? tl->sites[s->site].name : NULL;

	switch (s->kind) {
	case SP_TL_DROPPED:
		snprintf(buf, size, "dropped %" PRIu64 " events", s->value);
		return buf;
	case SP_TL_WRITE_LOSS:
		snprintf(buf, size, "lost %" PRIu64 " events to a write error", s->value);
		return buf;
	case SP_TL_EVENT: {
		struct sp_trace_rec rec;

		if (!sp_trace_reader_read_at(tl->r, s->value, &rec) && rec.def)
			snprintf(buf, size, "%s", rec.def->name);
		else
			snprintf(buf, size, "event_%u",
				 sp_trace_reader_read_at(tl->r, s->value, &rec) ? 0 : rec.id);
		return buf;
	}
	case SP_TL_STATE: {
		unsigned part = (unsigned)(s->value & 0xff), in = (unsigned)(s->value >> 8);
		const char *call = in >= SP_HA_IN_SYSCALL ? sp_syscall_name(in - SP_HA_IN_SYSCALL)
							 : NULL;

		if (part == 0)
			snprintf(buf, size, "running");
		else if (part == 1)
			snprintf(buf, size, "preempted");
		else if (in == SP_HA_IN_LOCK)
			snprintf(buf, size, "waiting for another lock");
		else if (call)
			snprintf(buf, size, "in %s()", call);
		else if (in >= SP_HA_IN_SYSCALL)
			snprintf(buf, size, "in system call %u", in - SP_HA_IN_SYSCALL);
		else
			snprintf(buf, size, "blocked (other)");
		return buf;
	}
	case SP_TL_HOLD:
		if (s->flags & SP_TL_FROM_NS) {
			snprintf(buf, size, "hold released at %s", site ? site : "?");
			return buf;
		}
		break;
	default:
		break;
	}
	if (site)
		snprintf(buf, size, "%s %s", sp_timeline_kind_name(s->kind), site);
	else
		snprintf(buf, size, "%s", sp_timeline_kind_name(s->kind));
	return buf;
}

const char *sp_timeline_lock_name(const struct sp_timeline *tl, const struct sp_tl_lock *l,
				  char *buf, size_t size)
{
	const char *type = l->type == SP_TYPE_CONDVAR ? "condvar" : sp_type_name(l->type);
	uint32_t site = l->first_site;
	const char *how = "";

	if (l->type == SP_TYPE_RWLOCK_READ || l->type == SP_TYPE_RWLOCK_WRITE)
		type = "rwlock";
	if (l->name) {
		if (l->name_shared)
			snprintf(buf, size, "%s %s 0x%" PRIx64, type, l->name, l->obj);
		else
			snprintf(buf, size, "%s %s", type, l->name);
		return buf;
	}
	if (l->created_site != SP_TL_NONE) {
		site = l->created_site;
		how = "created at ";
	} else if (site == SP_TL_NONE && l->used_site != SP_TL_NONE) {
		site = l->used_site;
	}
	if (site != SP_TL_NONE && tl->sites[site].name)
		snprintf(buf, size, "%s 0x%" PRIx64 " %s%s", type, l->obj, how, tl->sites[site].name);
	else
		snprintf(buf, size, "%s 0x%" PRIx64, type, l->obj);
	return buf;
}

const char *sp_timeline_process_name(const struct sp_timeline *tl, char *buf, size_t size)
{
	const char *main_name = sp_trace_reader_thread(tl->r, tl->pid);

	if (main_name && *main_name)
		snprintf(buf, size, "%s (syncprof trace of pid %u)", main_name, tl->pid);
	else
		snprintf(buf, size, "syncprof trace of pid %u", tl->pid);
	return buf;
}
