/*
 * maps.c - /proc/PID/maps lines: "lo-hi perms offset dev inode   path".
 *
 * One parser for the two places that read such lines: the trace writer
 * (src/trace/file.c: which ranges are code, so that it knows when a new
 * return address calls for a fresh MAPS record) and the trace reader
 * (src/read/trace_reader.c: addresses to DSO and file offset).  It works
 * on a bounded span, as the reader's text comes from a file that may be
 * corrupt, and allocates nothing, as the writer runs inside lock calls.
 */
#include <string.h>

#include "base/maps.h"

static uint64_t hex_field(const char **p, const char *end)
{
	uint64_t v = 0;

	for (; *p < end; (*p)++) {
		char c = **p;

		if (c >= '0' && c <= '9')
			v = v * 16 + (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (uint64_t)(c - 'a' + 10);
		else
			break;
	}
	return v;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p != ' ')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

int sp_maps_parse_line(const char *p, const char *end, struct sp_maps_line *out)
{
	const char *start = p;

	memset(out, 0, sizeof(*out));
	out->lo = hex_field(&p, end);
	if (p == start || p >= end || *p != '-')
		return -1;
	p++;
	start = p;
	out->hi = hex_field(&p, end);
	if (p == start || p >= end || *p != ' ')
		return -1;
	p++;
	if (end - p < 4)
		return -1;
	memcpy(out->perms, p, 4);
	p = skip_field(p, end);       /* to offset */
	out->off = hex_field(&p, end);
	p = skip_field(p, end);       /* to dev */
	p = skip_field(p, end);       /* to inode */
	p = skip_field(p, end);       /* to path (may be empty) */
	out->path = p;
	out->path_len = (size_t)(end - p);
	return 0;
}
