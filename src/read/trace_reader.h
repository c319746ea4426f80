/*
 * trace_reader.h - reading trace files back (trace_reader.c): records in
 * file order, names, threads, code addresses through the MAPS records.
 * Used by 'syncprof trace' and fuzzed.  Private to src/read and
 * tools/syncprof.
 */
#ifndef SP_READ_TRACE_READER_H
#define SP_READ_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "base/containers.h"
#include "trace/format.h"


/* One line of the latest MAPS: [lo, hi) maps @path at file offset @off. */
struct sp_trace_range {
	uint64_t lo, hi, off;
	const char *path; /* into the reader's maps text; not NUL-terminated */
	size_t path_len;
};

/* A decoded record; pointers point into the reader's data. */
struct sp_trace_rec {
	uint64_t off;  /* file offset */
	uint32_t size;
	uint16_t type;
	uint16_t aux;
	uint64_t ts;   /* EVENT, LOCK_MODE, LOCK_NAME; DROPPED, WRITE_LOSS: first_ts */
	uint64_t ts2;  /* DROPPED, WRITE_LOSS: last_ts */
	uint32_t tid;  /* EVENT, DROPPED, THREAD */
	uint32_t id;   /* EVENT, EVENT_DEF; LOCK_MODE: the mode */
	unsigned nargs; /* LOCK_NAME: 4, args obj, site, func, line as a lock event's */
	uint64_t args[SP_TRACE_MAX_ARGS];
	uint64_t count; /* DROPPED, WRITE_LOSS; LOCK_MODE: min_wait_ns */
	uint32_t error; /* WRITE_LOSS: the errno */
	uint64_t key;   /* STRING, PCSITE; CLOCK: tick */
	const char *str; /* STRING, THREAD name, EVENT_DEF name, MAPS text, LOCK_NAME name
			  * (aux: how its creation site was learnt, enum sp_lock_created) */
	size_t str_len;
	const struct sp_trace_def *def; /* EVENT (NULL: undefined id) */
};

enum sp_trace_read_status {
	SP_TRACE_READ_OK = 0,
	SP_TRACE_READ_TRUNCATED = 1, /* the file ends inside a record */
	SP_TRACE_READ_CORRUPT = 2,   /* a record that cannot be */
};

struct sp_trace_reader {
	const uint8_t *data;
	size_t size, off;
	struct sp_trace_file_header hdr;
	/* u64 -> pointer (base/containers.h), owned by the reader */
	struct sp_u64map defs, strings, threads;
	struct sp_u64map lock_names; /* obj -> its latest LOCK_NAME with a name */
	char *maps;        /* latest MAPS text seen (concatenated) */
	size_t maps_len, maps_cap;
	int maps_fresh;    /* the next MAPS record starts a new copy */
	struct sp_trace_range *ranges; /* maps parsed, sorted by start */
	size_t n_ranges, cap_ranges;
	uint16_t last_type;
	uint64_t records;
	/* The WRITE_LOSS record, once read (write_loss_seen). */
	int write_loss_seen;
	uint64_t write_loss, write_loss_first, write_loss_last;
	/* The latest LOCK_MODE record (lock_mode_seen): which lock events the
	 * file holds from there on.  A file without one holds them all. */
	int lock_mode_seen;
	uint32_t lock_mode;  /* enum sp_trace_lock_mode */
	uint64_t min_wait_ns;
	int status;        /* enum sp_trace_read_status */
	char error[256];   /* why reading stopped, when status != OK */
};

/* Check the header.  Return 0, or -EINVAL with r->error set. */
int sp_trace_reader_init(struct sp_trace_reader *r, const void *data, size_t size);
void sp_trace_reader_fini(struct sp_trace_reader *r);
/* 1: @rec filled; 0: clean end; -1: stopped, r->status and r->error say
 * why (records before it were all returned). */
int sp_trace_reader_next(struct sp_trace_reader *r, struct sp_trace_rec *rec);
/* The errno of the write error that cut the file short (header flag
 * SP_TRACE_FLAG_WRITE_ERROR), 0 when the writer had none: then the file
 * is incomplete even when it reads to its end; the WRITE_LOSS record,
 * when there is one (write_loss_seen after reading), counts the loss. */
int sp_trace_reader_write_error(const struct sp_trace_reader *r);
/* The latest LOCK_NAME record read so far that gives @obj a name (records
 * that take a name away - a new lock at that address - are left out: a
 * trace's track of an address shows its events under the name they had),
 * decoded into @rec: 0, or -1 when @obj has none. */
int sp_trace_reader_lock_name(const struct sp_trace_reader *r, uint64_t obj,
			      struct sp_trace_rec *rec);
/* Decode the EVENT, DROPPED, WRITE_LOSS or LOCK_NAME record at @off again, after a first pass
 * (names as of the end of that pass); no state changes.  0 or -1. */
int sp_trace_reader_read_at(const struct sp_trace_reader *r, uint64_t off,
			    struct sp_trace_rec *rec);
/* Nanoseconds since the trace's start (tick0), signed. */
int64_t sp_trace_reader_rel_ns(const struct sp_trace_reader *r, uint64_t ts);
const struct sp_trace_def *sp_trace_reader_def(const struct sp_trace_reader *r, uint32_t id);
const char *sp_trace_reader_string(const struct sp_trace_reader *r, uint64_t key);
const char *sp_trace_reader_thread(const struct sp_trace_reader *r, uint32_t tid);
/* DSO path and offset of a code address from the latest MAPS; NULL when
 * unknown.  Writes the path into @buf. */
const char *sp_trace_reader_pc_dso(const struct sp_trace_reader *r, uint64_t pc, char *buf,
				   size_t size, uint64_t *offset);
/* "file:line (func)" or "dso+0xoff" or "0xpc" for a lock event's site. */
const char *sp_trace_reader_site(const struct sp_trace_reader *r, const struct sp_trace_rec *rec,
				 char *buf, size_t size);

#endif /* SP_READ_TRACE_READER_H */
