/*
 * file.c - the trace file: open, switch, close, drain, fork and process
 * exit.  (The event table is events.c; the writer thread, writer.c.)
 *
 * Design: the writer thread (writer.c) drains the rings at least every
 * 100 ms, every ms under traffic, so a quiet program's events reach the
 * file within 100 ms.  A drain pass holds io_lock and, for every ring, scans
 * [tail, head) in place for names the file does not have yet (the thread,
 * the call-site strings and code addresses of lock events), writes those
 * definitions, then writes the records straight from the ring with
 * write(2), and only then publishes the new tail.  So what a pass took
 * from the rings is in the kernel when the pass ends: a SIGKILL loses only
 * what was still in the rings (docs/trace-format.md, "Crash safety").
 *
 * Definitions precede use: a new file starts with the header, every event
 * definition, a CLOCK record and /proc/self/maps; THREAD, STRING records
 * are written just before the first chunk that needs them; MAPS is written
 * again before a chunk whose code address the last MAPS did not cover
 * (dlopen).  No symbolization happens in the process (dladdr would take
 * the loader's lock inside io_lock); the reader resolves code addresses to
 * DSO + offset from MAPS, which addr2line turns into file:line.
 *
 * Switch (syncprof_trace_open with a file open): under io_lock the old file
 * gets everything the rings hold, then is closed; the new file starts.
 * Emitters never wait: an event committed before the switch took its
 * snapshot of head goes to the old file, later ones to the new.
 *
 * Thread exit: the thread's key destructor (buffer.c) drains its own
 * ring and writes its pending drops under io_lock, then unmaps the ring.
 * Process exit: an atexit handler stops the writer and drains everything,
 * pending drops of every ring included.  fork: the atfork handlers hold all
 * three locks across fork; the child drops the rings of threads it does not
 * have, and either opens its own file (name with %p) and starts its own
 * writer at its first event (never in the atfork handler, so a child that
 * just execs creates no thread), or stops tracing.  The child never joins the parent's writer
 * (the seed design hung there at exit).
 *
 * Write errors: the bytes go through the sink (sink.c), which on the first
 * failed write cuts the file back to its last whole record, marks its
 * header and from then on counts what it would have written.  The drain
 * goes on as before (rings must still be emptied), minus the names.  This
 * file tells the runtime through its handler: "failed" the first time a
 * file fails, "closed" with the final count when it is closed (switch,
 * close, exit).  Those are queued under io_lock and told by the thread
 * that leaves io_lock (tell()), with no lock held, so that a slow stderr
 * never holds up the trace.  A thread of the program that writes (its own
 * ring at exit, flush, close, open) blocks SIGXFSZ and SIGPIPE meanwhile
 * (sp_sigguard), so that a write past RLIMIT_FSIZE or into a dead pipe
 * fails instead of killing the program; the writer blocks every signal.
 *
 * Lock order: sp_trace_ctl_lock, io_lock, sp_trace_list_lock (buffer.c's;
 * all sp_lock_t futexes: the tracer never calls the pthread functions it
 * traces).  The writer takes only io_lock and sp_trace_list_lock.
 *
 * Alternatives considered: copying each ring's bytes to a staging area
 * and an output buffer before write(2) (the first version): two memcpy per
 * byte more, in the writer that competes for the emitters' CPUs; a kick at
 * half full and no polling: 35 ns instead of 18 ns per event in tracebench,
 * because the futex wake-up put the writer on the emitter's CPU; writing
 * from the emitting threads themselves when their ring fills (LTTng's
 * "blocking" mode) puts a system call in the hot path of exactly the
 * thread that is busiest; mmap'ing the file and letting threads write into
 * it directly survives SIGKILL completely but needs a shared allocation of
 * file space per chunk and a sparse, pre-sized file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/lock_calls.h"
#include "base/maps.h"
#include "trace.h"

#define TELL_MAX 4


static sp_lock_t io_lock = SP_LOCK_INIT;

/* Written under sp_trace_ctl_lock: the name template and start-up. */
static struct {
	char path_tmpl[4096];
	int initialised;
	uint64_t ticks_per_sec;
} ctl SP_LARGE;

