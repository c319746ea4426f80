/*
 * profile_load.h - a saved profile (profile JSON version 1) read back into
 * the profile model (profile_load.c).  Private to src/read and
 * tools/syncprof.
 */
#ifndef SP_READ_PROFILE_LOAD_H
#define SP_READ_PROFILE_LOAD_H

#include <stddef.h>

#include "report/profile.h"

/*
 * sp_profile_load() - read the profile JSON file @path into @p.
 * @err: receives one message naming the file, the row and the key of the
 * first problem (@err_size bytes).
 * Return: 0 (free @p with sp_profile_free()), or a negative errno: -EIO
 * the file could not be read, -EINVAL it is not a valid profile, -ENOMEM.
 * On failure @p holds nothing to free.
 */
int sp_profile_load(const char *path, struct sp_profile *p, char *err, size_t err_size);
/* The same from @len bytes of @text (not kept); @name names it in errors. */
int sp_profile_parse(const char *name, const char *text, size_t len, struct sp_profile *p,
		     char *err, size_t err_size);

#endif
