/*
 * util.c - the profiler's own primitives: a futex lock, page allocation,
 * thread ids, and a guard that keeps the signals of failed writes
 * (SIGXFSZ, SIGPIPE) from killing the program.
 *
 * Design: the profiler must never call the functions it profiles.  When the
 * preload library interposes pthread_mutex_lock, a pthread mutex inside the
 * profiler would call back into the interposer; malloc may itself take
 * pthread locks (jemalloc does) or be replaced by the host program.  So the
 * profiler's data lives in mmap'd pages and its few locks are a three-state
 * futex mutex (Drepper, "Futexes Are Tricky", mutex #3).  They are taken
 * only off the hot path: thread registration and exit, reports, resets.
 *
 * Alternatives considered: a spinlock (a report over a large table would
 * make exiting threads burn a core), and pthread mutexes resolved through
 * dlsym(RTLD_NEXT) (dlsym may allocate and take locks itself, and is not
 * usable before the dynamic loader finished relocating us).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <unistd.h>

#include <pthread.h>

#include "base/base.h"

SP_TLS int sp_tls_busy;

static long futex(int *uaddr, int op, int val)
{
	return sp_futex(uaddr, op, (uint32_t)val, NULL);
}

void sp_lock(sp_lock_t *l)
{
	int c = 0;

	if (__atomic_compare_exchange_n(&l->state, &c, 1, 0, __ATOMIC_ACQUIRE,
					__ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		futex(&l->state, FUTEX_WAIT_PRIVATE, 2);
		c = __atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE);
	}
}

void sp_unlock(sp_lock_t *l)
{
	if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
		futex(&l->state, FUTEX_WAKE_PRIVATE, 1);
}

void *sp_mmap(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The same with its pages mapped at once: for a table about to be filled
 * at random over its whole size (a rehash), where one page fault each
 * would cost more (~25 us a fault on this project's VM). */
void *sp_mmap_filled(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void sp_munmap(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

pid_t sp_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Expand %p to the pid and %% to %; NULL when the result does not fit. */
char *sp_path_expand(const char *tmpl, char *buf, size_t size)
{
	size_t o = 0;

	if (!size)
		return NULL;
	for (const char *p = tmpl; *p; p++) {
		int n;

		if (p[0] == '%' && p[1] == 'p') {
			n = snprintf(buf + o, size - o, "%d", (int)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			n = snprintf(buf + o, size - o, "%%");
			p++;
		} else {
			n = snprintf(buf + o, size - o, "%c", *p);
		}
		if (n < 0 || (size_t)n >= size - o)
			return NULL;
		o += (size_t)n;
	}
	buf[o] = '\0';
	return buf;
}

/*
 * Create @key with destructor @dtor once, from any thread at any time,
 * without a lock (a thread's first profiled call may come before any
 * constructor ran).  @on_created runs once, right after a successful
 * creation, before other callers see the key as ready.  *state: 0 none,
 * 1 creating, 2 ready, 3 failed.  Returns 1 when the key is usable.
 */
int sp_key_once(int *state, pthread_key_t *key, void (*dtor)(void *),
		void (*on_created)(void))
{
	int s = sp_load_acquire(state);

	if (SP_LIKELY(s == 2))
		return 1;
	if (s == 0 && __atomic_compare_exchange_n(state, &s, 1, 0, __ATOMIC_ACQ_REL,
						  __ATOMIC_ACQUIRE)) {
		int ok = pthread_key_create(key, dtor) == 0;

		if (ok && on_created)
			on_created();
		sp_store_release(state, ok ? 2 : 3);
		return ok;
	}
	while ((s = sp_load_acquire(state)) == 1)
		;
	return s == 2;
}

void sp_sigguard_enter(struct sp_sigguard *g)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGXFSZ);
	g->blocked = !pthread_sigmask(SIG_BLOCK, &set, &g->old);
	if (!g->blocked || sigpending(&g->pending))
		sigemptyset(&g->pending);
}

void sp_sigguard_leave(struct sp_sigguard *g)
{
	static const int sigs[] = { SIGPIPE, SIGXFSZ };
	int saved = errno;
	sigset_t now;

	if (!g->blocked)
		return;
	if (!sigpending(&now)) {
		for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
			/* Blocked, the section's signal stayed pending on this
			 * thread: take it, so restoring the mask delivers nothing. */
			struct timespec zero = { 0, 0 };
			sigset_t one;

			if (!sigismember(&now, sigs[i]) || sigismember(&g->pending, sigs[i]))
				continue;
			sigemptyset(&one);
			sigaddset(&one, sigs[i]);
			while (sigtimedwait(&one, NULL, &zero) < 0 && errno == EINTR)
				;
		}
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	errno = saved;
}

int sp_born_named(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *),
		  const char *name)
{
	char own[16] = "";
	int rc, renamed;

	renamed = !prctl(PR_GET_NAME, (unsigned long)own, 0, 0, 0) &&
		  !prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
	rc = pthread_create(th, attr, fn, NULL);
	if (renamed)
		prctl(PR_SET_NAME, (unsigned long)own, 0, 0, 0);
	return rc;
}

int sp_kept_fd_take(struct sp_kept_fd *k, int fd)
{
	struct stat st;
	int rc;

	k->fd = fcntl(fd, F_DUPFD_CLOEXEC, SP_KEPT_FD_MIN);
	if (k->fd < 0)
		return -errno;
	if (fstat(k->fd, &st)) {
		rc = -errno;
		close(k->fd);
		k->fd = -1;
		return rc;
	}
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	return 0;
}

int sp_kept_fd_ours(const struct sp_kept_fd *k)
{
	struct stat st;

	return k->fd >= 0 && !fstat(k->fd, &st) && st.st_dev == k->dev && st.st_ino == k->ino;
}

void sp_kept_fd_close(struct sp_kept_fd *k)
{
	if (sp_kept_fd_ours(k))
		close(k->fd);
	k->fd = -1;
}

int sp_start_detached(void *(*fn)(void *), size_t stack_bytes, const char *name)
{
	sigset_t all, old;
	pthread_attr_t a;
	pthread_t th;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (stack_bytes)
		pthread_attr_setstacksize(&a, stack_bytes);
	rc = sp_born_named(&th, &a, fn, name);
	pthread_attr_destroy(&a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
