/*
 * syscall_names.c - system call numbers to names.
 *
 * Design: the table is generated at build time from the kernel's header
 * for the build's architecture (cmake/syscall_names.cmake reads
 * asm/unistd_64.h: one "#define __NR_name nr" per call), so it is
 * complete and exact for the machine the library runs on; a number the
 * table lacks (a newer kernel's call) has no name and is printed as its
 * number by the callers.
 *
 * Alternatives considered: libseccomp's seccomp_syscall_resolve_num_arch()
 * knows every architecture but would be a new run-time dependency of the
 * library loaded into every profiled process, for a lookup that only
 * needs the one architecture it runs on; a hand-written list goes stale.
 */
#include <stddef.h>

#include "base/syscall_names.h"
#include "syscall_table.h"

const char *sp_syscall_name(long nr)
{
	if (nr < 0 || (size_t)nr >= sizeof(sp_syscall_table) / sizeof(*sp_syscall_table))
		return NULL;
	return sp_syscall_table[nr];
}
