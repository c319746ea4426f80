/*
 * demangle.h - a symbol name as its language writes it (demangle.c).
 * Private to libsyncprof and the offline readers: the symbolizer
 * (report/symbolize.c) names frames with it, the stack code
 * (record/stack.c) matches skip= patterns against it.
 */
#ifndef SP_BASE_DEMANGLE_H
#define SP_BASE_DEMANGLE_H

/*
 * sp_demangle() - @raw demangled: C++ (Itanium ABI, "_Z..."), Rust legacy
 * ("_ZN...17h<hash>E", the hash dropped) and Rust v0 ("_R...").
 * Return: a malloc'd string the caller frees, or NULL when @raw is not
 * mangled, is not understood, or no demangler is linked (libsyncprof.a
 * in a program that links neither libstdc++ nor libiberty).  Allocates:
 * never call it on a lock path.  Thread-safe (no state).
 */
char *sp_demangle(const char *raw);

/*
 * sp_demangle_no_params() - a C++ @raw demangled without the function's
 * parameter list ("util::Locker::acquire"), for patterns anchored with
 * '$'.  NULL as sp_demangle(), and without libiberty.
 */
char *sp_demangle_no_params(const char *raw);

/* 1 when @raw looks mangled (a demangler would be asked). */
static inline int sp_mangled(const char *raw)
{
	return raw && raw[0] == '_' && (raw[1] == 'Z' || raw[1] == 'R');
}

#endif /* SP_BASE_DEMANGLE_H */