/* Written by the holder of io_lock: the open file and what went into it. */
static struct {
	struct sp_trace_sink sink;
	uint32_t gen;           /* bumped per file; a ring's THREAD record names one */
	char path[4096];        /* the open file's name, %p expanded */
	uint64_t tick0;         /* its header's tick0 */
	int failure_queued;     /* its failure is told (or queued) */
	uint64_t bytes_drained; /* taken from the rings, written or not */
	uint64_t lost_written;  /* of sp_trace_lost_get(), in some file */
	uint64_t *seen;         /* open addressing set of written names, 0 = free */
	size_t seen_mask, seen_n;
	uint64_t (*ranges)[2];  /* code ranges of the last MAPS written */
	size_t n_ranges, ranges_cap;
	uint64_t last_clock_ns;
} io = { .sink = { .fd = -1 } };

/* Write errors to tell, queued by the holder of io_lock; pending: a
 * relaxed hint that n != 0. */
struct told {
	struct sp_trace_write_error e;
	char path[sizeof(io.path)];
};
static struct {
	unsigned n;
	int pending;
	struct told queue[TELL_MAX];
} tells SP_LARGE;

/* Installed once at start-up by the runtime: where write errors go, and
 * the source of lock names (whose flag, sp_trace_names_on, changes under
 * io_lock). */
static struct {
	void (*write_error_handler)(const struct sp_trace_write_error *e);
	void (*lock_names_source)(sp_trace_lock_name_fn emit);
} installed;
int sp_trace_names_on;


/* ---- output: whole records into the sink ----------------------------- */

static void out_bytes_locked(const void *rec, size_t n)
{
	void *p = sp_sink_reserve_locked(&io.sink, n);

	if (p)
		memcpy(p, rec, n);
}

/* A record of @type with a fixed part and NUL-terminated strings. */
static void out_record_locked(uint16_t type, uint16_t aux, const void *fixed, size_t fixed_len,
			      const char *const *strs, unsigned n_strs)
{
	struct sp_trace_rec_header h = { type, aux, 0 };
	size_t len = sizeof(h) + fixed_len;
	size_t slen[SP_TRACE_MAX_ARGS + 2];
	uint8_t *p;

	for (unsigned i = 0; i < n_strs; i++) {
		slen[i] = strnlen(strs[i], 4095) + 1;
		len += slen[i];
	}
	h.size = (uint32_t)((len + 7) & ~(size_t)7);
	p = sp_sink_reserve_locked(&io.sink, h.size);
	if (!p)
		return;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, fixed, fixed_len);
	p += fixed_len;
	for (unsigned i = 0; i < n_strs; i++) {
		memcpy(p, strs[i], slen[i] - 1);
		p[slen[i] - 1] = '\0';
		p += slen[i];
	}
	memset(p, 0, h.size - len);
}

static void out_def_locked(unsigned id)
{
	struct sp_trace_def d;
	const char *strs[SP_TRACE_MAX_ARGS + 1];
	uint32_t fixed[2] = { id, 0 };

	if (sp_trace_event_def_locked(id, &d))
		return;
	strs[0] = d.name;
	for (unsigned i = 0; i < d.nargs; i++)
		strs[1 + i] = d.args[i];
	out_record_locked(SP_REC_EVENT_DEF, (uint16_t)d.nargs, fixed, sizeof(fixed), strs,
			  1 + d.nargs);
}

static void out_clock_locked(void)
{
	struct timespec rt;
	struct sp_trace_rec_clock c = { { SP_REC_CLOCK, 0, sizeof(c) }, 0, 0, 0 };

	c.tick = sp_trace_now();
	c.mono_ns = sp_now_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	c.realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	io.last_clock_ns = c.mono_ns;
	out_bytes_locked(&c, sizeof(c));
}

static void out_lock_mode_locked(void)
{
	struct sp_trace_rec_lock_mode m = { { SP_REC_LOCK_MODE, 0, sizeof(m) }, 0, 0, 0, 0 };

	m.tick = sp_trace_now();
	m.mode = (uint32_t)sp_load_relaxed(&sp_trace_lock_mode);
	m.min_wait_ns = sp_load_relaxed(&sp_trace_min_wait_ns);
	out_bytes_locked(&m, sizeof(m));
}

static void out_thread_locked(struct sp_trace_buf *b)
{
	uint32_t fixed[2] = { b->tid, 0 };
	char name[17];
	const char *s = name;

	memcpy(name, b->name, 16);
	name[16] = '\0';
	out_record_locked(SP_REC_THREAD, 0, fixed, sizeof(fixed), &s, 1);
	b->file_gen = io.gen;
}

/* ---- names already in this file --------------------------------------- */

