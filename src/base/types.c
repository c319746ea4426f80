/*
 * types.c - the names of the lock types, as every output spells them.
 */
#include <string.h>

#include "base/types.h"

static const char *const type_names[SP_TYPE_COUNT] = {
	"mutex", "rec_mutex", "condvar", "rwlock_read", "rwlock_write", "spinlock",
	"semaphore", "barrier", "join", "futex", "glibc_lock",
};

const char *sp_type_name(int type)
{
	return type >= 0 && type < SP_TYPE_COUNT ? type_names[type] : "?";
}

static int str_cmp(const char *a, const char *b)
{
	return a == b ? 0 : strcmp(a ? a : "", b ? b : "");
}

int sp_site_cmp(const struct sp_site *a, const struct sp_site *b)
{
	int c;

	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	if ((c = str_cmp(a->file, b->file)))
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return str_cmp(a->func, b->func);
}
