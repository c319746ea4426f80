/*
 * trace_util.h - helpers shared by the trace tests: a scratch directory,
 * and reading a trace file back record by record with the library's
 * reader (src/trace_reader.c).
 */
#ifndef SYNCPROF_TEST_TRACE_UTIL_H
#define SYNCPROF_TEST_TRACE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "trace/trace.h"
#include "read/trace_reader.h"

typedef void (*t_rec_fn)(const struct sp_trace_reader *r, const struct sp_trace_rec *rec,
			 void *arg);

/* A fresh directory under $TMPDIR (or /tmp); path in @buf. */
static inline const char *t_tmpdir(char *buf, size_t size, const char *tag)
{
	const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	snprintf(buf, size, "%s/syncprof-%s-XXXXXX", base, tag);
	if (!mkdtemp(buf))
		T_FAIL("mkdtemp %s", buf);
	return buf;
}

static inline uint8_t *t_read_all(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	uint8_t *p;
	size_t n = 0;

	if (fd < 0 || fstat(fd, &st))
		T_FAIL("cannot open %s", path);
	p = malloc((size_t)st.st_size + 1);
	T_ASSERT(p);
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, p + n, (size_t)st.st_size - n);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*size = n;
	return p;
}

/* Read @data[0, size) calling @fn per record; returns the reader status
 * (enum sp_trace_read_status); @records gets the number of records. */
static inline int t_trace_read_mem(const uint8_t *data, size_t size, t_rec_fn fn, void *arg,
				   uint64_t *records, struct sp_trace_file_header *hdr)
{
	struct sp_trace_reader *r = calloc(1, sizeof(*r));
	struct sp_trace_rec rec;
	int status;

	T_ASSERT(r);
	if (sp_trace_reader_init(r, data, size)) {
		status = r->status ? r->status : SP_TRACE_READ_CORRUPT;
		free(r);
		return -status;
	}
	while (sp_trace_reader_next(r, &rec) > 0)
		if (fn)
			fn(r, &rec, arg);
	status = r->status;
	if (records)
		*records = r->records;
	if (hdr)
		*hdr = r->hdr;
	sp_trace_reader_fini(r);
	free(r);
	return status;
}

static inline int t_trace_read(const char *path, t_rec_fn fn, void *arg)
{
	size_t size;
	uint8_t *data = t_read_all(path, &size);
	int status = t_trace_read_mem(data, size, fn, arg, NULL, NULL);

	free(data);
	return status;
}

#endif
