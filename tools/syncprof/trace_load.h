/*
 * trace_load.h - what the 'syncprof trace' commands share: a trace file
 * read whole and the one FILE among their arguments (cmd_trace.c too);
 * for 'trace what-if' and 'trace chains' (cmd_trace_whatif.c,
 * cmd_trace_chains.c) besides, the file modelled
 * (src/analyse/trace_model.h), refused with one line on stderr when the
 * analyses cannot use it, and the small pieces of their output and
 * options.
 */
#ifndef SYNCPROF_TRACE_LOAD_H
#define SYNCPROF_TRACE_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "analyse/trace_model.h"

#define EXIT_TRUNCATED 3 /* the exit status for an incomplete file */

struct cli_trace {
	const char *cmd, *path; /* set by the caller */
	uint8_t *data;
	size_t size;
	struct sp_trace_reader r;
	struct sp_trace_model m;
	int have_model;
};

/* The whole file @path into *@data (malloc'd) and *@size: 0, or -1
 * after one line on stderr (*@data NULL).  'trace dump', 'stats' and
 * 'export' read the file with it too (cmd_trace.c). */
int cli_read_whole(const char *cmd, const char *path, uint8_t **data, size_t *size);

/* Read and model @t->path; 0, or the exit status after one line on
 * stderr (1, or EXIT_TRUNCATED).  cli_trace_release() either way. */
int cli_trace_load(struct cli_trace *t);
void cli_trace_release(struct cli_trace *t);

/* Output: ns as ms; a lock's type as reports name it ("rwlock" for both
 * modes); a lock in text (its address, and its name in quotes when it has
 * one); in JSON, ',"name":"..."' when it has one. */
double cli_ms(int64_t ns);
const char *cli_lock_type(int type);
const char *cli_lock_label(const struct sp_tm_lock *l, char *buf, size_t size);
void cli_json_lock_name(const struct sp_tm_lock *l);

/* Options: --top N (1 to 1,000,000); an argument that is no known
 * option, taken as the one FILE.  0, or -1 after one line on stderr. */
int cli_parse_top(const char *cmd, const char *v, unsigned *top);
int cli_take_file(const char *cmd, const char *arg, const char **path);

#endif /* SYNCPROF_TRACE_LOAD_H */
