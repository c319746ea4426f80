/*
 * harness.h - a tiny test harness (libuv style): asserts that print both
 * operands, and helpers shared by the tests.  Each test is its own
 * executable run by CTest with a timeout; exit status 0 means pass.
 */
#ifndef SYNCPROF_TEST_HARNESS_H
#define SYNCPROF_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_FAIL(...)                                                               \
	do {                                                                      \
		fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);             \
		fprintf(stderr, __VA_ARGS__);                                     \
		fputc('\n', stderr);                                              \
		abort();                                                          \
	} while (0)

#define T_ASSERT(cond)                                                            \
	do {                                                                      \
		if (!(cond))                                                      \
			T_FAIL("%s", #cond);                                      \
	} while (0)

/* Integer comparison; both operands printed on failure. */
#define T_ASSERT_INT(a, op, b)                                                    \
	do {                                                                      \
		long long a_ = (long long)(a), b_ = (long long)(b);               \
		if (!(a_ op b_))                                                  \
			T_FAIL("%s %s %s (%lld vs %lld)", #a, #op, #b, a_, b_);   \
	} while (0)

#define T_ASSERT_UINT(a, op, b)                                                   \
	do {                                                                      \
		unsigned long long a_ = (unsigned long long)(a),                  \
				   b_ = (unsigned long long)(b);                  \
		if (!(a_ op b_))                                                  \
			T_FAIL("%s %s %s (%llu vs %llu)", #a, #op, #b, a_, b_);   \
	} while (0)

#define T_ASSERT_STR(a, b)                                                        \
	do {                                                                      \
		const char *a_ = (a), *b_ = (b);                                  \
		if (!a_ || !b_ || strcmp(a_, b_))                                 \
			T_FAIL("%s == %s (\"%s\" vs \"%s\")", #a, #b,             \
			       a_ ? a_ : "(null)", b_ ? b_ : "(null)");           \
	} while (0)

/* @hay contains @needle. */
#define T_ASSERT_CONTAINS(hay, needle)                                            \
	do {                                                                      \
		const char *h_ = (hay), *n_ = (needle);                           \
		if (!h_ || !strstr(h_, n_))                                       \
			T_FAIL("\"%s\" not found in:\n%s", n_, h_ ? h_ : "(null)");\
	} while (0)

/* Read a whole stream written with open_memstream() or a file. */
static inline char *t_slurp_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t r = fread(buf + n, 1, 4096, f);
		n += r;
		if (r == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	return buf;
}

#endif
