/*
 * test_stack_walk.c - stacks walked through learned CFI rows (stack.c,
 * walk_learned(); cfi.c) against libgcc's unwinder: from a chain of
 * functions in a thread (the walk ends at its outermost frame, clone3's,
 * whose return address the CFI leaves undefined) and in main (it ends at
 * _start), one of them with a frame pointer (a CFA rule on rbp) and one
 * with an alloca, whole stacks and the first four frames.  A capture is
 * repeated until the learner has the rows of every frame and the walk
 * took them, then must equal what sp_backtrace() gives from the same
 * place.  Linked with libdw (tests/CMakeLists.txt), which the learner
 * needs.
 */
#include <alloca.h>
#include <pthread.h>
#include <unistd.h>

#include "harness.h"
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

/* Capture until the walk went through learned rows (the learner has
 * the rows of every frame), at most ~4 s; then compare. */
static void check(const char *where, unsigned max)
{
	struct result r;

	for (int tries = 0; tries < 4000; tries++) {
		c1(max, &r, 64 + (unsigned)tries % 64);
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
}

static void *thread_main(void *arg)
{
	(void)arg;
	check("thread", MAX); /* to clone3's frame */
	check("thread", 4);
	return NULL;
}

int main(void)
{
	pthread_t t;

	sp_stack_learn();
	T_ASSERT_INT(pthread_create(&t, NULL, thread_main, NULL), ==, 0);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
	check("main", MAX); /* to _start's frame */
	check("main", 4);
	puts("test_stack_walk: ok");
	return 0;
}
