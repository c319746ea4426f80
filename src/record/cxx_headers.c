/*
 * cxx_headers.c - the C++ library's header code that a program carries
 * out of line: its functions' code ranges, skipped like lock wrappers
 * (stack.c) so that a lock call made in them is the program's caller's.
 *
 * The problem (issue 28).  libstdc++ makes its lock calls in its headers:
 * std::timed_mutex::try_lock_for() reaches pthread_mutex_clocklock() in
 * _M_clocklock() through the template _M_try_lock_until<steady_clock>,
 * std::condition_variable::wait_for() and wait_until() reach
 * pthread_cond_clockwait() through __wait_until_impl<>, and future::get()
 * of a std::async joins in _Async_state_commonV2::_M_complete_async(), a
 * virtual function.  Where GCC inlines them (-O1, hot code at -O2) the
 * return address lies in the program's function and the report names it
 * from the debug info.  Where it does not - -O2 in main() or cold code,
 * -O0 everywhere, and a virtual function always - the return address
 * lies in the one out-of-line copy of the template that every caller
 * shares: try_lock_for() and try_lock_until() were one row at
 * "_M_clocklock mutex:272", std::async's join "__gthread_once
 * gthr-default.h:700".
 *
 * Design.  At start-up (sp_stack_init()), when a C++ runtime (libstdc++,
 * libc++) is loaded, the .symtab of the program and of every loaded
 * object but the runtime libraries (the file read with mmap, as locklib.c
 * reads string tables) is walked once for such copies: functions in
 * namespace std or __gnu_cxx (mangled "_ZNSt", "_ZNKSt", "_ZSt",
 * "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx"; "_ZZNSt"... for their lambdas) and
 * gthr-default.h's and <shared_mutex>'s static helpers ("_ZL<n>__gthread_",
 * "_ZL<n>__glibcxx_"), whose mangled names say they lock, wait or join
 * ("lock", "wait", "join", "once", "async", ...: see `verbs`), and whose
 * name says that no code of the program can be inlined in them: every
 * name in the demangled name, its parameters left out, is in std:: or
 * __gnu_cxx:: or a built-in type, and no template argument is a pointer
 * or reference to a function or a lambda of the program's
 * ("std::__timed_mutex_impl<std::timed_mutex>::_M_try_lock_until<
 * std::chrono::duration<long, std::ratio<1l, 1000000000l> > >" is such a
 * copy; "std::thread::_State_impl<...{lambda()#1}...>::_M_run()",
 * "std::call_once<void (&)()>" and "std::unique_lock<Guarded>::lock()"
 * are not: the program's code may be inlined there, and a lock call in it
 * is the program's own).  Their ranges join the wrapper ranges; a call
 * whose return address lies in one takes the wrappers' slow path
 * (stack.c: no CFI row, so an unwind) to the first caller outside every
 * range, in the program's function, which the report names from the
 * debug info as before.  The compiled-in _pc entry points (probe.h) take
 * their sites past the same ranges: the waits in the entry point, with
 * sp_site_pc() as the preload's shims do; the calls with a fast path in
 * their general path, before an entry is made, so that their fast path
 * costs what it did (probe.h, SP_ENTRY_PC_RAW).
 *
 * Cost: at start-up, a few system calls and a walk of each object's
 * symbol table; the names are compared, and only those that pass (tens
 * in tests/cxx_waits.cpp) are demangled.  Measured (the walk alone,
 * repeated, shared 2-core VM, noisy): 0.25-0.4 ms for cxx_waits at -O2,
 * 1.4 ms at -O0 (276 copies), 0.2-0.4 ms for a C program's table (a C
 * program without a C++ runtime is not walked); libLLVM-15's .dynsym
 * would take 50 ms, which is why stripped objects are not walked.  On
 * the lock path, nothing for a call whose return address lies outside
 * those copies (sp_site_ok[], as before); an unwind per call that
 * returns into one (a few microseconds: the blocking calls of timed
 * waits and joins, or at -O0 every std::mutex), except where the shim
 * passes the caller's rbp (the preload) and the copy keeps a frame
 * pointer (all at -O0): stack.c steps up by its prologue's rule
 * (callgrind, std::mutex lock+unlock at -O0, preloaded: 588 instructions;
 * 18,900 with the unwind; compiled in, which unwinds: 19,100).
 *
 * Alternatives considered: naming a row by the frames kept for it at
 * report time merges every caller of the copy into the first one kept
 * (stack.c says the same of wrappers); deciding from the debug info
 * whether the code at a return address is all header code would be exact
 * (the report does it: symbolize.c), but needs libdw and a walk of the
 * DWARF of every candidate at start-up, or on the lock path; every
 * function of namespace std, without the name's test, would skip the
 * program's lambda that std::function, std::thread or std::for_each
 * inlined into their copies (its lock is the lambda's, at the lambda's
 * line); CFI rows for the copies (stack.c's --skip ranges) would spare
 * the unwind but load libdw at start-up in every C++ program.
 *
 * Limits: objects dlopen()ed after start-up are not walked, nor stripped
 * ones (no .symtab), nor any where no libstdc++.so or libc++.so is
 * loaded (-static-libstdc++); the copies are the last ranges added, and
 * what does not fit in SP_MAX_RANGES (4096 ranges in all, counted before
 * neighbours merge) is not skipped; no demangler, no copy (sp_demangle()
 * reaches libstdc++'s through a weak reference).  A copy that holds the
 * program's code is not skipped: where the lock call itself lies in such
 * a copy (a wait with a predicate, wait_for(lock, d, pred), whose copy
 * holds both the predicate and pthread_cond_clockwait), its row is named
 * in the header - one row per lambda, since each lambda has its copy
 * (GCC 12 -O2 keeps the wait in __wait_until_impl<>, a copy of the
 * library's, and such rows are the program's line).
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/demangle.h"
#include "record/record.h"

/* Words of a mangled name that say the function locks, waits or joins. */
static const char *const verbs[] = {
	"lock", "wait", "join", "once", "async", "future", "7jthread", "notify", "stop",
	"semaphore", "barrier", "latch", "gthread", "glibcxx", "invoke",
};

