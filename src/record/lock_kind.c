/*
 * lock_kind.c - what glibc's lock words say about a lock, read by the
 * probes and by lock-order checking: a mutex's type, and whether a rwlock
 * makes new readers wait behind a writer.  Both read glibc's public
 * structure layout (pthreadtypes-arch.h), relaxed, and call nothing.
 * (The mode in which the calling thread holds a rwlock needs its tid:
 * probe.c.)
 */
#include <pthread.h>

#include "record.h"

/*
 * The reported type of a mutex: rec_mutex when it was initialised
 * recursive.  glibc keeps the type in the low bits of __data.__kind (the
 * PTHREAD_MUTEX_KIND_MASK_NP mask, 3), in the public structure layout; a C11
 * mtx_t of glibc wraps a pthread_mutex_t.  Read once per new entry only.
 */
int sp_mutex_type(const void *mutex)
{
	const pthread_mutex_t *m = mutex;
	int kind = __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);

	return (kind & 3) == PTHREAD_MUTEX_RECURSIVE ? SP_TYPE_REC_MUTEX : SP_TYPE_MUTEX;
}

/*
 * glibc keeps an rwlock's kind in __data.__flags (public structure
 * layout): only PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP makes new
 * readers wait behind a waiting writer; the default and
 * PTHREAD_RWLOCK_PREFER_WRITER_NP let a reader in while others read.
 */
int sp_rwlock_readers_wait(const void *l)
{
	const pthread_rwlock_t *rw = l;

	return __atomic_load_n(&rw->__data.__flags, __ATOMIC_RELAXED) ==
	       PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}