static int seen_insert_locked(uint64_t key)
{
	size_t i;

	if (!key)
		return 0;
	if (io.seen_n + 1 > (io.seen_mask + 1) / 2) {
		size_t cap = io.seen_mask ? (io.seen_mask + 1) * 2 : 4096;
		uint64_t *n = sp_mmap(cap * sizeof(*n));

		if (!n)
			return 1; /* write the name again rather than never */
		for (size_t j = 0; io.seen && j <= io.seen_mask; j++) {
			if (!io.seen[j])
				continue;
			for (i = (io.seen[j] * 0x9E3779B97F4A7C15ull) >> 20 & (cap - 1); n[i];
			     i = (i + 1) & (cap - 1))
				;
			n[i] = io.seen[j];
		}
		sp_munmap(io.seen, io.seen ? (io.seen_mask + 1) * sizeof(*io.seen) : 0);
		io.seen = n;
		io.seen_mask = cap - 1;
	}
	for (i = (key * 0x9E3779B97F4A7C15ull) >> 20 & io.seen_mask; io.seen[i]; i = (i + 1) & io.seen_mask)
		if (io.seen[i] == key)
			return 0;
	io.seen[i] = key;
	io.seen_n++;
	return 1;
}

static void seen_clear_locked(void)
{
	if (io.seen)
		memset(io.seen, 0, (io.seen_mask + 1) * sizeof(*io.seen));
	io.seen_n = 0;
}

/* ---- /proc/self/maps -------------------------------------------------- */

static void ranges_add_locked(uint64_t lo, uint64_t hi)
{
	if (io.n_ranges == io.ranges_cap) {
		size_t cap = io.ranges_cap ? io.ranges_cap * 2 : 256;
		void *n = sp_mmap(cap * sizeof(*io.ranges));

		if (!n)
			return;
		if (io.ranges)
			memcpy(n, io.ranges, io.n_ranges * sizeof(*io.ranges));
		sp_munmap(io.ranges, io.ranges_cap * sizeof(*io.ranges));
		io.ranges = n;
		io.ranges_cap = cap;
	}
	io.ranges[io.n_ranges][0] = lo;
	io.ranges[io.n_ranges][1] = hi;
	io.n_ranges++;
}

/* Parse one maps line into the executable ranges. */
static void ranges_note_line_locked(const char *line, size_t len)
{
	struct sp_maps_line m;

	if (!sp_maps_parse_line(line, line + len, &m) && m.perms[2] == 'x')
		ranges_add_locked(m.lo, m.hi);
}

/* Write /proc/self/maps as MAPS records and remember its code ranges. */
static void out_maps_locked(void)
{
	char buf[8192];
	char line[512];
	size_t line_len = 0;
	int mfd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (mfd < 0)
		return;
	io.n_ranges = 0;
	while ((n = read(mfd, buf, sizeof(buf))) > 0) {
		struct sp_trace_rec_header h = { SP_REC_MAPS, 0, 0 };
		size_t padded = ((size_t)n + 7) & ~(size_t)7;
		uint8_t *p;

		h.size = (uint32_t)(sizeof(h) + padded);
		p = sp_sink_reserve_locked(&io.sink, h.size);
		if (p) {
			memcpy(p, &h, sizeof(h));
			memcpy(p + sizeof(h), buf, (size_t)n);
			memset(p + sizeof(h) + n, 0, padded - (size_t)n);
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				ranges_note_line_locked(line, line_len);
				line_len = 0;
			} else if (line_len < sizeof(line) - 1) {
				line[line_len++] = buf[i];
			}
		}
	}
	close(mfd);
}

static int pc_mapped_locked(uint64_t pc)
{
	for (size_t i = 0; i < io.n_ranges; i++)
		if (pc >= io.ranges[i][0] && pc < io.ranges[i][1])
			return 1;
	return 0;
}

/* ---- draining --------------------------------------------------------- */

static void out_string_locked(const char *s)
{
	uint64_t key = (uint64_t)(uintptr_t)s;

	if (s && seen_insert_locked(key))
		out_record_locked(SP_REC_STRING, 0, &key, sizeof(key), &s, 1);
}

/* A LOCK_NAME record; its site's STRING records or MAPS first, as a lock
 * event's (define_names_locked). */
