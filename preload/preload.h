/*
 * preload.h - what the files of libsyncprof-preload.so share (preload.c,
 * process.c).  Private to preload/.
 */
#ifndef SP_PRELOAD_PRELOAD_H
#define SP_PRELOAD_PRELOAD_H

#if defined(__x86_64__)
/* libc's syscall(), which preload.c's syscall() jumps to for any call but
 * a futex's: set by the constructor (process.c), NULL before. */
extern void *sp_syscall_next __attribute__((visibility("hidden")));
#endif

#endif /* SP_PRELOAD_PRELOAD_H */
