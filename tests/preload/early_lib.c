/*
 * early_lib.c - a library whose constructor locks before the preload
 * library may have initialised (constructors of libraries run in
 * dependency order; an LD_PRELOADed object can come after them), and that
 * exports a function preload_early.c calls through dlsym().
 */
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t early_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t early_rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t early_spin;
int early_lib_locked;

__attribute__((constructor(101))) static void early_ctor(void)
{
	void *p;

	pthread_mutex_lock(&early_lock);
	p = malloc(100); /* a malloc replacement may lock here, too */
	free(p);
	pthread_rwlock_wrlock(&early_rw);
	pthread_rwlock_unlock(&early_rw);
	pthread_spin_init(&early_spin, 0);
	pthread_spin_lock(&early_spin);
	pthread_spin_unlock(&early_spin);
	early_lib_locked++;
	pthread_mutex_unlock(&early_lock);
}

int early_lib_work(int n)
{
	for (int i = 0; i < n; i++) {
		pthread_mutex_lock(&early_lock);
		early_lib_locked++;
		pthread_mutex_unlock(&early_lock);
	}
	return early_lib_locked;
}
