/*
 * xorshift.h - the benchmarks' pseudo-random lock picks (lockbench,
 * condloop many): Marsaglia's 32-bit xorshift, a few instructions and no
 * call, so that picking a lock costs the same in every mode measured.
 */
#ifndef BENCH_XORSHIFT_H
#define BENCH_XORSHIFT_H

static inline unsigned xorshift(unsigned *s)
{
	unsigned x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

#endif
