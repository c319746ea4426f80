/*
 * process.c - libsyncprof-preload.so's part in the life of the process:
 * its start-up (the constructor), the threads it starts (pthread_create(),
 * for each thread's exact start), the programs it starts (execve(), a
 * warning for a statically linked one) and its exits without exit
 * handlers (_exit(), _Exit()).  The lock calls are preload.c's.
 *
 * Each interposer forwards to the next definition, found with
 * dlsym(RTLD_NEXT) by the constructor, and keeps the caller's errno and
 * return value.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach.h"
#include "preload.h"
#include "base/lock_calls.h"
#include "record/probe.h"
#include "runtime/runtime.h"

/* ---- programs the process starts --------------------------------------------- */

/*
 * execve(): a statically linked program (no PT_INTERP: ld.so never runs,
 * so LD_PRELOAD is not loaded) that a profiled process starts - a shell
 * under 'syncprof run' running one - would go unprofiled without a word.
 * Said on stderr, one line, then the real execve() runs, with the
 * caller's errno kept.  May run in a vfork child: sp_elf_kind() makes
 * system calls only, the line is built on the stack and written with
 * write(2); libc's execve was found at start-up.  Not seen: programs
 * started with posix_spawn() or the exec*() variants, which reach the
 * kernel inside libc without this symbol (run warns about the program
 * it starts itself).
 */
static int (*real_execve)(const char *, char *const[], char *const[]);

__attribute__((visibility("default"))) int execve(const char *path, char *const argv[],
						   char *const envp[])
{
	int saved = errno;

	if (sp_opts.enabled && sp_elf_kind(path, NULL) == SP_ELF_STATIC) {
		static const char a[] = "syncprof: warning: ",
				  b[] = " is statically linked: its lock calls cannot be "
					"interposed, it runs unprofiled\n";
		char line[512];
		size_t n = strlen(path), k = 0;

		if (n > sizeof(line) - sizeof(a) - sizeof(b))
			n = sizeof(line) - sizeof(a) - sizeof(b);
		memcpy(line, a, sizeof(a) - 1), k += sizeof(a) - 1;
		memcpy(line + k, path, n), k += n;
		memcpy(line + k, b, sizeof(b) - 1), k += sizeof(b) - 1;
		(void)!write(2, line, k);
	}
	errno = saved;
	if (!real_execve) {
		errno = ENOSYS;
		return -1;
	}
	return real_execve(path, argv, envp);
}

/*
 * _exit() and _Exit(): the program leaves without its exit handlers -
 * dash ends every 'sh -c' that way - so the control socket, which the
 * lifecycle's handler removes (control.c), stayed behind in the socket
 * directory, one file per such process.  Removed here, with
 * async-signal-safe calls only (_exit() is one: called from a signal
 * handler, or in a vfork child, whose pid is not the socket's), then the
 * real call.  The profile is not written: that needs the report's locks
 * and memory, which a signal handler may have interrupted (docs/preload.md,
 * "Limits").  glibc's exit() reaches its _exit() inside libc, not here.
 */
static void (*real_exit_now)(int);

