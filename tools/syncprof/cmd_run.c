/*
 * cmd_run.c - 'syncprof run [OPTIONS] -- PROGRAM [ARGS...]': profile an
 * unmodified program through libsyncprof-preload.so.
 *
 * Design: run does no profiling itself.  It turns its options into
 * SYNCPROF_OPTIONS keys (each option has exactly one twin key, so the
 * preload works the same with LD_PRELOAD alone), appends them to any
 * SYNCPROF_OPTIONS already in the environment (later keys win), puts the
 * preload library first in LD_PRELOAD (keeping the user's entries, e.g. a
 * malloc replacement), and execs the program in a child.  The program
 * keeps our stdin/stdout/stderr.  The report at exit is the program's,
 * shaped there with its options, but named and rendered here: the program
 * hands its profile over unnamed, and run names its call sites from the
 * files after the program is gone, so that the program never reads debug
 * information (run_report.c; --symbolize inprocess: the program does it
 * all).  run waits and exits with the
 * program's status, and when the program is killed by a signal, run says
 * so and kills itself with the same signal (below).
 *
 * Signals.  run must not die and leave the program running, reparented to
 * init, when it is the one a service manager, a shell script or a test
 * harness signals.  So SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1 and
 * SIGUSR2 are blocked before the vfork and SIGCHLD gets its default action
 * (it may be inherited ignored, which reaps children unseen); the child
 * restores both before exec.  run waits in sigwaitinfo() for those signals
 * and SIGCHLD: no handler, no EINTR from our own signals, no pid race (the
 * program is reaped only by the loop that kills it, so its pid cannot be
 * reused under kill()).  Threads the library
 * may start in this process block every signal (control.c), so the main
 * thread is the only one to take them.  Not every signal is passed on:
 *   - one sent by a process (si_code <= 0: kill, sigqueue, tgkill) is,
 *     unless the program sent it (to run, or to the group they share);
 *   - one sent by the kernel is the terminal's ^C, ^\ or hang-up, sent to
 *     the whole foreground process group: the program got its own, so it is
 *     passed on only when the program left run's process group, or for a
 *     hang-up when run leads the session (that goes to the leader alone);
 *   - a signal ignored when run started (nohup, a script's background job)
 *     stays ignored by run and by the program, as a shell leaves it.
 * A kill(1) of the whole process group (kill -TERM -PGID, a job-control
 * shell's kill %1) reaches the program twice, once from the kernel and
 * once from run: siginfo cannot tell it from a kill of run alone.
 *
 * Stopped (SIGTERM, SIGHUP, SIGINT to run): before passing the signal on,
 * run fetches the program's profile over its control socket
 * (run_report_interrupt()), so that a program that dies of the signal
 * still gets its report, marked "interrupted"; the program's own handlers
 * and status are untouched.  The child sets PR_SET_PDEATHSIG (SIGKILL)
 * and checks that run is still its parent, so a SIGKILL of run, which
 * cannot be passed on, does not leave the program running.  Limit: the
 * terminal's ^C reaches the program at the same time as run; a program
 * without a SIGINT handler is then usually gone before run asks, and one
 * line says no profile could be had.
 *
 * Exit status: the program's exit status; 126 and 127 when it is not
 * executable or not found, as a shell says.  Killed by signal N, run resets
 * N to its default action and raises it, so its own caller sees a death by
 * N (a shell's 128 + N, make's "Terminated", a script's ^C abort); core
 * dumps are switched off first, since a core of run would only overwrite
 * (core_pattern "core") or bury the program's.  128 + N is returned only
 * when N cannot be re-raised (glibc's internal signals).
 *
 * Options are one table (run_options[]): long name, short name, argument,
 * the SYNCPROF_OPTIONS key, a value check and the help line.  Later
 * features (--trace FILE, control options) add a row.
 *
 * The preload library is found, in order: $SYNCPROF_PRELOAD; relative to
 * this executable (its own directory: the build tree; ../lib, ../lib64,
 * ../lib/x86_64-linux-gnu: an install under any prefix, a .deb under /usr);
 * the libdir fixed at build time (SYNCPROF_INSTALL_LIBDIR); the build tree
 * (SYNCPROF_BUILD_DIR).  The executable's own tree comes first, so that a
 * packaged /usr/bin/syncprof loads /usr/lib's library, never another
 * version left in /usr/local/lib.
 *
 * Alternatives considered: ptrace or a launcher that injects the library
 * (needless for dynamically linked programs and slower); passing options
 * through separate environment variables (two ways to say one thing);
 * handlers that kill() from the signal handler (async-signal-safe, but the
 * pid may be reaped and reused between a waitpid() and the handler, and
 * every blocking call needs an EINTR loop); exec'ing the program in run's
 * place (no process left to reap it or report a death by signal); putting
 * the program in its own process group to avoid double deliveries (it
 * would lose the terminal: reads get SIGTTIN, ^C no longer reaches it).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include "base/base.h"
#include "cli.h"
#include "read/options.h"
#include "run_report.h"
#include "syncprof.h"

#ifndef SYNCPROF_INSTALL_LIBDIR
#define SYNCPROF_INSTALL_LIBDIR ""
#endif
#ifndef SYNCPROF_BUILD_DIR
#define SYNCPROF_BUILD_DIR ""
#endif

#define PRELOAD_NAME "libsyncprof-preload.so"

/* ---- the option table ---------------------------------------------------------- */

