/*
 * sink.c - the trace file's bytes: an output buffer of whole records,
 * write(2), and what a failed write leaves behind.
 *
 * Design: everything that goes into the trace file goes through one sink
 * (struct sp_trace_sink, trace.h), under io_lock (file.c).  Small records
 * (definitions, names, clock, maps, drops) are built in place in an output
 * buffer that only ever holds whole records; a thread's ring is written
 * straight from the ring, and a ring holds whole records too.  So every
 * write(2) starts on a record boundary, and the sink knows where the last
 * whole record in the file ends (complete).
 *
 * The first write that fails (ENOSPC, EIO, EFBIG, or a short write that the
 * next write cannot finish) fails the file for good:
 *   - the file is cut back to `complete` with ftruncate(2), keeping the
 *     whole records the failed write did get in, but for the last 40
 *     bytes it got: room that is known to fit the WRITE_LOSS record.  So
 *     the file ends on a record boundary (the reader finds no partial
 *     record) and has room to say what it lost;
 *   - the header gets SP_TRACE_FLAG_WRITE_ERROR and the errno, rewritten
 *     in place (bytes the file already has: that needs no new space), so a
 *     reader knows the file stops early;
 *   - nothing more is written; every record that would have been is
 *     counted instead: an EVENT as one event, a DROPPED record as its
 *     count, with the first and last timestamp (in memory: exact);
 *   - at close, a WRITE_LOSS record with that count and span is written at
 *     the end, where the cut made room (a failed write that got less than
 *     40 bytes in leaves room only if the file's last block has it); if it
 *     does not fit, the file is cut again.
 * The owner of the file (file.c) tells the program's user.  Both ftruncate
 * and the header rewrite are best effort: a pipe or a device takes
 * neither, and then keeps what it got.
 *
 * Why stop at the first failure rather than write again when space comes
 * back: names are written once per file (threads, strings, maps), so a later
 * record could use a definition that the failed write lost, and a file with
 * a hole in its middle would read as if nothing were missing.
 *
 * Alternatives considered: reserving file space ahead (fallocate) so that
 * ENOSPC comes early and at a chunk boundary: tmpfs and ext4 have it, NFS
 * and FUSE often not, and the last chunk must be cut anyway; keeping the
 * lost records to write them later: unbounded memory, for a file that
 * cannot take them.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "trace.h"

#define OUT_CAP (1u << 20)

uint64_t sp_trace_write_lost_events;

static uint64_t rd64(const uint8_t *base, uint64_t mask, uint64_t at)
{
	return *(const uint64_t *)(base + (at & mask));
}

/* Write @n bytes at the file's end: how many got in; the failure in *@err. */
static size_t write_all(int fd, const uint8_t *p, size_t n, int *err)
{
	size_t done = 0;

	*err = 0;
	while (done < n) {
		ssize_t w = write(fd, p + done, n - done);

		if (w > 0) {
			done += (size_t)w;
		} else if (w < 0 && errno == EINTR) {
			continue;
		} else {
			/* 0 for n > 0: the file takes no more (not a regular file) */
			*err = w < 0 ? -errno : -EIO;
			break;
		}
	}
	return done;
}

static void lose_locked(struct sp_trace_sink *s, uint64_t count, uint64_t first, uint64_t last)
{
	if (!count)
		return;
	if (!s->lost || first < s->lost_first)
		s->lost_first = first;
	if (!s->lost || last > s->lost_last)
		s->lost_last = last;
	s->lost += count;
}

/*
 * The whole records in [from, to) of @base (a ring when @mask is its size
 * - 1; ~0 for a flat buffer): those that end within the first @kept bytes
 * reached the file and stay; the others are counted as lost.  Returns the
 * length of the records that stay.  Records are 8-byte aligned, so no u64
 * read straddles the end of a ring.
 */
static uint64_t cut_locked(struct sp_trace_sink *s, const uint8_t *base, uint64_t mask,
			   uint64_t from, uint64_t to, uint64_t kept)
{
	uint64_t at = from, end = from;

	while (to - at >= sizeof(struct sp_trace_rec_header)) {
		uint64_t h = rd64(base, mask, at);
		uint32_t size = (uint32_t)(h >> 32);
		unsigned type = (unsigned)(h & 0xffff);

		if (size < sizeof(struct sp_trace_rec_header) || size % 8 || size > to - at)
			break; /* cannot happen: we wrote every record */
		if (at + size <= from + kept) {
			end = at + size;
		} else if (type == SP_REC_EVENT) {
			uint64_t ts = rd64(base, mask, at + 8);

			lose_locked(s, 1, ts, ts);
			sp_store_relaxed(&sp_trace_write_lost_events,
					 sp_trace_write_lost_events + 1);
		} else if (type == SP_REC_DROPPED) {
			lose_locked(s, rd64(base, mask, at + offsetof(struct sp_trace_rec_dropped, count)),
				    rd64(base, mask, at + 8), rd64(base, mask, at + 16));
		}
		at += size;
	}
	return end - from;
}

