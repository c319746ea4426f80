/*
 * syscall_names.h - system call numbers to names.  Private to syncprof's
 * sources (the hold states of report/collect.c name what a holder was
 * blocked in); not installed.
 */
#ifndef SP_BASE_SYSCALL_NAMES_H
#define SP_BASE_SYSCALL_NAMES_H

/* The name of system call @nr of this architecture ("fsync"), or NULL
 * when the build's table does not know it. */
const char *sp_syscall_name(long nr);

#endif /* SP_BASE_SYSCALL_NAMES_H */
