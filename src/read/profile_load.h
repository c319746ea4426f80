/*
 * profile_load.h - a saved profile read back into report rows
 * (profile_load.c).  Rows point into the parsed tree: keep the profile
 * until they are rendered.
 */
#ifndef SYNCPROF_PROFILE_LOAD_H
#define SYNCPROF_PROFILE_LOAD_H

#include <stdint.h>

#include "internal.h"

struct json_object;

struct cli_profile {
	const char *path;
	struct json_object *root;
	struct sp_rows rows;
	struct sp_names *names; /* one per row as read */
	const char *command;
	int pid;
	int coalesced;
	uint64_t elapsed_ns;
	uint64_t lost;
};

/* 0, or a negative errno with the message in cli_profile_error(). */
int cli_profile_load(const char *path, struct cli_profile *p);
/* The same from @len bytes of @text (not kept); @path names it in errors. */
int cli_profile_parse(const char *path, const char *text, size_t len, struct cli_profile *p);
void cli_profile_free(struct cli_profile *p);
/* The render context of a loaded profile, rendered with @opts. */
void cli_profile_ctx(const struct cli_profile *p, const struct syncprof_report_options *opts,
		     struct sp_render_ctx *ctx);
const char *cli_profile_error(void);

#endif