enum arg_kind { ARG_NONE, ARG_VALUE };

struct run_option {
	const char *long_name;  /* without "--" */
	char short_name;        /* 0: none */
	enum arg_kind arg;
	const char *key;        /* SYNCPROF_OPTIONS twin */
	const char *fixed;      /* value for ARG_NONE options */
	const char *metavar;
	const char *help;
};

static const struct run_option run_options[] = {
	{ "output", 'o', ARG_VALUE, "output", NULL, "FILE",
	  "write the report to FILE instead of stderr; %p becomes the pid\n"
	  "(a forking program writes one report per process); written whole\n"
	  "or not at all: when writing fails, it goes to stderr" },
	{ "format", 'f', ARG_VALUE, "format", NULL, "FORMAT",
	  "report format: table (default), json (profile JSON version 1),\n"
	  "csv, folded (flame graphs; the lock type is the leaf), pprof\n"
	  "(binary: use with -o; with --hold it also has the holder side,\n"
	  "pprof -sample_index=holder_delay) or html (one self-contained page:\n"
	  "sortable table, flame graphs of waits and holds; use with -o)" },
	{ "columns", 0, ARG_VALUE, "columns", NULL, "LIST",
	  "table columns, comma-separated, in order (docs/formats.md);\n"
	  "e.g. site,wait,count,p99 (the twin quoted: columns='site,wait')" },
	{ "top", 'n', ARG_VALUE, "top", NULL, "N", "print the top N rows only (0: all)" },
	{ "sort", 's', ARG_VALUE, "sort", NULL, "KEY",
	  "sort by total (default), avg, max, count, contended or hold" },
	{ "no-coalesce", 0, ARG_NONE, "coalesce", "0", NULL,
	  "one row per lock object instead of one per call site" },
	{ "merged", 0, ARG_NONE, "merged", "1", NULL,
	  "table and html: one list of rows, lock contention and waits for an\n"
	  "event together (by default the locks come first, then the waits for\n"
	  "an event - condvar, semaphore, barrier, join - in their own section)" },
	{ "frames", 0, ARG_VALUE, "frames", NULL, "N",
	  "callers kept per contended call site, 0 to 16 (default 4)" },
	{ "skip", 0, ARG_VALUE, "skip", NULL, "REGEX",
	  "skip frames of functions matching REGEX (the program's lock\n"
	  "wrappers; .symtab or, stripped, .dynsym names), or code in\n"
	  "DSO+0xSTART-0xEND (offsets as reports print them), so the call\n"
	  "site is their caller; repeatable.\n"
	  "libc/libpthread/libstdc++ wrappers are always skipped, and\n"
	  "the program's own copies of libstdc++'s lock and wait templates" },
	{ "skip-frames", 0, ARG_VALUE, "skip_frames", NULL, "N",
	  "the call site is the Nth caller above each lock call, 0 to 8\n"
	  "(then wrappers are skipped); a call unwinds until the CFA rules\n"
	  "of its frames are learned in the background, then steps up by them" },
	{ "hold", 0, ARG_NONE, "hold", "1", NULL,
	  "also record hold times, owner changes and blame (which call\n"
	  "sites held the locks that others waited for); long and contended\n"
	  "holds are measured; of the short uncontended ones, a row's first\n"
	  "are all timed, then ever fewer, down to 1 in 64, and the rest\n"
	  "estimated from them (hold_sample=N in SYNCPROF_OPTIONS)" },
	{ "hold-clock", 0, ARG_VALUE, "hold_clock", NULL, "MODE",
	  "with --hold: how holds are timed - 'tick' (a ticker thread wakes\n"
	  "every 500 us; a hold reads the clock only when it saw it move, or\n"
	  "is sampled), 'clock' (every hold reads the clock; the ticker wakes\n"
	  "every 20 ms), or 'auto' (default: clock while fewer than 400,000\n"
	  "holds a second begin, tick above 800,000; docs/options.md)" },
	{ "hold-states", 0, ARG_VALUE, "hold_states", NULL, "MS",
	  "with --hold: what the holder of a hold longer than MS ms (default\n"
	  "1; 0 off) was doing - running, preempted, blocked in which system\n"
	  "call, waiting for another lock - sampled by the hold ticker every\n"
	  "ms (past 16 ms ever sparser, at most 20 ms apart), shown under\n"
	  "the row (docs/hold-states.md)" },
	{ "hold-where", 0, ARG_VALUE, "hold_where", NULL, "MODE",
	  "with --hold and --frames N (default 4): where in its own code the\n"
	  "holder of a long hold was, shown under the row - 'blocked' (default:\n"
	  "holders blocked in a system call or a page fault, unwound from\n"
	  "outside), 'all' (running holders too: a signal makes them unwind\n"
	  "themselves; a system call they enter at that instant may end with\n"
	  "EINTR), or 0 (docs/hold-states.md)" },
	{ "lock-order", 0, ARG_NONE, "lock_order", "1", NULL,
	  "check the order in which locks are taken inside others and report\n"
	  "its cycles: potential deadlocks, whether one happened or not" },
	{ "warn-wait", 0, ARG_VALUE, "warn_wait", NULL, "MS",
	  "warn while a thread has waited more than MS ms for a lock, naming\n"
	  "it, its site and the lock; with --hold or --deadlock, the holder and\n"
	  "the chain of holders that wait in turn; for a condition wait, the\n"
	  "sites that signalled it last; for a futex wait, with --hold, the\n"
	  "site that last woke a waiter of that futex" },
	{ "deadlock", 0, ARG_NONE, "deadlock", "1", NULL,
	  "report at once, on stderr, threads that wait for each other in a\n"
	  "cycle (a deadlock): each thread, the lock it waits for and where,\n"
	  "where it took the lock the next one waits for" },
	{ "symbolize", 0, ARG_VALUE, "symbolize", NULL, "WHERE",
	  "who names the call sites of the report at exit: offline (the\n"
	  "default: run, after the program exits, from the files the program\n"
	  "mapped; the program reads no debug information, which can add tens\n"
	  "of MB to its memory) or inprocess (the program, as the preload does\n"
	  "without run); the output is the same" },
	{ "no-glibc-locks", 0, ARG_NONE, "glibc_locks", "0", NULL,
	  "do not time waits on glibc's own locks (stdio FILE locks, malloc\n"
	  "arenas), which a jump patched into libc's lock slow path records\n"
	  "by default (docs/glibc-locks.md)" },
	{ "no-control", 0, ARG_NONE, "control", "0", NULL,
	  "do not listen on the control socket (syncprof ctl PID ...)" },
	{ "report-signal", 0, ARG_VALUE, "report_signal", NULL, "SIG",
	  "print a report each time the program gets SIG (USR1 or USR2);\n"
	  "by default syncprof installs no signal handler" },
	{ "trace", 0, ARG_VALUE, "trace", NULL, "FILE",
	  "also record lock events into the binary trace FILE (%p: the\n"
	  "pid): by default the waits, and the releases that let a waiter\n"
	  "through with their hold time (futex locks: the wakes that woke\n"
	  "one); read it with 'syncprof trace\n"
	  "dump|stats|export'; a write error (full disk) is warned about,\n"
	  "its losses counted" },
	{ "trace-events", 0, ARG_VALUE, "trace_events", NULL, "WHICH",
	  "contended (the default: what explains waiting) or all (every\n"
	  "acquisition, release and failed trylock)" },
	{ "trace-min-wait", 0, ARG_VALUE, "trace_min_wait", NULL, "DUR",
	  "with contended events, leave out waits (and holds released to\n"
	  "a waiter) shorter than DUR (default 1us: the thread never slept;\n"
	  "0 keeps them): N ns, or N with ns, us, ms or s" },
	{ "trace-buffer", 0, ARG_VALUE, "trace_buffer", NULL, "BYTES",
	  "per-thread trace buffer, 256 to 1073741824 (default 1048576);\n"
	  "when it is full, events are dropped and counted exactly" },
};