static void out_lock_name_locked(const struct sp_trace_lock_name *n)
{
	const struct sp_site *s = &n->created;
	const char *name = n->name ? n->name : "";
	uint64_t fixed[5] = { sp_trace_now(), n->obj, 0, 0, 0 };

	if (s->line) {
		out_string_locked(s->file);
		out_string_locked(s->func);
		fixed[2] = (uint64_t)(uintptr_t)s->file;
		fixed[3] = (uint64_t)(uintptr_t)s->func;
		fixed[4] = s->line; /* u32 line, u32 pad: little-endian */
	} else if (s->pc) {
		fixed[2] = s->pc;
		if (seen_insert_locked(s->pc | 1ull << 63) && !pc_mapped_locked(s->pc))
			out_maps_locked();
	}
	out_record_locked(SP_REC_LOCK_NAME, (uint16_t)n->how, fixed, sizeof(fixed), &name, 1);
}

static uint64_t ring_u64(const struct sp_trace_buf *b, uint64_t at)
{
	return *(const uint64_t *)(b->ring + (at & b->mask));
}

/* Define what the lock events in @b's ring [tail, head) name, before the
 * records are written.  Reads in place: records are 8-byte aligned, so no
 * u64 straddles the end of the ring. */
static void define_names_locked(const struct sp_trace_buf *b, uint64_t tail, uint64_t head)
{
	int maps_again = 0;

	for (uint64_t at = tail; at < head;) {
		uint64_t h = ring_u64(b, at), w2;
		uint32_t size = (uint32_t)(h >> 32);
		unsigned type = (unsigned)(h & 0xffff), nargs = (unsigned)(h >> 16 & 0xffff), id;

		if (size < sizeof(struct sp_trace_rec_header))
			break; /* cannot happen: the owner wrote it */
		w2 = ring_u64(b, at + 16);
		id = (unsigned)(w2 >> 32);
		if (type == SP_REC_EVENT && id >= 1 && id <= SP_EV_LOCK_LAST && nargs > SP_LA_TYPE) {
			uint64_t site = ring_u64(b, at + 24 + 8 * SP_LA_SITE);

			if (ring_u64(b, at + 24 + 8 * SP_LA_LINE)) {
				out_string_locked((const char *)(uintptr_t)site);
				out_string_locked((const char *)(uintptr_t)ring_u64(
					b, at + 24 + 8 * SP_LA_FUNC));
			} else if (seen_insert_locked(site | 1ull << 63) && !pc_mapped_locked(site)) {
				maps_again = 1;
			}
		}
		at += size;
	}
	if (maps_again)
		out_maps_locked();
}

/*
 * Write @b's committed records: names first (through the output buffer),
 * then the records straight from the ring, then free the space.  No copy
 * in user space: the ring is the write buffer.
 */
static void drain_buf_locked(struct sp_trace_buf *b)
{
	uint64_t head = sp_load_acquire(&b->head);
	uint64_t tail = b->tail;

	if (head == tail || io.sink.fd < 0)
		return;
	if (!io.sink.error) { /* a failed file gets no more names */
		if (b->file_gen != io.gen)
			out_thread_locked(b);
		define_names_locked(b, tail, head);
	}
	sp_sink_write_ring_locked(&io.sink, b->ring, b->mask, tail, head);
	io.bytes_drained += head - tail;
	/* Release: our reads of the space (write(2) above, or counting
	 * what a failed file lost) are done before the owner, which loads
	 * tail with acquire, reuses it. */
	sp_store_release(&b->tail, head);
}

/* Write @b's pending drops (caller: the owner, or the process exit). */
static void out_drops_locked(struct sp_trace_buf *b)
{
	struct sp_trace_rec_dropped d = { { SP_REC_DROPPED, 0, sizeof(d) }, 0, 0, 0, 0, 0 };

	d.count = sp_load_relaxed(&b->drop_count);
	if (!d.count || io.sink.fd < 0)
		return;
	if (b->file_gen != io.gen && !io.sink.error)
		out_thread_locked(b);
	d.first_ts = sp_load_relaxed(&b->drop_first);
	d.last_ts = sp_load_relaxed(&b->drop_last);
	d.tid = b->tid;
	out_bytes_locked(&d, sizeof(d)); /* counted as lost if the file failed */
	sp_store_relaxed(&b->drop_count, 0);
}

