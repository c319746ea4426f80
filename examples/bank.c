/*
 * bank.c - a small bank with a hot lock, for trying syncprof.
 *
 * Teller threads move money between accounts.  Each transfer locks the two
 * accounts (in address order, so no deadlock), reads the fee from a
 * reader-writer-locked rate table, and appends to a journal behind one
 * global mutex - the hot lock a profile should point at.  An auditor thread
 * waits on a condition variable until a batch of journal entries is ready;
 * a rate-setter thread takes the rate table for writing now and then; a
 * spinlock guards a statistics counter.  At the end the program checks that
 * no money was created or lost.
 *
 * Usage: bank [THREADS [TRANSFERS_PER_THREAD]]   (default 4 and 200000)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_ACCOUNTS 64
#define JOURNAL_BATCH 1024

struct account {
	pthread_mutex_t lock;
	long balance;
};

static struct account accounts[N_ACCOUNTS];

static pthread_mutex_t journal_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t journal_ready = PTHREAD_COND_INITIALIZER;
static long journal[JOURNAL_BATCH];
static unsigned journal_len;
static unsigned long journal_flushed;
static int closing;

static pthread_rwlock_t rates_lock = PTHREAD_RWLOCK_INITIALIZER;
static long fee_per_mille = 1;

static pthread_spinlock_t stats_lock;
static unsigned long transfers_done;

static long fees_collected;
static pthread_mutex_t fees_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned transfers_per_thread = 200000;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void journal_append(long amount)
{
	pthread_mutex_lock(&journal_lock);
	while (journal_len == JOURNAL_BATCH) /* full: the auditor has not drained it */
		pthread_cond_wait(&journal_ready, &journal_lock);
	/* Simulate formatting the journal line while holding the lock. */
	for (volatile int spin = 0; spin < 60; spin++)
		;
	journal[journal_len++] = amount;
	if (journal_len == JOURNAL_BATCH)
		pthread_cond_broadcast(&journal_ready);
	pthread_mutex_unlock(&journal_lock);
}

static void transfer(unsigned from, unsigned to, long amount)
{
	struct account *a = &accounts[from < to ? from : to];
	struct account *b = &accounts[from < to ? to : from];
	long fee;

	pthread_rwlock_rdlock(&rates_lock);
	fee = amount * fee_per_mille / 1000;
	pthread_rwlock_unlock(&rates_lock);

	pthread_mutex_lock(&a->lock);
	pthread_mutex_lock(&b->lock);
	if (accounts[from].balance >= amount + fee) {
		accounts[from].balance -= amount + fee;
		accounts[to].balance += amount;
		pthread_mutex_lock(&fees_lock);
		fees_collected += fee;
		pthread_mutex_unlock(&fees_lock);
	}
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_unlock(&a->lock);
	journal_append(amount);
}

static void *teller(void *arg)
{
	unsigned seed = (unsigned)(unsigned long)arg * 2654435761u + 1;

	for (unsigned i = 0; i < transfers_per_thread; i++) {
		unsigned from = next_rand(&seed) % N_ACCOUNTS;
		unsigned to = next_rand(&seed) % N_ACCOUNTS;

		if (from == to)
			to = (to + 1) % N_ACCOUNTS;
		transfer(from, to, (long)(next_rand(&seed) % 1000) + 1);
		pthread_spin_lock(&stats_lock);
		transfers_done++;
		pthread_spin_unlock(&stats_lock);
	}
	return NULL;
}

static void *auditor(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&journal_lock);
	for (;;) {
		while (journal_len < JOURNAL_BATCH && !closing)
			pthread_cond_wait(&journal_ready, &journal_lock);
		journal_flushed += journal_len;
		journal_len = 0;
		pthread_cond_broadcast(&journal_ready);
		if (closing)
			break;
	}
	pthread_mutex_unlock(&journal_lock);
	return NULL;
}

static void *rate_setter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 200; i++) {
		pthread_rwlock_wrlock(&rates_lock);
		fee_per_mille = 1 + i % 3;
		pthread_rwlock_unlock(&rates_lock);
		for (volatile int spin = 0; spin < 20000; spin++)
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned n_threads = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
	pthread_t tellers[256], audit, rates;
	long total = 0;

	if (argc > 2)
		transfers_per_thread = (unsigned)atoi(argv[2]);
	if (n_threads < 1 || n_threads > 256) {
		fprintf(stderr, "bank: THREADS must be 1..256\n");
		return 2;
	}
	pthread_spin_init(&stats_lock, PTHREAD_PROCESS_PRIVATE);
	for (int i = 0; i < N_ACCOUNTS; i++) {
		pthread_mutex_init(&accounts[i].lock, NULL);
		accounts[i].balance = 1000000;
	}
	pthread_create(&audit, NULL, auditor, NULL);
	pthread_create(&rates, NULL, rate_setter, NULL);
	for (unsigned i = 0; i < n_threads; i++)
		pthread_create(&tellers[i], NULL, teller, (void *)(unsigned long)i);
	for (unsigned i = 0; i < n_threads; i++)
		pthread_join(tellers[i], NULL);
	pthread_join(rates, NULL);
	pthread_mutex_lock(&journal_lock);
	closing = 1;
	pthread_cond_broadcast(&journal_ready);
	pthread_mutex_unlock(&journal_lock);
	pthread_join(audit, NULL);

	for (int i = 0; i < N_ACCOUNTS; i++)
		total += accounts[i].balance;
	printf("bank: %lu transfers by %u tellers, %lu journal entries, fees %ld, %s\n",
	       transfers_done, n_threads, journal_flushed, fees_collected,
	       total + fees_collected == 1000000L * N_ACCOUNTS ? "books balance" : "BOOKS DO NOT BALANCE");
	return total + fees_collected == 1000000L * N_ACCOUNTS ? 0 : 1;
}