#define N_RUN_OPTIONS (sizeof(run_options) / sizeof(*run_options))

/*
 * The value of @o is checked by the parser of its SYNCPROF_OPTIONS twin
 * (src/read/options.c), the one that the program will run it through:
 * what run accepts, the program accepts, and the other way round.  The
 * value reaches the twin escaped (add_key()), so it may hold any
 * character, separators included.
 */
static int option_check(const struct run_option *o, const char *v)
{
	return sp_options_check(o->key, v);
}

static void usage(FILE *f)
{
	fputs("Usage: syncprof run [OPTIONS] -- PROGRAM [ARGS...]\n"
	      "\n"
	      "Run PROGRAM (dynamically linked, unmodified) with every pthread and C11\n"
	      "lock call profiled, and write the report when it exits.  PROGRAM keeps\n"
	      "stdin, stdout and stderr; run exits with PROGRAM's exit status.\n"
	      "Lock types: mutex, rec_mutex, condvar, rwlock_read, rwlock_write,\n"
	      "spinlock, semaphore, barrier, join; futex (waits through libc's\n"
	      "syscall(SYS_futex): Rust std, parking_lot, Abseil; docs/futex.md) and\n"
	      "glibc_lock (glibc's own locks; docs/glibc-locks.md).\n"
	      "\n"
	      "Options (each has a SYNCPROF_OPTIONS twin for use with LD_PRELOAD alone):\n",
	      f);
	for (size_t i = 0; i < N_RUN_OPTIONS; i++) {
		const struct run_option *o = &run_options[i];
		char head[64];
		const char *h = o->help;

		if (o->short_name)
			snprintf(head, sizeof(head), "-%c, --%s%s%s", o->short_name, o->long_name,
				 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		else
			snprintf(head, sizeof(head), "    --%s%s%s", o->long_name,
				 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		fprintf(f, "  %-25s ", head);
		while (*h) {
			size_t n = strcspn(h, "\n");

			fprintf(f, "%.*s\n", (int)n, h);
			h += n;
			if (*h == '\n') {
				h++;
				fprintf(f, "  %-25s ", "");
			}
		}
		fprintf(f, "  %-25s [%s=%s]\n", "", o->key, o->fixed ? o->fixed : o->metavar);
	}
	fputs("  -h, --help                this help\n"
	      "\n"
	      "Example:\n"
	      "  syncprof run --hold -n 10 -- pigz -p 4 -k big.tar\n"
	      "  syncprof run -f json -o prof.%p.json --skip '^possess$' -- ./server\n"
	      "Without syncprof run:\n"
	      "  LD_PRELOAD=/usr/local/lib/" PRELOAD_NAME " \\\n"
	      "    SYNCPROF_OPTIONS=hold=1,top=10 ./server\n"
	      "\n"
	      "Signals: TERM, HUP, INT, QUIT, USR1 and USR2 sent to run are passed on to\n"
	      "PROGRAM, so that a kill(1) of run reaches PROGRAM (SIGKILL cannot be\n"
	      "passed on).  Not passed on: the ^C, ^\\ and hang-up that the terminal\n"
	      "sends PROGRAM as well, and signals ignored when run started.\n"
	      "On TERM, HUP or INT, run first fetches PROGRAM's profile over its control\n"
	      "socket: a PROGRAM that then dies of the signal still gets its report,\n"
	      "which says \"interrupted by SIGTERM\" (as does the report of one whose own\n"
	      "handler makes it exit).  Killed with no profile to be had (SIGKILL), one\n"
	      "line says so and an earlier -o FILE is removed.  PROGRAM gets SIGKILL\n"
	      "when run itself is killed.\n"
	      "\n"
	      "Exit status: PROGRAM's.  When PROGRAM is killed by signal N, run kills\n"
	      "itself with N (a shell shows 128+N; run dumps no core of its own).\n"
	      "126: PROGRAM is not executable; 127: PROGRAM not found; 2: usage error;\n"
	      "1: other errors.\n"
	      "\n"
	      "Environment: SYNCPROF_PRELOAD overrides where " PRELOAD_NAME " is\n"
	      "looked for; SYNCPROF_OPTIONS already set is kept, options given here win.\n"
	      "TMPDIR: where run makes the private directory the program hands its\n"
	      "profile over in (default /dev/shm, else /tmp; when it cannot, the\n"
	      "program names its call sites itself).  SYNCPROF_RUN_RUSAGE=1: run prints PROGRAM's peak\n"
	      "RSS when it ends (for measurements).\n",
	      f);
}

/* ---- building SYNCPROF_OPTIONS ---------------------------------------------- */

struct strbuf {
	char *s;
	size_t n, cap;
};

static int sb_add(struct strbuf *b, const char *s)
{
	size_t len = strlen(s);

	if (b->n + len + 1 > b->cap) {
		size_t cap = (b->n + len + 1) * 2;
		char *p = realloc(b->s, cap);

		if (!p)
			return -ENOMEM;
		b->s = p;
		b->cap = cap;
	}
	memcpy(b->s + b->n, s, len + 1);
	b->n += len;
	return 0;
}

/* Append ",key=value" with every separator, quote and backslash of
 * @value escaped by a backslash (SYNCPROF_OPTIONS' escaping, options.c). */
static int add_key(struct strbuf *b, const char *key, const char *value)
{
	char c[3] = { '\\', 0, 0 };

	if (b->n && sb_add(b, ","))
		return -ENOMEM;
	if (sb_add(b, key) || sb_add(b, "="))
		return -ENOMEM;
	for (; *value; value++) {
		c[1] = *value;
		if (sb_add(b, strchr(",: \t\n\r'\"\\", *value) ? c : c + 1))
			return -ENOMEM;
	}
	return 0;
}

/* Apply one option; 0, or 2 after printing a usage error. */
/*
 * The words of an option's description (options.c) that are values of it,
 * ", "-separated into @buf: "offline, inprocess".  Only for options whose
 * values are words; a number among them (a range, "0 to 16") says nothing
 * of the values between: none then.  Read by the error of a bad value and
 * by the bash completion.
 */
static int valid_words(const struct run_option *o, char *buf, size_t size)
{
	const char *d = sp_options_describe(o->key);
	size_t len = 0;
	int n = 0;

	buf[0] = '\0';
	while (d && *d) {
		char w[32];
		size_t k = 0;

		while (*d && !((*d >= 'a' && *d <= 'z') || (*d >= 'A' && *d <= 'Z') ||
			       (*d >= '0' && *d <= '9') || *d == '_'))
			d++;
		while (*d && ((*d >= 'a' && *d <= 'z') || (*d >= 'A' && *d <= 'Z') ||
			      (*d >= '0' && *d <= '9') || *d == '_')) {
			if (k + 1 < sizeof(w))
				w[k++] = *d;
			d++;
		}
		w[k] = '\0';
		if (!k || option_check(o, w) || strstr(buf, w))
			continue;
		if (w[0] >= '0' && w[0] <= '9')
			return 0;
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s",
					n++ ? ", " : "", w);
	}
	return n > 0 && len < size;
}

static int apply_option(const struct run_option *o, const char *value, struct strbuf *env)
{
	const char *v = o->arg == ARG_NONE ? o->fixed : value;

	if (o->arg == ARG_VALUE && !value) {
		cli_error("run", "option --%s needs a value (%s); see 'syncprof run --help'",
			  o->long_name, o->metavar);
		return 2;
	}
	if (option_check(o, v)) {
		char valid[256];

		if (valid_words(o, valid, sizeof(valid)))
			cli_error("run", "bad value '%s' for --%s (valid: %s); see 'syncprof run "
					 "--help'",
				  v, o->long_name, valid);
		else
			cli_error("run", "bad value '%s' for --%s; see 'syncprof run --help'", v,
				  o->long_name);
		return 2;
	}
	if (add_key(env, o->key, v)) {
		cli_error("run", "out of memory");
		return 1;
	}
	return 0;
}

static const struct run_option *find_long(const char *name, size_t len)
{
	for (size_t i = 0; i < N_RUN_OPTIONS; i++)
		if (strlen(run_options[i].long_name) == len &&
		    !strncmp(run_options[i].long_name, name, len))
			return &run_options[i];
	return NULL;
}

static const struct run_option *find_short(char c)
{
	for (size_t i = 0; i < N_RUN_OPTIONS; i++)
		if (run_options[i].short_name == c)
			return &run_options[i];
	return NULL;
}

/*
 * Parse argv[1..]; on success *prog is the index of PROGRAM.  Returns 0,
 * or the exit status to use (help: 0 with *prog = -1).
 */
static int parse_args(int argc, char **argv, struct strbuf *env, int *prog)
{
	int i;

	*prog = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct run_option *o;
		const char *value = NULL;
		int rc;

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (a[0] != '-' || !a[1])
			break; /* PROGRAM without "--" */
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');

			o = find_long(a + 2, eq ? (size_t)(eq - a - 2) : strlen(a + 2));
			if (o && eq) {
				if (o->arg == ARG_NONE) {
					cli_error("run", "option --%s takes no value", o->long_name);
					return 2;
				}
				value = eq + 1;
			}
		} else {
			o = a[2] ? NULL : find_short(a[1]);
			if (!o && a[2] && find_short(a[1]) && find_short(a[1])->arg == ARG_VALUE) {
				o = find_short(a[1]); /* -n10 */
				value = a + 2;
			}
		}
		if (!o) {
			cli_error("run", "unknown option '%s'; see 'syncprof run --help'", a);
			return 2;
		}
		if (o->arg == ARG_VALUE && !value)
			value = i + 1 < argc ? argv[++i] : NULL;
		rc = apply_option(o, value, env);
		if (rc)
			return rc;
	}
	if (i >= argc) {
		cli_error("run", "no program given: syncprof run [OPTIONS] -- PROGRAM [ARGS...]");
		return 2;
	}
	*prog = i;
	return 0;
}