static void drain_all_locked(void)
{
	struct sp_trace_buf *b;

	/* Rings are unlinked only under io_lock (which we hold) and linked at
	 * the head, so after reading the head under list_lock the walk is
	 * safe without it. */
	sp_lock(&sp_trace_list_lock);
	b = sp_trace_bufs;
	sp_unlock(&sp_trace_list_lock);
	for (; b; b = b->next)
		drain_buf_locked(b);
	if (io.sink.fd >= 0 && !io.sink.error && sp_now_ns() - io.last_clock_ns > 1000000000u)
		out_clock_locked();
	sp_sink_flush_locked(&io.sink);
}

/* The flush of the calling thread's own pending drops, then everything. */
static void flush_self_locked(void)
{
	struct sp_trace_buf *self = sp_trace_buf_self();

	drain_all_locked();
	if (self) {
		drain_buf_locked(self);
		out_drops_locked(self);
	}
	sp_sink_flush_locked(&io.sink);
}

/* ---- telling write errors --------------------------------------------- */

void sp_trace_set_write_error_handler(void (*fn)(const struct sp_trace_write_error *e))
{
	sp_store_release(&installed.write_error_handler, fn);
}

static void tell_queue_locked(const struct sp_trace_write_error *e)
{
	struct told *t;

	if (tells.n == TELL_MAX)
		return; /* cannot happen: every io_lock holder tells on leaving */
	t = &tells.queue[tells.n++];
	t->e = *e;
	snprintf(t->path, sizeof(t->path), "%s", e->path);
	t->e.path = t->path;
	sp_store_relaxed(&tells.pending, 1);
}

/* The open file failed since we last looked: queue "failed". */
static void failure_note_locked(void)
{
	struct sp_trace_write_error e = { io.path, io.sink.error, 0, 0, 0, 0, 0 };

	if (io.sink.fd >= 0 && io.sink.error && !io.failure_queued) {
		io.failure_queued = 1;
		tell_queue_locked(&e);
	}
}

static int64_t file_ns_locked(uint64_t ts)
{
	__int128 d = ((__int128)ts - (__int128)io.tick0) * 1000000000 /
		     (__int128)(ctl.ticks_per_sec ? ctl.ticks_per_sec : 1);

	return (int64_t)d;
}

/* Tell the queued write errors (no trace lock held), oldest first.  One
 * at a time, copied out under io_lock: the handler may be slow. */
static void tell(void)
{
	void (*fn)(const struct sp_trace_write_error *) = sp_load_acquire(&installed.write_error_handler);

	while (sp_load_relaxed(&tells.pending)) {
		struct told t;

		sp_lock(&io_lock);
		if (!tells.n) {
			sp_store_relaxed(&tells.pending, 0);
			sp_unlock(&io_lock);
			break;
		}
		t = tells.queue[0];
		memmove(tells.queue, tells.queue + 1, --tells.n * sizeof(tells.queue[0]));
		sp_store_relaxed(&tells.pending, tells.n != 0);
		sp_unlock(&io_lock);
		t.e.path = t.path;
		if (fn)
			fn(&t.e);
	}
}

/* io_lock, taken by a thread of the program (not the writer), whose writes
 * must fail rather than raise a fatal SIGXFSZ or SIGPIPE. */
static void io_enter(struct sp_sigguard *g)
{
	sp_sigguard_enter(g);
	sp_lock(&io_lock);
}

static void io_leave(struct sp_sigguard *g)
{
	failure_note_locked();
	sp_unlock(&io_lock);
	sp_sigguard_leave(g);
}

/* ---- for the writer thread (writer.c) -------------------------------- */

static uint64_t writer_round(void)
{
	uint64_t before;

	sp_lock(&io_lock);
	before = io.bytes_drained;
	drain_all_locked();
	failure_note_locked();
	before = io.bytes_drained - before;
	sp_unlock(&io_lock);
	tell();
	return before;
}

static int file_open_now(void)
{
	return io.sink.fd >= 0;
}

static const struct sp_trace_writer_ops writer_ops = { writer_round, file_open_now };

/* ---- rings ------------------------------------------------------------ */

/* A ring's owner is exiting (buffer.c's exit hook): write out its ring
 * and drops, unlink it under io_lock (walkers hold it), unmap it. */
