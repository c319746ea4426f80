/*
 * demangle.c - symbol names as the language writes them: C++
 * ("shop::Store<std::__cxx11::basic_string<...>, long>::put(long)",
 * lambdas as "...::{lambda()#1}::operator()() const") and Rust, legacy
 * and v0 ("std::thread::Thread::join").
 *
 * Design.  Two maintained demanglers, both reached through weak
 * references, so that libsyncprof.a still links with libc alone:
 *   - binutils' libiberty (Debian: libiberty-dev, a static PIC archive):
 *     rust_demangle() for Rust legacy and v0, cplus_demangle_v3() for
 *     C++ (the same cp-demangle.c that libstdc++'s __cxa_demangle is
 *     built from).  libsyncprof.so, the preload library and the CLI link
 *     the two objects in (67 KB of text, with LINKER:--undefined to pull
 *     them from the archive and --exclude-libs to keep them out of the
 *     dynamic symbol table: a host program that has its own libiberty
 *     keeps it);
 *   - libstdc++'s __cxa_demangle, the C++ fallback where libiberty is not
 *     linked: libsyncprof.a in a C++ program demangles C++ through the
 *     program's own libstdc++.
 * Rust is tried first, because a legacy Rust name is also a valid C++
 * name (it would read "rs::raw_bump::h0123456789abcdef").  Options are
 * those of c++filt without -v: parameters and qualifiers kept (two
 * overloads or two lambdas stay two names), the Rust hash dropped.
 *
 * Invariants: no state; allocates (the demanglers malloc): report and
 * start-up paths only, never a lock path.
 *
 * Alternatives considered: Debian's librust-rustc-demangle-dev is Rust
 * source for cargo, not a C library (a C wrapper would need cargo at
 * build time and a Rust toolchain on every machine); __cxa_demangle alone
 * leaves Rust mangled (v0 names are not C++ at all); writing our own
 * demangler (the Itanium grammar alone is thousands of lines that
 * binutils and GCC maintain); calling c++filt (a process per report and
 * output parsing, and it is absent where binutils is not installed).
 * Measured: demangling the 4,494 exported functions of libstdc++.so.6
 * (4,451 of them mangled) takes 8.1 ms, 1.8 us each (-O2, mean of 5
 * passes), paid once per distinct printed name in a report, or once per
 * function symbol at start-up when skip= regexes are given.
 */
#include <stddef.h>
#include <stdlib.h>

#include "base/demangle.h"

/* libiberty's entry points (demangle.h) and the C++ ABI's, weak. */
#define DMGL_PARAMS (1 << 0)
#define DMGL_ANSI (1 << 1)
char *rust_demangle(const char *mangled, int options) __attribute__((weak));
char *cplus_demangle_v3(const char *mangled, int options) __attribute__((weak));
char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status)
	__attribute__((weak));

char *sp_demangle(const char *raw)
{
	char *out = NULL;
	int status = 0;

	if (!sp_mangled(raw))
		return NULL;
	if (rust_demangle)
		out = rust_demangle(raw, DMGL_PARAMS | DMGL_ANSI);
	if (!out && raw[1] == 'Z') {
		if (cplus_demangle_v3)
			out = cplus_demangle_v3(raw, DMGL_PARAMS | DMGL_ANSI);
		else if (__cxa_demangle)
			out = __cxa_demangle(raw, NULL, NULL, &status);
	}
	return status ? NULL : out;
}

char *sp_demangle_no_params(const char *raw)
{
	if (!sp_mangled(raw) || raw[1] != 'Z' || !cplus_demangle_v3)
		return NULL;
	return cplus_demangle_v3(raw, 0);
}
