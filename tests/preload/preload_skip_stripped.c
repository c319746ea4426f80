/*
 * preload_skip_stripped.c - skipping a lock wrapper in a stripped program
 * built as distributions build (-O2, no frame pointers): by a .dynsym name
 * (skip=^skip_lock$, the wrapper exported with -rdynamic), by a
 * DSO+0xSTART-0xEND range (skip_stripped.sh reads it from nm of the
 * unstripped copy) and by skip_frames=1.
 *
 * The expected sites are known without symbols: skip_lock() records its
 * own return address, which is the call site in caller_a() or caller_b().
 * The report must have exactly those two rows, 2 x N acquisitions each, and
 * no row at the wrapper.  The calls come in two rounds 100 ms apart: with
 * skip_frames, the first calls unwind and have their frames' CFA rules
 * learned in the background (stack.c), so the second round steps up
 * through the learned rules; both must find the same sites.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "preload_util.h"

#define N 5000
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned sink;
static uintptr_t seen[2];
static unsigned n_seen;

__attribute__((noinline)) void skip_lock(pthread_mutex_t *l)
{
	uintptr_t ra = (uintptr_t)__builtin_return_address(0);

	if (n_seen < 2 && (!n_seen || seen[0] != ra))
		seen[n_seen++] = ra;
	pthread_mutex_lock(l);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) static void caller_a(void)
{
	skip_lock(&m);
	pthread_mutex_unlock(&m);
	__asm__ volatile("" ::: "memory");
}

/* Not caller_a's twin, or -O2 folds them into one (-fipa-icf). */
__attribute__((noinline)) static void caller_b(void)
{
	skip_lock(&m);
	sink++;
	pthread_mutex_unlock(&m);
	__asm__ volatile("" ::: "memory");
}

/* The acquisitions of the row whose site address is @pc; -1: no row. */
static long long row_at(const char *json, uintptr_t pc)
{
	char needle[64];

	snprintf(needle, sizeof(needle), "\"address\":\"0x%" PRIxPTR "\"", pc);
	return t_row_value(json, needle, "acquisitions");
}

int main(void)
{
	char *json;

	t_require_preload();
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < N; i++) {
			caller_a();
			caller_b();
		}
		usleep(100000);
	}
	json = t_report(1, 0);
	T_ASSERT_INT(n_seen, ==, 2);
	printf("callers' sites: 0x%" PRIxPTR " 0x%" PRIxPTR "\n", seen[0], seen[1]);
	T_ASSERT_INT(row_at(json, seen[0]), ==, 2 * N);
	T_ASSERT_INT(row_at(json, seen[1]), ==, 2 * N);
	T_ASSERT_INT(t_count(json, "{\"type\":\"mutex\""), ==, 2);
	free(json);
	puts("preload_skip_stripped: ok");
	return 0;
}