/* ---- finding things ------------------------------------------------------------ */

static int is_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode);
}

char *cli_find_preload(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX - 64];
	const char *env = getenv("SYNCPROF_PRELOAD");
	ssize_t n;
	char *slash;

	if (env && *env)
		return is_file(env) ? strcpy(path, env) : NULL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			static const char *const rel[] = { "", "/../lib", "/../lib64",
							   "/../lib/x86_64-linux-gnu" };

			for (size_t i = 0; i < sizeof(rel) / sizeof(*rel); i++) {
				snprintf(path, sizeof(path), "%s%s/%s", exe, rel[i], PRELOAD_NAME);
				if (is_file(path))
					return path;
			}
		}
	}
	/* The prefix fixed at build time: a copy of this executable moved
	 * away from its libraries. */
	if (*SYNCPROF_INSTALL_LIBDIR) {
		snprintf(path, sizeof(path), "%s/%s", SYNCPROF_INSTALL_LIBDIR, PRELOAD_NAME);
		if (is_file(path))
			return path;
	}
	if (*SYNCPROF_BUILD_DIR) {
		snprintf(path, sizeof(path), "%s/%s", SYNCPROF_BUILD_DIR, PRELOAD_NAME);
		if (is_file(path))
			return path;
	}
	return NULL;
}

