/*
 * preload_early.c - lock calls that arrive early or from awkward places:
 *   - from another library's constructor (early_lib.c), possibly before
 *     the preload library's own constructor ran;
 *   - from this program's constructors and static initialisers
 *     (PTHREAD_MUTEX_INITIALIZER, never passed to pthread_mutex_init);
 *   - from inside dlsym()/dlopen(): threads keep locking while the main
 *     thread calls dlsym and dlopen (which malloc and lock internally);
 *   - the profiler calling itself: a report while threads lock, and
 *     reports from several threads at once (reentrancy guard).
 * Run under the preload, and again with libjemalloc preloaded too.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include "preload_util.h"

extern int early_lib_locked;
int early_lib_work(int n);

static pthread_mutex_t static_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t static_cond = PTHREAD_COND_INITIALIZER;
static int ctor_ran;

__attribute__((constructor)) static void main_ctor(void)
{
	pthread_mutex_lock(&static_lock);
	ctor_ran = 1;
	pthread_cond_broadcast(&static_cond);
	pthread_mutex_unlock(&static_lock);
}

static int stop;

static void *hammer(void *arg)
{
	unsigned long n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&static_lock);
		n++;
		pthread_mutex_unlock(&static_lock);
		free(malloc(64 + n % 512));
	}
	return (void *)n;
}

static void *reporter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++)
		free(t_report(i & 1, i & 2));
	return NULL;
}

int main(void)
{
	pthread_t t[3], r[2];
	unsigned long total = 0;
	char *json;

	t_require_preload();
	T_ASSERT_INT(ctor_ran, ==, 1);
	T_ASSERT_INT(early_lib_locked, >=, 1);
	for (int i = 0; i < 3; i++)
		T_ASSERT_INT(pthread_create(&t[i], NULL, hammer, NULL), ==, 0);
	for (int i = 0; i < 200; i++) {
		void *h = dlopen("libm.so.6", RTLD_NOW);
		int (*work)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "early_lib_work");

		T_ASSERT(h != NULL);
		T_ASSERT(dlsym(h, "cos") != NULL);
		T_ASSERT(dlsym(RTLD_NEXT, "pthread_mutex_lock") != NULL);
		T_ASSERT(work != NULL);
		work(10);
		dlclose(h);
	}
	for (int i = 0; i < 2; i++)
		T_ASSERT_INT(pthread_create(&r[i], NULL, reporter, NULL), ==, 0);
	for (int i = 0; i < 2; i++)
		pthread_join(r[i], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 3; i++) {
		void *n;

		pthread_join(t[i], &n);
		total += (unsigned long)n;
	}
	T_ASSERT_INT(early_lib_work(0), ==, 1 + 200 * 10);
	json = t_report(1, 0);
	/* Every hammer acquisition was recorded, at one site. */
	T_ASSERT_INT(t_row_value(json, "\"function\":\"hammer\"", "acquisitions"), ==, total);
	T_ASSERT_INT(t_row_value(json, "\"function\":\"early_lib_work\"", "acquisitions"), ==,
		     2000);
	free(json);
	puts("preload_early: ok");
	return 0;
}