/* 1: in namespace std or __gnu_cxx; 2: a header's static helper. */
static int std_prefix(const char *s)
{
	/* _ZZ: a local entity (a lambda) of such a function */
	static const char *const prefixes[] = { "_ZNSt", "_ZNKSt", "_ZSt", "_ZN9__gnu_cxx",
						"_ZNK9__gnu_cxx", "_ZZNSt", "_ZZNKSt", "_ZZSt" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(s, prefixes[i], strlen(prefixes[i])))
			return 1;
	/* a header's static function: _ZL20__gthread_mutex_lockP15pthread_mutex_t */
	if (strncmp(s, "_ZL", 3))
		return 0;
	for (s += 3; *s >= '0' && *s <= '9'; s++)
		;
	return !strncmp(s, "__gthread_", 10) || !strncmp(s, "__glibcxx_", 10) ? 2 : 0;
}

/* Whether mangled @s (up to @n bytes: a clone's ".isra.0" left out) may
 * be a copy: a std name and a verb (1), or a header's static helper (2:
 * no template, its name says what it is). */
static int candidate(const char *s, size_t n)
{
	int prefix = std_prefix(s);

	if (prefix != 1)
		return prefix;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(*verbs); i++) {
		const char *v = memmem(s, n, verbs[i], strlen(verbs[i]));

		if (v)
			return 1;
	}
	return 0;
}

/* Whether mangled @s (@n bytes) holds an entity local to a function
 * outside the library - "ZL9async_getvEUlvE_", "Z4mainEUlvE_": a lambda
 * of the program's - which rules it out before the demangler is asked
 * (the library's own local entities are "ZNSt...", "ZSt..."). */
static int program_local(const char *s, size_t n)
{
	for (size_t i = 2; i + 2 < n; i++)
		if (s[i] == 'Z' && ((s[i + 1] >= '0' && s[i + 1] <= '9') ||
				    (s[i + 1] == 'L' && s[i + 2] >= '0' && s[i + 2] <= '9')))
			return 1;
	return 0;
}

/* The end of the demangled name @d without its parameter list: the last
 * balanced "(...)" at the end, after qualifiers (" const", "&"). */
static size_t without_params(const char *d)
{
	size_t n = strlen(d);
	int depth = 0;

	while (n && d[n - 1] != ')')
		n--;
	while (n) {
		char c = d[--n];

		if (c == ')')
			depth++;
		else if (c == '(' && !--depth)
			return n;
	}
	return strlen(d); /* no parameter list (a data symbol's name) */
}