/* 0 if @prog can be executed (searched in PATH when it has no '/'). */
static int check_program(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];
	struct stat st;
	int found = 0;

	if (strchr(prog, '/')) {
		if (stat(prog, &st)) {
			cli_error("run", "%s: %s", prog, strerror(errno));
			return 127;
		}
		if (!S_ISREG(st.st_mode) || access(prog, X_OK)) {
			cli_error("run", "%s: not an executable file", prog);
			return 126;
		}
		return 0;
	}
	for (const char *p = path ? path : "/usr/bin:/bin"; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
		size_t len = strcspn(p, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(len ? len : 1), len ? p : ".", prog);
		if (!stat(buf, &st) && S_ISREG(st.st_mode)) {
			found = 1;
			if (!access(buf, X_OK))
				return 0;
		}
	}
	cli_error("run", found ? "%s: not an executable file" : "%s: command not found in PATH",
		  prog);
	return found ? 126 : 127;
}

/*
 * A statically linked ELF program (no PT_INTERP) cannot be interposed: say
 * so, and still run it.  Nor can a 32-bit one (or one for another
 * machine): the preload library is x86-64, and ld.so would only print
 * "wrong ELF class" and go on without it.  Scripts and anything
 * unreadable are left alone.
 */
static void warn_if_static(const char *prog)
{
	char path[PATH_MAX];
	const char *file = prog;
	unsigned machine = 0;

	if (!strchr(prog, '/')) {
		const char *p = getenv("PATH");

		file = NULL;
		for (; p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL) {
			size_t len = strcspn(p, ":");

			snprintf(path, sizeof(path), "%.*s/%s", (int)(len ? len : 1), len ? p : ".",
				 prog);
			if (!access(path, X_OK)) {
				file = path;
				break;
			}
		}
		if (!file)
			return;
	}
	switch (sp_elf_kind(file, &machine)) {
	case SP_ELF_32BIT:
		cli_error("run", "warning: %s is a 32-bit program: the preload library is 64-bit, "
				 "so its lock calls cannot be interposed (syncprof profiles x86-64 "
				 "programs; it runs on without a report)",
			  prog);
		break;
	case SP_ELF_MACHINE:
		cli_error("run", "warning: %s is built for another machine (ELF machine %u): "
				 "its lock calls cannot be interposed", prog, machine);
		break;
	case SP_ELF_STATIC:
		cli_error("run", "warning: %s is statically linked: its lock calls cannot be "
				 "interposed (build it with -include syncprof/instrument.h)",
			  prog);
		break;
	default:
		break;
	}
}

