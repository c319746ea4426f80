/*
 * base.h - what every part of syncprof builds on: compiler hints, atomics
 * that name their memory order, the profiler's own futex lock, mmap, the
 * monotonic clock in ns, thread ids.  Private to libsyncprof (every
 * folder of src/, preload/); includes nothing of ours but the public API.
 *
 * Platform: Linux on x86-64 with glibc (the TSC, glibc's lock layouts in
 * record/probe.c and trace/, the futex system call); every such
 * assumption is stated in the file that makes it.
 */
#ifndef SP_BASE_BASE_H
#define SP_BASE_BASE_H

#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "syncprof.h"

#define SP_LIKELY(x) __builtin_expect(!!(x), 1)
#define SP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SP_NOINLINE __attribute__((noinline))
#define SP_COLD __attribute__((noinline, cold))
#define SP_ALWAYS_INLINE inline __attribute__((always_inline))
#define SP_TLS __thread __attribute__((tls_model("initial-exec")))
/*
 * SP_LARGE marks a zero-initialised table of 2 KiB or more: on x86-64 it
 * goes to .lbss, which the linker places after all of .bss.  The small
 * variables a process touches at start-up then share a few pages instead
 * of lying one per page between the tables, and each first touch of a
 * page is a page fault (17 us on the VM of docs/cost.md, "Per process").
 * Elsewhere, where .lbss is not a zero-fill section, it is plain .bss.
 */
#if defined(__x86_64__)
#define SP_LARGE __attribute__((section(".lbss")))
#else
#define SP_LARGE
#endif

/* Memory orders are named at each use, as liburcu and mimalloc do. */
#define sp_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define sp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define sp_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define sp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define sp_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/*
 * Depth of profiler-internal sections of the calling thread (util.c): while
 * non-zero, its lock calls pass through unrecorded.  The registry's
 * sp_thread_enter()/sp_thread_leave() nest it; a thread of the profiler's
 * own (the trace writer) raises it once at its start.
 */
extern SP_TLS int sp_tls_busy;

/* ---- "util.c" --------------------------------------------------------- */

/* A small futex lock, so that the profiler never calls the lock functions
 * it profiles (a preloaded interposer would call itself). */
typedef struct {
	int state; /* 0 free, 1 locked, 2 locked with waiters */
} sp_lock_t;
#define SP_LOCK_INIT { 0 }
void sp_lock(sp_lock_t *l);
void sp_unlock(sp_lock_t *l);

/* Start @fn(NULL) in a detached thread of the profiler's own, with every
 * signal blocked in it (the program's signals stay the program's) and
 * @stack_bytes of stack (0: the default), born named @name ("syncprof-",
 * at most 15 bytes: sp_born_named()).  0, or pthread_create()'s error
 * number. */
int sp_start_detached(void *(*fn)(void *), size_t stack_bytes, const char *name);

/*
 * pthread_create(@th, @attr, @fn, NULL) for a thread of the profiler's
 * own, which takes its name @name from its first instant: a thread is
 * born with its creator's name, so the creator bears @name while it
 * creates it.  The time account leaves the profiler's threads out by
 * their "syncprof-" names (report/collect.c); named only by themselves,
 * once they first ran, a report made before that counted one as a thread
 * of the program (tests/preload/run_offline.sh saw the hold ticker so, in
 * a report at exit 10 ms after it was created, on a loaded machine).  The
 * creator's name is its own again when this returns.
 */
int sp_born_named(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
		  const char *name);

/*
 * A descriptor the profiler keeps open among the program's: at
 * SP_KEPT_FD_MIN and up (below that, a program that counts on the lowest
 * free number would meet it), close-on-exec, and known by its file
 * (device and inode), since the program may close that number and open
 * another file there - which is then the program's, never to be written,
 * read or closed by the profiler.  The start-up stderr (lifecycle.c) and
 * the hold-state sampler's /proc files (holdstate.c) are such.
 */
#define SP_KEPT_FD_MIN 100
struct sp_kept_fd {
	int fd; /* -1: none */
	dev_t dev;
	ino_t ino;
};
/* Keep a duplicate of @fd (left open) in @k: 0, or -errno (@k->fd -1). */
int sp_kept_fd_take(struct sp_kept_fd *k, int fd);
/* Whether @k->fd is still the file it was taken for. */
int sp_kept_fd_ours(const struct sp_kept_fd *k);
/* Close @k->fd when it is still ours; @k->fd is -1 after. */
void sp_kept_fd_close(struct sp_kept_fd *k);

