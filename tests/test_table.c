/*
 * test_table.c - a thread's table of entries (src/record/table.c) with
 * home slots: the first entry of a lock takes the slot its address picks,
 * a second entry of that lock (another site, another op) and a lock whose
 * slot is taken (an alias 64 KiB away) go to the chunks; every entry is
 * found again by its key, is one index of sp_table_at() exactly once
 * (free slots NULL), counts in sp_table_count(), keeps its counters
 * through an index growth, and folds into a table without home slots
 * (the retired threads') with the same counts.
 */
#include "harness.h"
#include "record/record.h"

#define ALIAS (SP_LOCK_SLOTS * 32) /* the same home slot (sp_lock_slot()) */

static const struct sp_site site_a = { "table.c", "a", 0, 10 };
static const struct sp_site site_b = { "table.c", "b", 0, 20 };

static struct sp_entry *put(struct sp_table *t, const struct sp_site *s, uintptr_t obj, int op,
			    uint64_t n)
{
	struct sp_entry *e = sp_table_find(t, s, obj, op);

	if (!e)
		e = sp_table_insert(t, s, obj, op, op);
	T_ASSERT(e != NULL);
	e->acquisitions += n;
	return e;
}

/* Every entry of @t by index, once: the sum of their acquisitions. */
static uint64_t walk(const struct sp_table *t, size_t *n_live)
{
	uint64_t sum = 0;

	*n_live = 0;
	for (size_t i = 0; i < sp_table_span(t); i++) {
		const struct sp_entry *e = sp_table_at(t, i);

		if (!e)
			continue;
		++*n_live;
		sum += e->acquisitions;
	}
	return sum;
}

static void test_home(void)
{
	struct sp_table t, retired;
	struct sp_entry *a, *b, *alias, *rd;
	uintptr_t base = 0x7f0000001000;
	uint64_t sum = 0;
	size_t live;

	sp_table_init(&t);
	t.use_home = 1;
	sp_table_init(&retired);
	a = put(&t, &site_a, base, SP_TYPE_MUTEX, 1);
	T_ASSERT(a == sp_home_entry(&t, base)); /* the lock's first entry: home */
	b = put(&t, &site_b, base, SP_TYPE_MUTEX, 2);        /* same lock, other site */
	rd = put(&t, &site_a, base, SP_TYPE_RWLOCK_READ, 3); /* same lock, other op */
	alias = put(&t, &site_a, base + ALIAS, SP_TYPE_MUTEX, 4);
	T_ASSERT(b != a && rd != a && alias != a);
	T_ASSERT(sp_home_entry(&t, base + ALIAS) == a); /* its slot was taken */
	T_ASSERT_UINT(sp_table_count(&t), ==, 4);
	T_ASSERT_UINT(walk(&t, &live), ==, 10);
	T_ASSERT_UINT(live, ==, 4);
	sum = 10;
	/* Many more locks: some in home slots, the rest (their slots taken)
	 * in the chunks; the index grows several times meanwhile. */
	for (uintptr_t i = 1; i < 3000; i++) {
		uintptr_t obj = base + 0x100000 + i * 64 + (i % 2 ? ALIAS * 3 : 0);

		put(&t, &site_a, obj, SP_TYPE_MUTEX, i);
		sum += i;
	}
	T_ASSERT_UINT(sp_table_count(&t), ==, 4 + 2999);
	T_ASSERT(t.n_home > 500 && t.n_home < 2000);
	T_ASSERT_UINT(walk(&t, &live), ==, sum);
	T_ASSERT_UINT(live, ==, 4 + 2999);
	/* Found again by key, each with its own counter. */
	T_ASSERT(sp_table_find(&t, &site_a, base, SP_TYPE_MUTEX) == a);
	T_ASSERT(sp_table_find(&t, &site_b, base, SP_TYPE_MUTEX) == b);
	T_ASSERT(sp_table_find(&t, &site_a, base + ALIAS, SP_TYPE_MUTEX) == alias);
	T_ASSERT_UINT(sp_table_find(&t, &site_a, base + 0x100000 + 2999 * 64 + ALIAS * 3,
				    SP_TYPE_MUTEX)->acquisitions, ==, 2999);
	T_ASSERT(sp_table_find(&t, &site_b, base + ALIAS, SP_TYPE_MUTEX) == NULL);
	/* Folded into a table without home slots: the same entries. */
	T_ASSERT_INT(sp_table_fold(&retired, &t), ==, 0);
	T_ASSERT_UINT(sp_table_count(&retired), ==, 4 + 2999);
	T_ASSERT_UINT(sp_table_span(&retired), ==, 4 + 2999);
	T_ASSERT_UINT(walk(&retired, &live), ==, sum);
	sp_table_destroy(&t);
	sp_table_destroy(&retired);
	T_ASSERT(t.home == NULL && t.n_home == 0);
}

int main(void)
{
	test_home();
	puts("test_table: ok");
	return 0;
}