/* Of @done bytes that a failed write got in, how many to keep: all but
 * room for the WRITE_LOSS record, which then surely fits at close. */
static uint64_t room_kept(size_t done)
{
	return done >= sizeof(struct sp_trace_rec_write_loss)
		       ? done - sizeof(struct sp_trace_rec_write_loss)
		       : 0;
}

static void fail_locked(struct sp_trace_sink *s, int err)
{
	uint32_t mark[2] = { SP_TRACE_FLAG_WRITE_ERROR, (uint32_t)-err };

	s->error = err;
	if (!ftruncate(s->fd, (off_t)s->complete))
		s->written = s->complete;
	if (s->complete >= SP_TRACE_HEADER_SIZE &&
	    pwrite(s->fd, mark, sizeof(mark), offsetof(struct sp_trace_file_header, flags)) !=
		    (ssize_t)sizeof(mark)) {
		/* The file keeps its records but not the mark: nothing to do. */
	}
}

int sp_trace_header_write(int fd, const struct sp_trace_file_header *h)
{
	int err;

	if (write_all(fd, (const uint8_t *)h, sizeof(*h), &err) != sizeof(*h)) {
		if (ftruncate(fd, 0)) {
			/* a pipe or device: it keeps what it got */
		}
		return err;
	}
	return 0;
}

int sp_sink_prepare(struct sp_trace_sink *s)
{
	if (!s->out && !(s->out = sp_mmap(OUT_CAP)))
		return -ENOMEM;
	return 0;
}

void sp_sink_start_locked(struct sp_trace_sink *s, int fd, int header_error)
{
	s->fd = fd;
	s->error = 0;
	s->out_len = 0;
	s->lost = s->lost_first = s->lost_last = 0;
	s->written = s->complete = header_error ? 0 : SP_TRACE_HEADER_SIZE;
	if (header_error)
		fail_locked(s, header_error);
}

void *sp_sink_reserve_locked(struct sp_trace_sink *s, size_t size)
{
	void *p;

	if (size > OUT_CAP || !s->out)
		return NULL; /* cannot happen: records are small; prepared at open */
	if (s->out_len + size > OUT_CAP)
		sp_sink_flush_locked(s);
	p = s->out + s->out_len;
	s->out_len += size;
	return p;
}

void sp_sink_flush_locked(struct sp_trace_sink *s)
{
	size_t done;
	int err;

	if (!s->out_len)
		return;
	if (s->fd < 0 || s->error) {
		if (s->fd >= 0)
			cut_locked(s, s->out, ~0ull, 0, s->out_len, 0);
		s->out_len = 0;
		return;
	}
	done = write_all(s->fd, s->out, s->out_len, &err);
	s->written += done;
	if (err) {
		s->complete += cut_locked(s, s->out, ~0ull, 0, s->out_len, room_kept(done));
		fail_locked(s, err);
	} else {
		s->complete = s->written;
	}
	s->out_len = 0;
}

void sp_sink_write_ring_locked(struct sp_trace_sink *s, const uint8_t *ring, uint64_t mask,
			       uint64_t tail, uint64_t head)
{
	size_t n = (size_t)(head - tail), pos = (size_t)(tail & mask), first;
	size_t done;
	int err;

	sp_sink_flush_locked(s); /* the file ends on a boundary before we start */
	if (s->fd < 0)
		return;
	if (s->error) {
		cut_locked(s, ring, mask, tail, head, 0);
		return;
	}
	first = n < mask + 1 - pos ? n : mask + 1 - pos;
	done = write_all(s->fd, ring + pos, first, &err);
	if (!err && n > first)
		done += write_all(s->fd, ring, n - first, &err);
	s->written += done;
	if (err) {
		s->complete += cut_locked(s, ring, mask, tail, head, room_kept(done));
		fail_locked(s, err);
	} else {
		s->complete = s->written;
	}
}

int sp_sink_close_locked(struct sp_trace_sink *s, int *recorded)
{
	int rc;

	*recorded = 0;
	if (s->fd < 0)
		return -EBADF;
	sp_sink_flush_locked(s);
	if (s->error) {
		struct sp_trace_rec_write_loss w = {
			.h = { SP_REC_WRITE_LOSS, 0, sizeof(w) },
			.first_ts = s->lost_first,
			.last_ts = s->lost_last,
			.error = (uint32_t)-s->error,
			.count = s->lost,
		};

		if (s->complete >= SP_TRACE_HEADER_SIZE &&
		    pwrite(s->fd, &w, sizeof(w), (off_t)s->complete) == (ssize_t)sizeof(w)) {
			s->complete += sizeof(w);
			*recorded = 1;
		}
		if (ftruncate(s->fd, (off_t)s->complete)) {
			/* a part of the record may stay: best effort, as above */
		}
	}
	rc = s->error;
	if (close(s->fd) && !rc)
		rc = -EIO;
	s->fd = -1;
	return rc;
}
