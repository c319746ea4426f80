/*
 * containers.h - the two containers the offline half shares: a growable
 * array (sp_grow) and a hash map from u64 keys to u64 values
 * (struct sp_u64map).  Private to syncprof's offline code (report/,
 * read/, analyse/, the CLI) and to anyone off the lock path: both call
 * malloc, so never from a probe or a signal handler.
 *
 * sp_grow(&v, &cap, n, size): room for element @n of *@v (elements of
 * @size bytes): doubles *@cap, from 16, when @n reached it; 0, or -ENOMEM
 * (out of memory, or a size that overflows), *@v then unchanged.
 *
 * struct sp_u64map: open addressing, linear probing, at most half full;
 * zeroed is empty.  A key may be held by several entries (the trace
 * model interns records by a hash of their fields, and a callback tells
 * the ones that share it apart): sp_u64map_find() takes such a callback,
 * sp_u64map_add() adds without looking, sp_u64map_set() replaces the
 * first entry of its key or adds one.
 *
 * Alternatives considered: a macro-generated map per key and value type
 * (khash): faster for 32-bit values, but the maps here hold indexes and
 * pointers, both fit in a u64, and one compiled copy is easier to read.
 */
#ifndef SP_BASE_CONTAINERS_H
#define SP_BASE_CONTAINERS_H

#include <stddef.h>
#include <stdint.h>

int sp_grow(void *v, size_t *cap, size_t n, size_t size);

struct sp_u64map {
	uint64_t *keys, *vals;
	uint8_t *used;
	size_t cap, n; /* cap: 0 or a power of two; n < cap / 2 */
};

/* The value of an entry of @key that @eq accepts (NULL: any): 1 and
 * *@val, or 0. */
int sp_u64map_find(const struct sp_u64map *m, uint64_t key,
		   int (*eq)(const void *ctx, uint64_t val), const void *ctx, uint64_t *val);
int sp_u64map_add(struct sp_u64map *m, uint64_t key, uint64_t val);
int sp_u64map_set(struct sp_u64map *m, uint64_t key, uint64_t val);
/* Each entry to @fn, in no order. */
void sp_u64map_each(const struct sp_u64map *m, void (*fn)(uint64_t key, uint64_t val, void *arg),
		    void *arg);
void sp_u64map_free(struct sp_u64map *m);

#endif /* SP_BASE_CONTAINERS_H */