/* ---- signals -------------------------------------------------------------- */

/* What run passes on to the program (the design block says which). */
static const int forwarded_signals[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2 };

struct run_signals {
	sigset_t wait;              /* forwarded signals not ignored at start, and SIGCHLD */
	sigset_t old_mask;          /* restored in the child before exec */
	struct sigaction old_chld;  /* ditto */
};

/*
 * Block the signals run waits for, and make sure a child's exit raises
 * SIGCHLD and leaves a zombie (SIGCHLD may be inherited as SIG_IGN, which
 * reaps children automatically).  Call before vfork(); undo with
 * signals_restore().  Returns 0 or a negative errno.
 */
static int signals_block(struct run_signals *s)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, cur;

	sigemptyset(&s->wait);
	sigaddset(&s->wait, SIGCHLD);
	for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(*forwarded_signals); i++)
		if (!sigaction(forwarded_signals[i], NULL, &cur) && cur.sa_handler != SIG_IGN)
			sigaddset(&s->wait, forwarded_signals[i]);
	if (sigaction(SIGCHLD, &dfl, &s->old_chld))
		return -errno;
	if (sigprocmask(SIG_BLOCK, &s->wait, &s->old_mask)) {
		int err = -errno;

		sigaction(SIGCHLD, &s->old_chld, NULL);
		return err;
	}
	return 0;
}

