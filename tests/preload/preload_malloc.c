/*
 * preload_malloc.c - a program that replaces malloc with its own, which
 * takes a pthread mutex on every call.  Everyone's malloc calls then lock
 * through the interposer: the dynamic loader's and dlsym()'s (also while
 * the preload library resolves the real lock functions with dlsym), libc's
 * (stdio), and the profiler's own report (which must not record, nor
 * deadlock on, the calls it causes itself).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "preload_util.h"

#define ARENA (64u << 20)

static pthread_mutex_t heap_lock = PTHREAD_MUTEX_INITIALIZER;
static char arena[ARENA] __attribute__((aligned(64)));
static size_t used;
static unsigned long heap_calls;

struct hdr {
	size_t size;
	size_t pad;
};

void *malloc(size_t n)
{
	struct hdr *h;

	pthread_mutex_lock(&heap_lock);
	heap_calls++;
	n = (n + 15) & ~(size_t)15;
	if (used + n + sizeof(*h) > ARENA) {
		pthread_mutex_unlock(&heap_lock);
		errno = ENOMEM;
		return NULL;
	}
	h = (struct hdr *)(arena + used);
	used += n + sizeof(*h);
	h->size = n;
	pthread_mutex_unlock(&heap_lock);
	return h + 1;
}

void free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&heap_lock); /* a bump allocator: nothing to free */
	heap_calls++;
	pthread_mutex_unlock(&heap_lock);
}

void *calloc(size_t a, size_t b)
{
	void *p = malloc(a * b);

	if (p)
		memset(p, 0, a * b);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q = malloc(n);

	if (q && p) {
		size_t old = ((struct hdr *)p - 1)->size;

		memcpy(q, p, old < n ? old : n);
	}
	free(p);
	return q;
}

void *aligned_alloc(size_t al, size_t n)
{
	char *p = malloc(n + al);

	return p ? (void *)(((uintptr_t)p + al - 1) & ~(uintptr_t)(al - 1)) : NULL;
}

int posix_memalign(void **out, size_t al, size_t n)
{
	*out = aligned_alloc(al, n);
	return *out ? 0 : ENOMEM;
}

void *memalign(size_t al, size_t n)
{
	return aligned_alloc(al, n);
}

static void *volatile keep; /* so that malloc/free pairs are not elided */

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++) {
		keep = malloc(32);
		free(keep);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[3];
	char *json;

	t_require_preload();
	for (int i = 0; i < 3; i++)
		T_ASSERT_INT(pthread_create(&t[i], NULL, worker, NULL), ==, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	/* Reports malloc (and so lock) while they run: not recorded, no deadlock. */
	json = t_report(1, 0);
	T_ASSERT_CONTAINS(json, "\"function\":\"malloc\"");
	T_ASSERT_INT(t_row_value(json, "\"function\":\"free\"", "acquisitions"), >=, 60000);
	free(json);
	json = t_report(0, 1);
	free(json);
	printf("preload_malloc: ok (%lu heap calls)\n", heap_calls);
	return 0;
}