static void ring_exit(struct sp_trace_buf *b)
{
	struct sp_sigguard g;
	char name[16];

	io_enter(&g);
	if (io.sink.fd >= 0) {
		drain_buf_locked(b);
		prctl(PR_GET_NAME, name, 0, 0, 0);
		if (memcmp(name, b->name, sizeof(name))) {
			memcpy(b->name, name, sizeof(name)); /* renamed since */
			if (b->file_gen == io.gen && !io.sink.error)
				out_thread_locked(b);
		}
		out_drops_locked(b);
		sp_sink_flush_locked(&io.sink);
	}
	sp_lock(&sp_trace_list_lock);
	sp_trace_buf_unlink_locked(b);
	sp_unlock(&sp_trace_list_lock);
	io_leave(&g);
	sp_munmap(b, b->map_size);
	tell();
}

/* ---- fork and exit ---------------------------------------------------- */


static int path_has_pid(const char *tmpl)
{
	for (const char *p = tmpl; *p; p++) {
		if (p[0] == '%' && p[1] == 'p')
			return 1;
		if (p[0] == '%' && p[1] == '%')
			p++;
	}
	return 0;
}

static void header_make(struct sp_trace_file_header *h);
static void file_start_locked(int newfd, const struct sp_trace_file_header *h, int header_error,
			      const char *path);

void sp_trace_fork_prepare(void)
{
	sp_lock(&sp_trace_ctl_lock);
	sp_lock(&io_lock);
	sp_lock(&sp_trace_list_lock);
}

void sp_trace_fork_parent(void)
{
	sp_unlock(&sp_trace_list_lock);
	sp_unlock(&io_lock);
	sp_unlock(&sp_trace_ctl_lock);
}

void sp_trace_fork_child(void)
{
	struct sp_trace_buf *self = sp_trace_buf_self(), *b, *next;
	struct sp_trace_file_header h;
	struct sp_sigguard g;
	char path[4096];

	for (b = sp_trace_bufs; b; b = next) {
		next = b->next;
		if (b != self) {
			sp_trace_buf_unlink_locked(b);
			sp_munmap(b, b->map_size);
		}
	}
	sp_trace_buf_fork_child(self);
	sp_trace_writer_fork_child(); /* the writer thread stayed in the parent */
	io.sink.out_len = 0; /* the parent writes what was buffered */
	tells.n = 0;       /* and tells its own write errors */
	tells.pending = 0;
	if (io.sink.fd >= 0) {
		int newfd = -1;

		close(io.sink.fd);
		io.sink.fd = -1;
		io.sink.error = 0;
		sp_store_relaxed(&sp_trace_names_on, 0);
		if (path_has_pid(ctl.path_tmpl) && sp_path_expand(ctl.path_tmpl, path, sizeof(path)))
			newfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (newfd >= 0) {
			/* A header that does not fit makes a failed file,
			 * told and counted like any later failure. */
			header_make(&h);
			sp_sigguard_enter(&g);
			file_start_locked(newfd, &h, sp_trace_header_write(newfd, &h), path);
			sp_sigguard_leave(&g);
			failure_note_locked();
		}
	}
	sp_trace_flags_update_locked(io.sink.fd >= 0);
	/* The writer starts at the child's first event (see above).  Not
	 * under ThreadSanitizer, which cannot create threads after a
	 * multi-threaded fork: the child's file is then written at its
	 * flushes, thread exits and exit only. */
#if !defined(__SANITIZE_THREAD__)
	sp_store_relaxed(&sp_trace_writer_wanted, io.sink.fd >= 0);
#endif
	sp_unlock(&sp_trace_list_lock);
	sp_unlock(&io_lock);
	sp_unlock(&sp_trace_ctl_lock);
}

/* Close the file: io_lock held, writer stopped (or still running: it then
 * simply finds no file).  A failed file's final count is queued to tell. */
static int file_close_locked(void)
{
	uint64_t orphans = sp_trace_lost_get() - io.lost_written;
	int rc, recorded;

	if (io.sink.fd < 0)
		return -EBADF;
	sp_store_relaxed(&sp_trace_names_on, 0);
	flush_self_locked();
	if (orphans) {
		/* Events no ring could take: one DROPPED record, thread 0. */
		struct sp_trace_rec_dropped d = { { SP_REC_DROPPED, 0, sizeof(d) }, 0, 0, 0, 0, 0 };

		d.count = orphans;
		d.first_ts = d.last_ts = sp_trace_now();
		out_bytes_locked(&d, sizeof(d));
		io.lost_written += orphans;
	}
	if (!io.sink.error)
		out_clock_locked();
	sp_sink_flush_locked(&io.sink);
	failure_note_locked(); /* "failed" before "closed" */
	rc = sp_sink_close_locked(&io.sink, &recorded);
	if (io.sink.error) {
		struct sp_trace_write_error e = {
			.path = io.path,
			.error = io.sink.error,
			.closed = 1,
			.lost = io.sink.lost,
			.first_ns = file_ns_locked(io.sink.lost_first),
			.last_ns = file_ns_locked(io.sink.lost_last),
			.recorded = recorded,
		};

		tell_queue_locked(&e);
	}
	io.sink.error = 0;
	io.failure_queued = 0;
	return rc;
}

