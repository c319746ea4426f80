/*
 * inject.h - calling a function inside another process with ptrace, for
 * 'syncprof attach' (inject.c).  Private to tools/syncprof.
 */
#ifndef SYNCPROF_INJECT_H
#define SYNCPROF_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct inject {
	pid_t pid, tid;            /* the process, the thread we stopped */
	int seized;                /* tid is ours: inject_end() must run */
	int mem_fd;                /* /proc/PID/mem */
	struct user_regs_struct saved; /* the thread's registers at the stop */
	uint64_t scratch;          /* next free byte below the red zone */
	uint64_t t_stop_ns;        /* when the thread was asked to stop */
	uint64_t stopped_ns;       /* set by inject_end(): how long it was stopped */
	int gone;                  /* the process exited under us */
	char err[512];             /* why the last call failed */
};

/*
 * Stop one thread of @pid at a system-call boundary (one blocked in a
 * system call, else the next one to finish a system call, within a few
 * seconds).  Other threads keep running.
 * Return: 0, or a negative errno with the reason in @in->err.
 */
int inject_begin(struct inject *in, pid_t pid);
/* Copy @len bytes below the thread's stack (under its red zone); their
 * address in the target goes to *@addr. */
int inject_put(struct inject *in, const void *data, size_t len, uint64_t *addr);
/* Read @len bytes at @addr of the target. */
int inject_read(struct inject *in, uint64_t addr, void *buf, size_t len);
/*
 * Call @fn(@a0, @a1, @a2) in the stopped thread and wait for it to return
 * (at most @timeout_ms); its return value goes to *@ret.  Signals that
 * arrive meanwhile are delivered to the thread as usual.
 */
int inject_call(struct inject *in, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2,
		uint64_t *ret, unsigned timeout_ms);
/* Put the thread's registers back and let it go.  Always call it after a
 * successful inject_begin(). */
int inject_end(struct inject *in);

/* ---- ELF files and maps ----------------------------------------------- */

/* The value of the defined symbol @name in the ELF file @path (.dynsym,
 * then .symtab; a default version first).  0, -ENOENT, or another errno. */
int inject_elf_symbol(const char *path, const char *name, uint64_t *value);
/* The address at which @path (as /proc/PID/maps names it) is loaded: its
 * load bias.  0 or -ENOENT. */
int inject_load_bias(pid_t pid, const char *path, const char *file, uint64_t *bias);

#endif /* SYNCPROF_INJECT_H */
