/*
 * glibc_lockname.c - what a glibc lock word is, named at report time:
 * "stdio lock of FILE 0x... (fd 3)", "malloc arena 0x... (main arena)",
 * "glibc lock 0x..." where it is neither.
 *
 * Design.  The rows of type glibc_lock (glibc_lock.c) carry the lock
 * word's address; the report (collect.c's sp_collect_names(), off the
 * lock path, in a busy thread) asks here for a name when the program gave
 * none (lockname.c), and the name travels in the profile as any lock name
 * does (table, JSON "lock_name", a saved profile re-rendered).
 *
 *  - stdio: every FILE is on glibc's list _IO_list_all (exported, as are
 *    _IO_list_lock and _IO_list_unlock, which keep it from changing while
 *    it is walked); a FILE's _lock points to its _IO_lock_t, whose first
 *    word is the lock word.  stdin, stdout and stderr are on the list.
 *  - malloc: an arena (struct malloc_state) starts with its lock word, and
 *    the arenas form a circular list through their "next" field (glibc
 *    2.36, x86-64: at offset 2160, checked by tests/glibc_locks.sh's arena
 *    test against a thread's heap); a word from whose "next" the list
 *    comes back to it within a few steps is an arena's.  A thread arena
 *    sits at the start of a 64 MiB-aligned heap, whose header's first
 *    field points to it; the main arena lives in libc's data.
 *  - Memory is read with process_vm_readv() on ourselves, which fails
 *    with EFAULT on an unmapped address instead of faulting: a word that
 *    is no arena may have anything around it.
 *
 * Limits: the names hold for the live process only (a FILE closed since
 * the wait is "glibc lock"); the layouts are glibc 2.36's, as the patch
 * itself is (glibc_lock.c refuses other builds).
 *
 * Alternatives considered: naming at record time would walk the FILE
 * list (a lock) on the lock path; telling arenas by the libc entry point
 * the program called (malloc, free...) needs the call instruction before
 * the site decoded and misses arena locks taken by other entry points
 * (fork, malloc_trim, mallinfo).
 */
#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>
#include <unistd.h>
#include <dlfcn.h>

#include "record/glibc_lock.h"

/* glibc's stdio list (libio/genops.c), exported. */
void _IO_list_lock(void);
void _IO_list_unlock(void);

#define ARENA_NEXT 2160                 /* offsetof(struct malloc_state, next) */
#define HEAP_MAX (64ul * 1024 * 1024)   /* HEAP_MAX_SIZE: 2 * 4 MiB * sizeof(long) */
#define ARENA_HOPS 64

/* Read @n bytes at @addr of this process; 0, or -1 if unmapped. */
static int peek(uintptr_t addr, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)addr, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -1;
}

/* The fd of the FILE whose lock word is @obj, or -2 if none. */
static int file_of(uintptr_t obj, uintptr_t *file)
{
	FILE **list = dlsym(RTLD_DEFAULT, "_IO_list_all");
	int fd = -2;

	if (!list)
		return -2;
	_IO_list_lock();
	for (FILE *f = *list; f; f = f->_chain)
		if ((uintptr_t)f->_lock == obj) {
			*file = (uintptr_t)f;
			fd = f->_fileno;
			break;
		}
	_IO_list_unlock();
	return fd;
}

/* 1 if @obj is the lock word of a malloc arena, *@main set for the main
 * arena's. */
static int is_arena(uintptr_t obj, int *main)
{
	uintptr_t p = obj, head;

	for (int i = 0; i < ARENA_HOPS; i++) {
		if (peek(p + ARENA_NEXT, &p, sizeof(p)) || !p)
			return 0;
		if (p == obj)
			break;
	}
	if (p != obj)
		return 0;
	*main = peek(obj & ~(HEAP_MAX - 1), &head, sizeof(head)) || head != obj;
	return 1;
}

void sp_glibc_lock_name(uintptr_t obj, char *out, size_t n)
{
	uintptr_t file = 0;
	int fd = file_of(obj, &file), main;

	if (fd != -2)
		snprintf(out, n, "stdio lock of FILE 0x%lx (fd %d)", (unsigned long)file, fd);
	else if (is_arena(obj, &main))
		snprintf(out, n, "malloc arena 0x%lx (%s arena)", (unsigned long)obj,
			 main ? "main" : "thread");
	else
		snprintf(out, n, "glibc lock 0x%lx", (unsigned long)obj);
}
