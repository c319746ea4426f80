/*
 * types.c - the names of the lock types, as every output spells them.
 */
#include "base/types.h"

static const char *const type_names[SP_TYPE_COUNT] = {
	"mutex", "rec_mutex", "condvar", "rwlock_read", "rwlock_write", "spinlock",
	"semaphore", "barrier", "join",
};

const char *sp_type_name(int type)
{
	return type >= 0 && type < SP_TYPE_COUNT ? type_names[type] : "?";
}