static int allowed_word(const char *w, size_t n)
{
	static const char *const words[] = {
		"std", "__gnu_cxx", "void", "bool", "char", "wchar_t", "char8_t", "char16_t",
		"char32_t", "short", "int", "long", "signed", "unsigned", "float", "double",
		"__int128", "const", "volatile", "true", "false", "operator",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (strlen(words[i]) == n && !memcmp(w, words[i], n))
			return 1;
	return 0;
}

static int word_char(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The end of the "{...}" or "(...)" that opens at @d[i], balanced; @n
 * when it does not close. */
static size_t closing(const char *d, size_t i, size_t n)
{
	int depth = 0;

	for (; i < n; i++) {
		if (d[i] == '{' || d[i] == '(')
			depth++;
		else if ((d[i] == '}' || d[i] == ')') && !--depth)
			return i + 1;
	}
	return n;
}

/*
 * Whether the demangled @d (its first @n bytes) names only the library's
 * code: every word that does not follow "::" is std, __gnu_cxx, a
 * built-in type or a number; no pointer or reference to a function is in
 * it ("(*)", "(&)": the program's function may be inlined through it),
 * but a pointer to a member of the library's class may be ("void
 * (std::thread::*)()": std::call_once's of thread::join); no unnamed
 * type or anonymous namespace, and no lambda but the library's own (one
 * that follows "::" inside a name checked so far: call_once's
 * "...::{lambda()#1}").
 */
static int library_only(const char *d, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t start = i;

		if (d[i] == '(' && (d[i + 1] == '*' || d[i + 1] == '&' || d[i + 1] == 'a'))
			return 0; /* (*), (&), (&&), (anonymous namespace) */
		if (d[i] == '{') {
			if (strncmp(d + i, "{lambda(", 8) || i < 2 || d[i - 1] != ':')
				return 0;
			i = closing(d, i, n);
			continue;
		}
		if (!word_char(d[i])) {
			i++;
			continue;
		}
		while (i < n && word_char(d[i]))
			i++;
		if (d[start] >= '0' && d[start] <= '9')
			continue; /* a number: 1000000000l */
		if (start && d[start - 1] == '~')
			start--; /* a destructor's name */
		if (start >= 2 && d[start - 1] == ':' && d[start - 2] == ':')
			continue; /* qualified: its first name was checked */
		if (!allowed_word(d + start, i - start))
			return 0;
	}
	return 1;
}

/* Whether mangled @s, a function symbol, is an out-of-line copy of the
 * library's header code (the file's design block).  Allocates. */
static int header_copy(const char *s)
{
	size_t n = strcspn(s, "."); /* _Z...E.isra.0: the clone's suffix */
	char raw[1024], *d;
	int yes, c;

	if (n >= sizeof(raw) || !(c = candidate(s, n)))
		return 0;
	if (c == 2)
		return 1;
	if (program_local(s, n))
		return 0;
	memcpy(raw, s, n);
	raw[n] = 0;
	d = sp_demangle(raw);
	if (!d)
		return 0;
	yes = library_only(d, without_params(d));
	free(d);
	return yes;
}

/* The runtime's own libraries: skipped whole already, or never callers. */
static int runtime_object(const char *path)
{
	static const char *const libs[] = { "libc.so", "libstdc++.so", "ld-linux", "libsyncprof",
					    "libdw", "libelf", "libgcc_s", "libm.so",
					    "libpthread.so", "linux-vdso" };
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	for (size_t i = 0; i < sizeof(libs) / sizeof(*libs); i++)
		if (!strncmp(b, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}

/* The symbol table of the ELF file mapped at @m (@size bytes), .symtab: 0
 * and its strings, or -1 (a stripped file: its .dynsym is not walked, a
 * large C++ library's would cost 50 ms: libLLVM-15's 45,000 symbols). */
static int symbols(const unsigned char *m, size_t size, const Elf64_Sym **syms, size_t *n_syms,
		   const char **str, size_t *n_str)
{
	const Elf64_Ehdr *eh = (const void *)m;
	const Elf64_Shdr *sh, *best = NULL;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !eh->e_shnum || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
		return -1;
	sh = (const void *)(m + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			best = &sh[i];
	if (!best || best->sh_link >= eh->e_shnum || best->sh_entsize != sizeof(Elf64_Sym))
		return -1;
	if (best->sh_offset + best->sh_size > size || sh[best->sh_link].sh_offset +
	    sh[best->sh_link].sh_size > size)
		return -1;
	*syms = (const void *)(m + best->sh_offset);
	*n_syms = best->sh_size / sizeof(Elf64_Sym);
	*str = (const char *)m + sh[best->sh_link].sh_offset;
	*n_str = sh[best->sh_link].sh_size;
	return 0;
}

struct walk {
	void (*add)(uintptr_t lo, uintptr_t hi);
	unsigned added;
};

static void walk_file(const char *path, uintptr_t bias, struct walk *w)
{
	const Elf64_Sym *syms;
	const char *str;
	size_t n_syms, n_str;
	const unsigned char *m;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
		close(fd);
		return;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return;
	if (!symbols(m, (size_t)st.st_size, &syms, &n_syms, &str, &n_str)) {
		for (size_t i = 1; i < n_syms; i++) {
			const Elf64_Sym *s = &syms[i];

			if (ELF64_ST_TYPE(s->st_info) != STT_FUNC || !s->st_size ||
			    s->st_shndx == SHN_UNDEF || s->st_name >= n_str ||
			    !memchr(str + s->st_name, 0, n_str - s->st_name))
				continue;
			if (header_copy(str + s->st_name)) {
				w->add(bias + s->st_value, bias + s->st_value + s->st_size);
				w->added++;
			}
		}
	}
	munmap((void *)m, (size_t)st.st_size);
}

static int walk_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name;

	(void)size;
	if (!name || !*name)
		name = "/proc/self/exe"; /* the program */
	else if (name[0] != '/' || runtime_object(name))
		return 0;
	walk_file(name, info->dlpi_addr, arg);
	return 0;
}

static int cxx_runtime(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *b = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size, (void)arg;
	b = b ? b + 1 : "";
	return !strncmp(b, "libstdc++.so", 12) || !strncmp(b, "libc++.so", 9);
}

unsigned sp_cxx_header_ranges(void (*add)(uintptr_t lo, uintptr_t hi))
{
	struct walk w = { add, 0 };

	/* No C++ runtime loaded, no C++ code: a C program pays nothing */
	if (dl_iterate_phdr(cxx_runtime, NULL))
		dl_iterate_phdr(walk_object, &w);
	return w.added;
}
