/*
 * containers.c - sp_grow() and struct sp_u64map (containers.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/containers.h"

int sp_grow(void *v, size_t *cap, size_t n, size_t size)
{
	void **p = v, *nv;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	while (c <= n)
		c *= 2;
	if (!size || c > SIZE_MAX / size)
		return -ENOMEM;
	nv = realloc(*p, c * size);
	if (!nv)
		return -ENOMEM;
	*p = nv;
	*cap = c;
	return 0;
}

static size_t free_slot(const struct sp_u64map *m, uint64_t key)
{
	size_t j = (size_t)sp_mix64(key) & (m->cap - 1);

	while (m->used[j])
		j = (j + 1) & (m->cap - 1);
	return j;
}

/* Room for one more entry: 0 or -ENOMEM. */
static int reserve(struct sp_u64map *m)
{
	struct sp_u64map g;

	if (m->cap && (m->n + 1) * 2 <= m->cap)
		return 0;
	g.cap = m->cap ? m->cap * 2 : 64;
	g.n = m->n;
	g.keys = malloc(g.cap * sizeof(*g.keys));
	g.vals = malloc(g.cap * sizeof(*g.vals));
	g.used = calloc(g.cap, 1);
	if (!g.keys || !g.vals || !g.used) {
		free(g.keys);
		free(g.vals);
		free(g.used);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		j = free_slot(&g, m->keys[i]);
		g.used[j] = 1;
		g.keys[j] = m->keys[i];
		g.vals[j] = m->vals[i];
	}
	sp_u64map_free(m);
	*m = g;
	return 0;
}

/* The slot of the first entry of @key that @eq accepts, or SIZE_MAX. */
static size_t find_slot(const struct sp_u64map *m, uint64_t key,
			int (*eq)(const void *ctx, uint64_t val), const void *ctx)
{
	if (!m->cap)
		return SIZE_MAX;
	for (size_t j = (size_t)sp_mix64(key) & (m->cap - 1); m->used[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key && (!eq || eq(ctx, m->vals[j])))
			return j;
	return SIZE_MAX;
}

int sp_u64map_find(const struct sp_u64map *m, uint64_t key,
		   int (*eq)(const void *ctx, uint64_t val), const void *ctx, uint64_t *val)
{
	size_t j = find_slot(m, key, eq, ctx);

	if (j == SIZE_MAX)
		return 0;
	*val = m->vals[j];
	return 1;
}

int sp_u64map_add(struct sp_u64map *m, uint64_t key, uint64_t val)
{
	size_t j;

	if (reserve(m))
		return -ENOMEM;
	j = free_slot(m, key);
	m->used[j] = 1;
	m->keys[j] = key;
	m->vals[j] = val;
	m->n++;
	return 0;
}

int sp_u64map_set(struct sp_u64map *m, uint64_t key, uint64_t val)
{
	size_t j = find_slot(m, key, NULL, NULL);

	if (j == SIZE_MAX)
		return sp_u64map_add(m, key, val);
	m->vals[j] = val;
	return 0;
}

void sp_u64map_each(const struct sp_u64map *m, void (*fn)(uint64_t key, uint64_t val, void *arg),
		    void *arg)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->used[i])
			fn(m->keys[i], m->vals[i], arg);
}

void sp_u64map_free(struct sp_u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}