/*
 * The futex system call, made with the `syscall` instruction: never
 * through libc's syscall(), which the preload library interposes to see
 * the futex waits of lock libraries (record/probe_futex.c) - the
 * profiler's own would be recorded as the program's, or recurse.
 * Return: >= 0 as the kernel's, or -1 with errno set, as syscall().
 */
static inline long sp_futex(void *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	register long r10 __asm__("r10") = (long)ts;
	register long r8 __asm__("r8") = 0;
	register long r9 __asm__("r9") = 0;
	long rc;

	__asm__ volatile("syscall"
			 : "=a"(rc)
			 : "0"(202L /* SYS_futex, x86-64 */), "D"(uaddr), "S"((long)op),
			   "d"((long)val), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	if (rc < 0 && rc > -4096) {
		errno = (int)-rc;
		return -1;
	}
	return rc;
}

void *sp_mmap(size_t size);
void *sp_mmap_filled(size_t size); /* its pages mapped at once (MAP_POPULATE) */
void sp_munmap(void *p, size_t size);
pid_t sp_gettid(void);
/* Expand %p in @tmpl to the pid and %% to %; NULL when it does not fit. */
char *sp_path_expand(const char *tmpl, char *buf, size_t size);
/* Create a pthread key once, lock-free, from any thread (util.c). */
int sp_key_once(int *state, pthread_key_t *key, void (*dtor)(void *),
		void (*on_created)(void));

/*
 * The profiler's own file writes must not kill the program: a write past
 * RLIMIT_FSIZE raises SIGXFSZ (and fails with EFBIG), one into a pipe
 * without reader SIGPIPE (EPIPE), both fatal by default and sent to the
 * writing thread.  Enter blocks both in the calling thread; leave takes
 * those that became pending in between (raised by the section's writes)
 * and restores the mask.  Four system calls.  Not needed in the trace
 * writer thread, which blocks every signal for good.  Leave keeps errno.
 */
struct sp_sigguard {
	sigset_t old, pending;
	int blocked;
};
void sp_sigguard_enter(struct sp_sigguard *g);
void sp_sigguard_leave(struct sp_sigguard *g);

/* A 64-bit mix whose every output bit depends on every input bit
 * (MurmurHash3's finaliser): hash keys of structured values (addresses,
 * counts) whose low bits alone would cluster. */
static inline uint64_t sp_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* A 64-bit hash of four words, never 0 (0 marks a free slot), for sets
 * that keep the hash in place of the key (lockorder.c's edges, hold.c's
 * keys past the ramp): each word goes through its own round of
 * sp_mix64(), so that keys do not collide by their structure, only by
 * chance (about N^2 / 2^65 for N keys). */
static inline uint64_t sp_hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t h = sp_mix64(sp_mix64(sp_mix64(sp_mix64(a) ^ b) ^ c) ^ d);

	return h ? h : 1;
}

static inline uint64_t sp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- "elf_kind.c": can the preload library interpose a program? ELF ---- */

enum {
	SP_ELF_DYNAMIC, /* x86-64 with PT_INTERP: ld.so loads LD_PRELOAD */
	SP_ELF_STATIC,  /* x86-64 without PT_INTERP (static, static-pie) */
	SP_ELF_32BIT,
	SP_ELF_MACHINE, /* another machine: *@machine is its e_machine */
	SP_ELF_OTHER,   /* not ELF (a script), or unreadable */
};
/* The kind of the program file @path; system calls only (a vfork child
 * may ask). */
int sp_elf_kind(const char *path, unsigned *machine);
/* The GNU build ID among the ELF notes in @notes (@len bytes: a PT_NOTE
 * segment or SHT_NOTE section, in memory or read from a file), as hex
 * into @hex (129 bytes); 1 when found, 0 (and @hex untouched) when not.
 * Bounds-checked: the notes may come from any file. */
int sp_build_id_hex(const unsigned char *notes, size_t len, char *hex);
/* [@lo, @hi) lies inside one readable loaded segment (PT_LOAD) of the
 * object loaded at @base with program headers @phdr (@phnum of them):
 * before its memory is read (the lock-library look, the attach's GOT). */
int sp_segment_holds(uintptr_t base, const Elf64_Phdr *phdr, int phnum, uintptr_t lo,
		     uintptr_t hi);
/* A pointer of a loaded object's dynamic section: glibc stores them
 * relocated on x86-64; an unrelocated one lies below @base. */
static inline uintptr_t sp_dyn_ptr(uintptr_t base, uintptr_t v)
{
	return v < base ? v + base : v;
}

#endif /* SP_BASE_BASE_H */