static __attribute__((noreturn)) void exit_now(int status)
{
	sp_control_exit_now();
	if (real_exit_now)
		real_exit_now(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
	exit_now(status);
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
	exit_now(status);
}

/* ---- threads the process starts --------------------------------------------- */

/*
 * pthread_create(): the new thread reads the boot clock first thing
 * (sp_thread_start_ns), so that its time account (account.c) has its
 * exact start and need not read its stat file, which gives the start to
 * a clock tick only (10 ms: up to 5 ms too long a life for each short
 * thread) and costs an open, read and close at its exit.  The start
 * routine and its argument go to the new thread in a slot of a small
 * pool, claimed with a compare-and-swap and given back by the new thread
 * before the routine runs; when every slot is taken (that many threads
 * created and not started yet), or no account is kept (account=0), the
 * real call runs alone.  Not malloc(): the new thread's free() made it
 * take a malloc arena of its own (64 MiB of address space mapped), which
 * moved where later threads' stacks were mapped (tests/preload/
 * run_offline.sh compares two runs' join objects, their pthread_t).  The
 * thread's return value, cancellation and pthread_exit() are the
 * routine's own: the trampoline tail-calls it (no frame of its own stays
 * under the routine, optimised).  Not seen: threads made by
 * libc itself (C11 thrd_create(), timers) or by clone(), under attach (the
 * program's calls are bound to libc's already); those read stat.
 */
struct thread_start {
	void *(*fn)(void *); /* NULL: the slot is free */
	void *arg;
};

#define THREAD_STARTS 64
static struct thread_start thread_starts[THREAD_STARTS];
static unsigned thread_starts_next;

static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* A free slot, claimed for @fn (its argument is set by the caller before
 * the slot is handed on), or NULL. */
static struct thread_start *thread_start_claim(void *(*fn)(void *))
{
	unsigned first = __atomic_fetch_add(&thread_starts_next, 1, __ATOMIC_RELAXED);

	for (unsigned i = 0; i < THREAD_STARTS; i++) {
		struct thread_start *s = &thread_starts[(first + i) % THREAD_STARTS];
		void *(*none)(void *) = NULL;

		if (__atomic_compare_exchange_n(&s->fn, &none, fn, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return s;
	}
	return NULL;
}

static void *thread_trampoline(void *p)
{
	struct thread_start *slot = p, s = *slot;

	sp_thread_start_ns = sp_boottime_ns();
	sp_store_release(&slot->fn, NULL);
	return s.fn(s.arg);
}

__attribute__((visibility("default"))) int pthread_create(pthread_t *thread,
							  const pthread_attr_t *attr,
							  void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
		sp_load_acquire(&real_pthread_create);
	void *(*routine)(void *) = fn;
	struct thread_start *s;
	int rc;

	if (!real) { /* a constructor before ours starts a thread */
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				void *))dlsym(RTLD_NEXT, "pthread_create");
		if (!real)
			return EAGAIN;
		sp_store_release(&real_pthread_create, real);
	}
	/* A NULL routine (glibc declares it nonnull, so the compiler would
	 * drop the test unless the value is hidden from it) would free a slot
	 * another thread claimed: the real call alone. */
	__asm__("" : "+r"(routine));
	if (!routine || !sp_load_relaxed(&sp_account_on) || !(s = thread_start_claim(fn)))
		return real(thread, attr, fn, arg);
	s->arg = arg;
	rc = real(thread, attr, thread_trampoline, s);
	if (rc)
		sp_store_release(&s->fn, NULL);
	return rc;
}

/* ---- start-up --------------------------------------------------------------- */

/*
 * Before the program's constructors (priority 101 runs first among this
 * object's): resolve, read SYNCPROF_OPTIONS, compute wrapper ranges, warm
 * the unwinder, register this thread - all outside any lock call.
 */
__attribute__((constructor(101))) static void preload_init(int argc, char **argv, char **envp)
{
	struct sp_thread *saved;

	(void)envp;
	sp_command_from_argv(argc, argv); /* glibc gives constructors argv */
	sp_real_resolve_all();
	real_execve = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT,
										  "execve");
	real_exit_now = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
	if (!sp_load_acquire(&real_pthread_create))
		sp_store_release(&real_pthread_create,
				 (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
					  void *))dlsym(RTLD_NEXT, "pthread_create"));
#if defined(__x86_64__)
	sp_store_release(&sp_syscall_next, (void *)SP_REAL(syscall));
#endif
	if (sp_attach_loaded()) {
		/* Loaded by 'syncprof attach': start-up waits for it (attach.c). */
		sp_store_relaxed(&sp_runtime_deferred, 1);
		return;
	}
	saved = sp_thread_enter();
	sp_runtime_init();
	sp_stack_init((const char *const *)sp_opts.skip, sp_opts.n_skip, sp_opts.frames,
		      sp_opts.skip_frames);
	sp_thread_leave(saved);
	sp_thread_self();
}
