/*
 * glibc_lock.h - glibc's own locks (stdio FILE locks, malloc arenas, the
 * other __libc_lock's), seen on their slow path (glibc_lock.c) and named
 * at report time (glibc_lockname.c).  Private to src/record,
 * src/report/collect.c and src/runtime.
 */
#ifndef SP_RECORD_GLIBC_LOCK_H
#define SP_RECORD_GLIBC_LOCK_H

#include <stddef.h>
#include <stdint.h>

/*
 * sp_glibc_locks_start() - patch libc's __lll_lock_wait_private so that
 * its waits are timed and recorded (type glibc_lock).  Start-up only, once
 * per process (the lifecycle's start-up, after the options and the stack
 * ranges: sp_stack_init()); a fork child inherits the patch.
 * Return: 0 when patched (or already patched by this library), or a
 * negative errno with @why (of @n bytes) saying in a few words why not:
 * -ENOENT (no such function: not glibc, or a static program), -ENOTSUP
 * (not the glibc build whose code we know), -EACCES (mprotect refused:
 * seccomp, SELinux execmod), -ENOMEM (no page near libc for a
 * trampoline).  Nothing is changed when it fails.
 */
int sp_glibc_locks_start(char *why, size_t n);

/* The replacement libc's __lll_lock_wait_private jumps to: glibc's wait
 * on the lock word @futex, timed and recorded (any thread; never mallocs
 * nor locks; keeps errno). */
void sp_glibc_lock_wait(int *futex);

/* 1 once sp_glibc_locks_start() patched libc in this process. */
int sp_glibc_locks_active(void);

/*
 * sp_glibc_lock_name() - what the glibc lock word @obj is, as "stdio lock
 * of FILE 0x... (fd N)", "malloc arena 0x... (main arena)" (or "(thread
 * arena)"), else "glibc lock 0x...", into @out (@n bytes).  Report time
 * only, from a thread marked busy: it takes libc's stdio list lock and
 * reads memory through process_vm_readv() (an unmapped address is an
 * error, not a crash).
 */
void sp_glibc_lock_name(uintptr_t obj, char *out, size_t n);

#endif /* SP_RECORD_GLIBC_LOCK_H */
