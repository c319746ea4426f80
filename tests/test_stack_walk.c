/*
 * test_stack_walk.c - stacks walked through learned CFI rows (stack.c,
 * walk_learned(); cfi.c) against libgcc's unwinder: from a chain of
 * functions in a thread (the walk ends at its outermost frame, clone3's,
 * whose return address the CFI leaves undefined) and in main (it ends at
 * _start), one of them with a frame pointer (a CFA rule on rbp) and one
 * with an alloca, whole stacks and the first four frames.  A capture is
 * repeated until the learner has the rows of every frame and the walk
 * took them, then must equal what sp_backtrace() gives from the same
 * place.  Then through a frame of a library (argv[1], stack_walk_dso.c):
 * once the library is unloaded, the rule learned for its return address
 * is no longer used (cfi.c, sp_cfi_learned()).  Linked with libdw
 * (tests/CMakeLists.txt), which the learner needs.
 */
#include <alloca.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include "harness.h"
#include "record/cfi.h"
#include "record/record.h"
#include "record/unwind.h"

#define NOINLINE __attribute__((noinline))
#define KEEP() __asm__ volatile("" ::: "memory") /* no tail call, no merge */
#define MAX 32

struct result {
	uintptr_t got[MAX], want[MAX];
	unsigned n_got, n_want;
	int learned; /* the capture walked through learned rows */
};

/* A capture whose site is the return address into our caller, and what
 * libgcc's walk from here says it should be. */
static NOINLINE void capture(unsigned max, struct result *r)
{
	uintptr_t site = (uintptr_t)__builtin_return_address(0), all[64];
	unsigned long before = sp_load_relaxed(&sp_stack_walks_learned);
	int n, i;

	r->n_got = sp_stack_capture(site, r->got, max);
	r->learned = sp_load_relaxed(&sp_stack_walks_learned) != before;
	n = sp_backtrace(all, 64);
	for (i = 0; i < n && all[i] != site; i++)
		;
	r->n_want = 0;
	while (++i < n && r->n_want < max)
		r->want[r->n_want++] = all[i];
	KEEP();
}

static NOINLINE void c3(unsigned max, struct result *r)
{
	capture(max, r);
	KEEP();
}

/* A frame-pointer frame: its CFA rule is on rbp. */
__attribute__((optimize("no-omit-frame-pointer"))) static NOINLINE void c2(unsigned max,
									     struct result *r)
{
	c3(max, r);
	KEEP();
}

/* A frame that grows by an alloca: gcc keeps a frame pointer for it. */
static NOINLINE void c1(unsigned max, struct result *r, unsigned pad)
{
	volatile char *p = alloca(pad);

	p[0] = 1;
	c2(max, r);
	KEEP();
}

/* Through the library's frame when @dso_call is set. */
static void (*dso_call)(void (*fn)(void *), void *arg);

struct args {
	unsigned max;
	struct result *r;
	unsigned pad;
};

static void via_dso(void *arg)
{
	struct args *a = arg;

	c1(a->max, a->r, a->pad);
	KEEP();
}

/* Capture until the walk went through learned rows (the learner has
 * the rows of every frame), at most ~4 s; then compare. */
static struct result check(const char *where, unsigned max)
{
	struct result r;

	for (int tries = 0; tries < 4000; tries++) {
		struct args a = { max, &r, 64 + (unsigned)tries % 64 };

		if (dso_call)
			dso_call(via_dso, &a);
		else
			via_dso(&a);
		if (r.learned)
			break;
		usleep(1000);
	}
	if (!r.learned)
		T_FAIL("%s, max %u: no capture walked through learned rows", where, max);
	T_ASSERT(r.n_want > 0);
	if (r.n_got != r.n_want || memcmp(r.got, r.want, r.n_got * sizeof(*r.got))) {
		for (unsigned i = 0; i < r.n_got || i < r.n_want; i++)
			fprintf(stderr, "  %2u: learned %#lx  libgcc %#lx\n", i,
				i < r.n_got ? (unsigned long)r.got[i] : 0ul,
				i < r.n_want ? (unsigned long)r.want[i] : 0ul);
		T_FAIL("%s, max %u: %u frames learned, %u from libgcc", where, max, r.n_got,
		       r.n_want);
	}
	printf("%s, max %u: %u frames, the same as libgcc's\n", where, max, r.n_got);
	return r;
}

static void *thread_main(void *arg)
{
	(void)arg;
	check("thread", MAX); /* to clone3's frame */
	check("thread", 4);
	return NULL;
}

/* The return address into the library among @r's frames, or 0. */
static uintptr_t frame_in(const struct result *r, void *lib_fn)
{
	Dl_info lib, f;

	if (!dladdr(lib_fn, &lib))
		return 0;
	for (unsigned i = 0; i < r->n_got; i++)
		if (dladdr((void *)r->got[i], &f) && f.dli_fbase == lib.dli_fbase)
			return r->got[i];
	return 0;
}

int main(int argc, char **argv)
{
	const struct sp_cfi_row *row;
	struct result r;
	uintptr_t ra;
	pthread_t t;
	void *lib;

	T_ASSERT(argc == 2);
	sp_stack_learn();
	T_ASSERT_INT(pthread_create(&t, NULL, thread_main, NULL), ==, 0);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
	check("main", MAX); /* to _start's frame */
	check("main", 4);

	/* A library's frame: learned, then unloaded. */
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	T_ASSERT(lib != NULL);
	dso_call = (void (*)(void (*)(void *), void *))dlsym(lib, "stack_walk_dso_call");
	T_ASSERT(dso_call != NULL);
	r = check("main, through the library", MAX);
	ra = frame_in(&r, (void *)dso_call);
	T_ASSERT(ra != 0);
	T_ASSERT_INT(sp_cfi_learned(ra, &row), ==, 1);
	dso_call = NULL;
	T_ASSERT_INT(dlclose(lib), ==, 0);
	T_ASSERT_INT(sp_cfi_learned(ra, &row), ==, -1);
	puts("main, the library unloaded: its learned rule is not used");
	puts("test_stack_walk: ok");
	return 0;
}
