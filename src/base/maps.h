/*
 * maps.h - one line of /proc/PID/maps, parsed (maps.c).  Private to
 * libsyncprof and the offline readers: the trace writer keeps the code
 * ranges of the process it runs in, the trace reader the mappings a trace
 * recorded.
 */
#ifndef SP_BASE_MAPS_H
#define SP_BASE_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct sp_maps_line {
	uint64_t lo, hi;   /* [lo, hi) */
	uint64_t off;      /* file offset of lo */
	char perms[4];     /* "r-xp" */
	const char *path;  /* into the line; not NUL-terminated; may be empty */
	size_t path_len;
};

/*
 * sp_maps_parse_line() - parse the line at [@p, @end) (no newline needed).
 * Allocates nothing and never reads past @end; async-signal-safe.
 * Return: 0 and *@out filled, or -1 when the line does not start with
 * "lo-hi perms" (fields after the permissions default to 0 / empty).
 */
int sp_maps_parse_line(const char *p, const char *end, struct sp_maps_line *out);

#endif