void sp_trace_exit(void)
{
	struct sp_sigguard g;

	sp_lock(&sp_trace_ctl_lock);
	if (io.sink.fd >= 0) {
		/* Off first: an event racing with exit now goes nowhere
		 * rather than into a ring nobody drains. */
		sp_trace_flags_update_locked(0);
		sp_trace_writer_stop_locked();
		io_enter(&g);
		drain_all_locked();
		/* Pending drops of every ring: exiting now, no more events. */
		sp_lock(&sp_trace_list_lock);
		for (struct sp_trace_buf *b = sp_trace_bufs; b; b = b->next)
			out_drops_locked(b);
		sp_unlock(&sp_trace_list_lock);
		file_close_locked();
		io_leave(&g);
	}
	sp_unlock(&sp_trace_ctl_lock);
	tell();
}

/* ---- setup ------------------------------------------------------------ */

static int events_file_open_locked(void);
static void events_def_added_locked(unsigned id);
static const struct sp_trace_events_file events_file = { events_file_open_locked,
							 events_def_added_locked };

/* sp_trace_ctl_lock held.  The hooks go in before any file opens: from
 * then on every ring whose owner exits comes here (ring_exit()), and
 * events.c asks this file whether it is open. */
static void init_locked(void)
{
	if (ctl.initialised)
		return;
	ctl.initialised = 1;
	sp_trace_events_init_locked();
	sp_trace_events_set_file_locked(&events_file);
	sp_trace_buf_set_exit_hook(ring_exit);
	/* The one clock (base/clock.c), calibrated now: the header states
	 * the rate of every timestamp the file will hold. */
	sp_trace_use_tsc = sp_clock_calibrate_now() == SP_CLOCK_TSC;
	ctl.ticks_per_sec = sp_clock_ticks_per_sec();
}

/* The header of a file started now.  sp_trace_ctl_lock held. */
static void header_make(struct sp_trace_file_header *h)
{
	struct timespec rt;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, SP_TRACE_MAGIC, 8);
	h->version = SP_TRACE_VERSION;
	h->header_size = SP_TRACE_HEADER_SIZE;
	h->pid = (uint32_t)getpid();
	h->clock = sp_trace_use_tsc ? SP_TRACE_CLOCK_TSC : SP_TRACE_CLOCK_MONOTONIC;
	h->ticks_per_sec = ctl.ticks_per_sec;
	h->tick0 = sp_trace_now();
	h->mono0_ns = sp_now_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	h->realtime0_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
}

/* @newfd, whose header @h is written (or failed with @header_error), is
 * the file from now: definitions, clock, maps.  io_lock held. */
static void file_start_locked(int newfd, const struct sp_trace_file_header *h, int header_error,
			      const char *path)
{
	io.gen++;
	io.tick0 = h->tick0;
	snprintf(io.path, sizeof(io.path), "%s", path);
	io.failure_queued = 0;
	seen_clear_locked();
	sp_sink_start_locked(&io.sink, newfd, header_error);
	if (io.sink.error)
		return;
	for (unsigned id = 1; id < SP_TRACE_EVENTS; id++)
		out_def_locked(id); /* the defined ones */
	out_lock_mode_locked();
	out_clock_locked();
	out_maps_locked();
	/* On before the walk: a name given meanwhile is either seen by the
	 * walk or sees the flag (the walk and the naming meet in lockname.c's
	 * lock), and then waits for io_lock: after the walk. */
	sp_store_relaxed(&sp_trace_names_on, 1);
	if (installed.lock_names_source)
		installed.lock_names_source(out_lock_name_locked);
	sp_sink_flush_locked(&io.sink);
}

/* ---- lock names -------------------------------------------------------- */

void sp_trace_set_lock_names_source(void (*each)(sp_trace_lock_name_fn emit))
{
	installed.lock_names_source = each;
}