/* Async-signal-safe: called in the child between vfork() and exec. */
static void signals_restore(const struct run_signals *s)
{
	sigaction(SIGCHLD, &s->old_chld, NULL);
	sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
}

/* 1 when @si, taken by run, is to be passed on to the program @pid because
 * the program did not get it too (the rules are in the design block). */
static int should_forward(const siginfo_t *si, pid_t pid)
{
	if (si->si_code <= 0) /* from a process: kill(), sigqueue(), tgkill() */
		return si->si_pid != pid;
	switch (si->si_signo) {
	case SIGINT:
	case SIGQUIT:
	case SIGHUP:
		/* The terminal's, sent to the foreground process group. */
		if (getpgid(pid) != getpgrp())
			return 1;
		return si->si_signo == SIGHUP && getsid(0) == getpid();
	default:
		return 1;
	}
}

/*
 * Wait for @pid to end, passing the signals in @s on to it.  Returns 0 with
 * *status and *ru (its resource usage) set, or a negative errno.
 */
static int wait_forwarding(pid_t pid, const struct run_signals *s, int *status,
			   struct rusage *ru, struct run_report *rr)
{
	siginfo_t si;

	for (;;) {
		pid_t r = wait4(pid, status, WNOHANG, ru);
		int sig;

		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		/* SIGCHLD stays pending if the program ended since waitpid(). */
		sig = sigwaitinfo(&s->wait, &si);
		if (sig < 0 && errno == EINTR)
			continue; /* run was stopped and continued */
		if (sig < 0)
			return -errno;
		/* Not reaped yet, so @pid is still the program (a zombie at
		 * worst), never a process that reused its pid. */
		/* A stop: the profile first, while the program is alive (the
		 * terminal's ^C reached it too: it may have a handler). */
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			run_report_interrupt(rr, (int)pid, sig);
		if (sig != SIGCHLD && should_forward(&si, pid))
			kill(pid, sig);
	}
}

/*
 * End run as the program ended: killed by @sig.  Does not return unless
 * @sig cannot be raised; returns 128 + @sig then.
 */
static int die_of(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct rlimit no_core = { 0, 0 };
	sigset_t one;

	/* No core of run: it would overwrite or hide the program's. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	setrlimit(RLIMIT_CORE, &no_core);
	if (sig != SIGKILL && sigaction(sig, &dfl, NULL))
		return 128 + sig; /* glibc keeps its own (SIGCANCEL, SIGSETXID) */
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
	return 128 + sig;
}

/* ---- running ------------------------------------------------------------------ */

static int setup_env(const char *preload, struct strbuf *opts, struct run_report *rr)
{
	const char *old_pre = getenv("LD_PRELOAD");
	const char *old_opts = getenv("SYNCPROF_OPTIONS");
	struct strbuf pre = { 0 }, all = { 0 }, role = { 0 };
	int rc = 0;

	if (sb_add(&pre, preload) || (old_pre && *old_pre && (sb_add(&pre, ":") ||
							       sb_add(&pre, old_pre))))
		rc = -ENOMEM;
	/* enabled=1 first: the user's SYNCPROF_OPTIONS may still say 0. */
	if (!rc && (sb_add(&all, "enabled=1") ||
		    (old_opts && *old_opts && (sb_add(&all, ",") || sb_add(&all, old_opts))) ||
		    (opts->n && (sb_add(&all, ",") || sb_add(&all, opts->s)))))
		rc = -ENOMEM;
	/* The program reports even when it locked nothing; the processes it
	 * starts only when they did (lifecycle.c).  root:DIR: it hands its
	 * report over to us in DIR (run_report.c). */
	if (!rc)
		run_report_prepare(rr, all.s);
	if (!rc && rr->dir[0]) {
		/* root:DEV:INO:DIR - DEV:INO is our stderr, where the reports of
		 * processes that write to it too are written (lifecycle.c) */
		struct stat st;
		char id[64];

		if (fstat(2, &st))
			memset(&st, 0, sizeof(st));
		snprintf(id, sizeof(id), "root:%llu:%llu:", (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
		if (sb_add(&role, id) || sb_add(&role, rr->dir))
			rc = -ENOMEM;
	} else if (!rc && sb_add(&role, "root")) {
		rc = -ENOMEM;
	}
	if (!rc && (setenv("LD_PRELOAD", pre.s, 1) || setenv("SYNCPROF_OPTIONS", all.s, 1) ||
		    setenv("SYNCPROF_RUN", role.s, 1)))
		rc = -errno;
	free(pre.s);
	free(all.s);
	free(role.s);
	return rc;
}

static int run_child(char **argv, struct run_report *rr)
{
	const char *rusage_env = getenv("SYNCPROF_RUN_RUSAGE");
	struct rusage ru;
	struct run_signals sigs;
	int fds[2], err = 0, status, rc;
	pid_t pid, parent;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC)) {
		cli_error("run", "pipe: %s", strerror(errno));
		return 1;
	}
	parent = getpid();
	rc = signals_block(&sigs);
	if (rc) {
		cli_error("run", "cannot block signals: %s", strerror(-rc));
		close(fds[0]);
		close(fds[1]);
		return 1;
	}
	/* vfork(): the child borrows run's memory until its exec - no page
	 * tables copied, no copy-on-write fault in either process (issue 25:
	 * run -- /bin/true 14.1 -> 12.1 ms).  So the child below makes system
	 * calls only, never returns from this function, and of run's memory
	 * writes only `err` (and errno), which run reads again from the pipe. */
	pid = vfork();
	if (pid < 0) {
		cli_error("run", "vfork: %s", strerror(errno));
		signals_restore(&sigs);
		close(fds[0]);
		close(fds[1]);
		return 1;
	}
	if (pid == 0) {
		/* run killed (SIGKILL: nothing to pass on) kills the program too;
		 * run may have died before this line: then the program's parent
		 * is no longer run, and it stops here */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent)
			_exit(127);
		signals_restore(&sigs);
		close(fds[0]);
		execvp(argv[0], argv);
		err = errno;
		if (write(fds[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	/* Signals that come before the exec stay pending in run, and are
	 * passed on once it is done. */
	while ((n = read(fds[0], &err, sizeof(err))) < 0 && errno == EINTR)
		;
	close(fds[0]);
	rc = wait_forwarding(pid, &sigs, &status, &ru, rr);
	if (rc) {
		cli_error("run", "waiting for %s: %s", argv[0], strerror(-rc));
		return 1;
	}
	/* The program's report at exit, before what run says of its end, as
	 * when the program printed it itself. */
	rr->pid = (int)pid;
	rr->killed_by = WIFSIGNALED(status) && n != (ssize_t)sizeof(err) ? WTERMSIG(status) : 0;
	run_report_finish(rr);
	if (rusage_env && !strcmp(rusage_env, "1"))
		cli_error("run", "%s: peak RSS %ld kB", argv[0], ru.ru_maxrss);
	if (n == (ssize_t)sizeof(err)) {
		cli_error("run", "cannot execute %s: %s", argv[0], strerror(err));
		return err == ENOENT ? 127 : 126;
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		cli_error("run", "%s was killed by signal %d (%s)%s", argv[0], sig, strsignal(sig),
			  WCOREDUMP(status) ? ", core dumped" : "");
		return die_of(sig);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int cmd_run(int argc, char **argv)
{
	struct strbuf opts = { 0 };
	const char *preload;
	struct run_report rr = { 0 };
	int prog, rc;

	rc = parse_args(argc, argv, &opts, &prog);
	if (rc || prog < 0) {
		free(opts.s);
		return rc;
	}
	rc = check_program(argv[prog]);
	if (rc) {
		free(opts.s);
		return rc;
	}
	preload = cli_find_preload();
	if (!preload) {
		cli_error("run", "cannot find %s (looked in $SYNCPROF_PRELOAD, %s, next to this "
				 "program and in the build tree); set SYNCPROF_PRELOAD=/path/to/%s",
			  PRELOAD_NAME, *SYNCPROF_INSTALL_LIBDIR ? SYNCPROF_INSTALL_LIBDIR : "the "
			  "library directory", PRELOAD_NAME);
		free(opts.s);
		return 1;
	}
	warn_if_static(argv[prog]);
	rc = setup_env(preload, &opts, &rr);
	free(opts.s);
	if (rc) {
		cli_error("run", "cannot set up the environment: %s", strerror(-rc));
		run_report_finish(&rr);
		return 1;
	}
	/* pprof is gzip: bytes that would garble a terminal (the report goes
	 * to stderr without -o). */
	if (rr.parsed && rr.opts.report.format == SYNCPROF_FORMAT_PPROF && !rr.opts.output &&
	    isatty(STDERR_FILENO)) {
		cli_error("run", "-f pprof writes gzip-compressed protobuf, not text: give -o FILE "
				 "(-o prof.pb.gz), or redirect stderr");
		run_report_finish(&rr);
		return 2;
	}
	rc = run_child(argv + prog, &rr);
	run_report_finish(&rr); /* done already, unless run_child() failed early */
	return rc;
}