void sp_trace_lock_named(const struct sp_trace_lock_name *n)
{
	struct sp_sigguard g;

	if (!sp_load_relaxed(&sp_trace_names_on))
		return;
	io_enter(&g);
	if (io.sink.fd >= 0 && !io.sink.error) {
		out_lock_name_locked(n);
		sp_sink_flush_locked(&io.sink);
	}
	io_leave(&g);
	tell();
}

/* ---- for events.c ------------------------------------------------------ */

static int events_file_open_locked(void)
{
	return io.sink.fd >= 0; /* changes only under sp_trace_ctl_lock and io_lock */
}

static void events_def_added_locked(unsigned id)
{
	struct sp_sigguard g;

	if (io.sink.fd < 0)
		return; /* no file: the definition goes into the next one's header */
	io_enter(&g);
	if (io.sink.fd >= 0 && !io.sink.error) {
		out_def_locked(id);
		sp_sink_flush_locked(&io.sink);
	}
	io_leave(&g); /* told by the next thread leaving io_lock: ours holds
		       * sp_trace_ctl_lock */
}

/* Called at every start-up (lifecycle.c sets the mode): with no file open
 * there is nothing to write, and nothing to initialise - init_locked()
 * calibrates the clock, a 2 ms busy wait that cost every profiled process
 * 2 ms of CPU (issue 25, perf stat on /bin/true); opening a file does it. */
void sp_trace_file_mode_changed_locked(void)
{
	struct sp_sigguard g;

	if (io.sink.fd < 0)
		return;
	io_enter(&g);
	if (io.sink.fd >= 0 && !io.sink.error) {
		out_lock_mode_locked();
		sp_sink_flush_locked(&io.sink);
	}
	io_leave(&g);
}

/* ---- public API ------------------------------------------------------- */

int syncprof_trace_open(const char *path)
{
	struct sp_trace_file_header h;
	struct sp_sigguard g;
	char buf[4096];
	int newfd, rc = 0;

	if (!path || !*path || strlen(path) >= sizeof(ctl.path_tmpl))
		return -EINVAL;
	sp_lock(&sp_trace_ctl_lock);
	init_locked();
	if (!sp_path_expand(path, buf, sizeof(buf))) {
		sp_unlock(&sp_trace_ctl_lock);
		return -ENAMETOOLONG;
	}
	rc = sp_sink_prepare(&io.sink);
	newfd = rc ? -1 : open(buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (newfd < 0) {
		rc = rc ? rc : -errno;
		sp_unlock(&sp_trace_ctl_lock);
		return rc;
	}
	/* The header first, so that a file that cannot take even that is an
	 * error of this call and the previous file stays open. */
	header_make(&h);
	sp_sigguard_enter(&g);
	rc = sp_trace_header_write(newfd, &h);
	sp_sigguard_leave(&g);
	if (rc) {
		close(newfd);
		sp_unlock(&sp_trace_ctl_lock);
		return rc;
	}
	io_enter(&g);
	if (io.sink.fd >= 0)
		file_close_locked(); /* its write errors are told, not this call's */
	file_start_locked(newfd, &h, 0, buf);
	io_leave(&g);
	snprintf(ctl.path_tmpl, sizeof(ctl.path_tmpl), "%s", path);
	sp_trace_writer_start_locked(&writer_ops);
	sp_trace_flags_update_locked(io.sink.fd >= 0);
	sp_unlock(&sp_trace_ctl_lock);
	tell();
	return 0;
}

int syncprof_trace_close(void)
{
	struct sp_sigguard g;
	int rc;

	sp_lock(&sp_trace_ctl_lock);
	/* The file changes only under sp_trace_ctl_lock (and io_lock): stable here. */
	if (io.sink.fd < 0) {
		sp_unlock(&sp_trace_ctl_lock);
		return -EBADF;
	}
	sp_trace_flags_update_locked(0);
	sp_trace_writer_stop_locked();
	io_enter(&g);
	rc = file_close_locked();
	io_leave(&g);
	sp_unlock(&sp_trace_ctl_lock);
	tell();
	return rc;
}

int syncprof_trace_flush(void)
{
	struct sp_sigguard g;
	int rc;

	io_enter(&g);
	if (io.sink.fd < 0) {
		io_leave(&g);
		return -EBADF;
	}
	flush_self_locked();
	rc = io.sink.error; /* a failed file stays failed: every flush says so */
	io_leave(&g);
	tell();
	return rc;
}
