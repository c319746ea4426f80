/*
 * test_explain.c - the watchdog explains waits (explain_cases.c):
 *   - a real ABBA deadlock, and an rwlock read hold against a mutex: the
 *     "deadlock:" report appears (polled for, generous limit, no timing
 *     asserted), exactly once, naming both threads, both locks, where each
 *     waits and where each took the lock the other waits for; then the
 *     program is killed.  Compiled in, 'syncprof ctl PID status' shows it
 *     too; preloaded with frames=4, the waiters' callers are listed.
 *   - a ring of three threads, and a thread that takes its own mutex
 *     again: one report each (three threads; one, "which it itself waits
 *     for").
 *   - a three-thread chain: the warning about the main thread follows the
 *     chain to the root holder, one indented line per link (with hold=1,
 *     and with deadlock=1 alone, which turns the held lists on).
 *   - blame of a wait made through a chain gains the root holder's site
 *     (profile JSON, table; a saved profile renders to the same bytes).
 *   - hard contention in one lock order (chains all the time): no deadlock
 *     is reported.
 *   - a condition wait: the warning names the site that signalled it last.
 *   - a cycle through a timed lock wait (a C11 mtx_timedlock of a mutex the
 *     thread holds; a timedlock in an ABBA): "timed wait cycle", said once,
 *     naming the timed wait; the call still times out.
 *
 * With a plain build of the program too: only 'syncprof run --deadlock' on
 * that one.
 *
 * Usage: test_explain compiled CLI PROGRAM SOURCE [PLAIN_PROGRAM]
 *        test_explain preload PRELOAD_LIB PROGRAM SOURCE
 */
#include <fcntl.h>

#include "tools_util.h"

static const char *way, *tool, *prog, *source, *plain_prog;
static char env[512];

static void site(char *buf, size_t size, const char *marker)
{
	snprintf(buf, size, "explain_cases.c:%d", t_marker_line(source, marker));
}

/* The line of @text that contains @needle, copied into @buf. */
static const char *line_with(const char *text, const char *needle, char *buf, size_t size)
{
	const char *p = text ? strstr(text, needle) : NULL, *b, *e;

	if (!p)
		T_FAIL("no line with '%s' in:\n%s", needle, text ? text : "(nothing)");
	for (b = p; b > text && b[-1] != '\n'; b--)
		;
	e = strchr(p, '\n');
	snprintf(buf, size, "%.*s", (int)(e ? e - b : (long)strlen(b)), b);
	return buf;
}

/* Start @case in the background with @opts, stderr into @err_path. */
static pid_t start(const char *opts, const char *case_, const char *err_path)
{
	pid_t pid = fork();

	if (pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int null = open("/dev/null", O_WRONLY);

		dup2(fd, 2);
		dup2(null, 1);
		setenv("SYNCPROF_OPTIONS", opts, 1);
		if (!strcmp(way, "preload"))
			setenv("LD_PRELOAD", tool, 1);
		execl(prog, prog, case_, (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Poll @path (at most 60 s: a loaded machine, a sanitized build) until it
 * holds @needle; its text then.  Never a timing assertion. */
static char *wait_for(const char *path, const char *needle)
{
	for (int i = 0; i < 6000; i++) {
		char *text = t_slurp_file(path);

		if (text && strstr(text, needle))
			return text;
		free(text);
		t_sleep_ms(10);
	}
	T_FAIL("'%s' never appeared in %s", needle, path);
	return NULL;
}

static void deadlock(const char *case_, const char *t1, const char *t2, const char *w1,
		     const char *h1, const char *w2, const char *h2, const char *lock1,
		     int frames)
{
	char err_path[300], opts[256], s[128], line[1024];
	char *text;
	pid_t pid;
	int st;

	snprintf(err_path, sizeof(err_path), "%s/%s.err", t_tmp(), case_);
	snprintf(opts, sizeof(opts), "enabled=1,deadlock=1,report_at_exit=0,control=%d%s",
		 !strcmp(way, "compiled"), frames ? ",frames=4" : "");
	pid = start(opts, case_, err_path);
	free(wait_for(err_path, "deadlock:"));
	/* More scans: the same deadlock must not be reported twice. */
	t_sleep_ms(600);
	text = t_slurp_file(err_path);
	fprintf(stderr, "--- %s (%s):\n%s---\n", case_, way, text);
	T_ASSERT_INT(t_count_lines(text, "deadlock:"), ==, 1);
	T_ASSERT_CONTAINS(line_with(text, "deadlock:", line, sizeof(line)),
			  "2 threads wait in a cycle");
	/* Each thread: the lock it waits for and where, then the lock it
	 * holds (the one the other waits for) and where it took it. */
	site(s, sizeof(s), w1);
	line_with(text, s, line, sizeof(line));
	T_ASSERT_CONTAINS(line, t1);
	T_ASSERT_CONTAINS(line, "waits for ");
	T_ASSERT_CONTAINS(line, lock1);
	site(s, sizeof(s), h1);
	T_ASSERT_CONTAINS(line_with(text, s, line, sizeof(line)), "and holds");
	T_ASSERT_CONTAINS(line, t2); /* which t2 waits for */
	site(s, sizeof(s), w2);
	T_ASSERT_CONTAINS(line_with(text, s, line, sizeof(line)), t2);
	site(s, sizeof(s), h2);
	T_ASSERT_CONTAINS(line_with(text, s, line, sizeof(line)), "and holds");
	T_ASSERT_CONTAINS(line, t1);
	if (frames)
		T_ASSERT_CONTAINS(text, "called from");
	free(text);
	if (!strcmp(way, "compiled")) {
		char *out, *err;

		T_ASSERT_INT(t_run(&out, &err, "%s ctl %d status", tool, (int)pid), ==, 0);
		T_ASSERT_CONTAINS(out, "deadlocks: 1");
		T_ASSERT_CONTAINS(out, "deadlock: 2 threads");
		site(s, sizeof(s), w1);
		T_ASSERT_CONTAINS(out, s);
		free(out);
		free(err);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	T_ASSERT(WIFSIGNALED(st));
}

/* A ring of three threads, and one thread that takes its own mutex again:
 * one report each, naming every member, where each waits and where each
 * took the lock it holds. */
static void ring(const char *case_, int n, const char *const *names, const char *waits,
		 const char *takes)
{
	char err_path[300], s[128], want[64], line[1024];
	char *text;
	pid_t pid;
	int st;

	snprintf(err_path, sizeof(err_path), "%s/%s.err", t_tmp(), case_);
	pid = start("enabled=1,deadlock=1,report_at_exit=0,control=0", case_, err_path);
	free(wait_for(err_path, "deadlock:"));
	t_sleep_ms(400);
	text = t_slurp_file(err_path);
	fprintf(stderr, "--- %s (%s):\n%s---\n", case_, way, text);
	T_ASSERT_INT(t_count_lines(text, "deadlock:"), ==, 1);
	snprintf(want, sizeof(want), n == 1 ? "1 thread waits for a lock that it holds itself"
					    : "%d threads wait in a cycle",
		 n);
	T_ASSERT_CONTAINS(line_with(text, "deadlock:", line, sizeof(line)), want);
	site(s, sizeof(s), waits);
	T_ASSERT_INT(t_count_lines(text, s), ==, n);
	site(s, sizeof(s), takes);
	T_ASSERT_INT(t_count_lines(text, s), ==, n);
	T_ASSERT_CONTAINS(line_with(text, s, line, sizeof(line)), "and holds");
	if (n == 1)
		T_ASSERT_CONTAINS(line, "which it itself waits for");
	for (int i = 0; i < n; i++)
		T_ASSERT_CONTAINS(text, names[i]);
	free(text);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* 'syncprof run --deadlock' on the plain program: the report, at once.
 * The program and the CLI get their own process group, killed at the end
 * (the deadlocked program never exits). */
static void cli_deadlock(void)
{
	char err_path[300], *text;
	pid_t pid;
	int st;

	snprintf(err_path, sizeof(err_path), "%s/cli.err", t_tmp());
	pid = fork();
	if (pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		setpgid(0, 0);
		dup2(fd, 2);
		execl(tool, tool, "run", "--deadlock", "--no-control", "-o", "/dev/null", "--",
		      plain_prog, "abba", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	text = wait_for(err_path, "deadlock:");
	fprintf(stderr, "--- syncprof run --deadlock:\n%s---\n", text);
	T_ASSERT_CONTAINS(text, "(dl-ab)");
	T_ASSERT_CONTAINS(text, "(dl-ba)");
	free(text);
	kill(-pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static void chain(const char *opts)
{
	char *out, *err, s[128], line[1024];
	const char *w;

	T_ASSERT_INT(t_run(&out, &err,
			   "%s SYNCPROF_OPTIONS=enabled=1,report_at_exit=0,%s %s chain 1500", env,
			   opts, prog),
		     ==, 0);
	fprintf(stderr, "--- chain (%s, %s):\n%s---\n", way, opts, err);
	/* The warning about the main thread, then its chain, indented. */
	w = strstr(err, "(ch-main) has been waiting");
	T_ASSERT(w != NULL);
	line_with(w, "(ch-main) has been waiting", line, sizeof(line));
	site(s, sizeof(s), "SITE_MAIN_WAITS");
	T_ASSERT_CONTAINS(line, s);
	T_ASSERT_CONTAINS(line, "(ch-mid)");
	site(s, sizeof(s), "SITE_MID_TAKES");
	T_ASSERT_CONTAINS(line, s);
	w = strchr(w, '\n') + 1;
	line_with(w, "", line, sizeof(line)); /* the next line */
	T_ASSERT(!strncmp(line, "    thread ", 11));
	T_ASSERT_CONTAINS(line, "(ch-mid) waits at ");
	site(s, sizeof(s), "SITE_MID_WAITS");
	T_ASSERT_CONTAINS(line, s);
	T_ASSERT_CONTAINS(line, "held by thread");
	T_ASSERT_CONTAINS(line, "(ch-root)");
	site(s, sizeof(s), "SITE_ROOT_TAKES");
	T_ASSERT_CONTAINS(line, "acquired at ");
	T_ASSERT_CONTAINS(strstr(line, "acquired at "), s);
	w = strchr(w, '\n') + 1;
	line_with(w, "", line, sizeof(line));
	T_ASSERT(!strncmp(line, "    thread ", 11));
	T_ASSERT_CONTAINS(line, "(ch-root) is not waiting: the root holder");
	T_ASSERT_INT(t_count_lines(err, "deadlock"), ==, 0);
	free(out);
	free(err);
}

/* Blame gains the root holder's site of the chain that was seen: the
 * main thread's row blames ch-mid's site, with ch-root's as the root; a
 * saved profile renders again to the same bytes (compiled: the CLI). */
static void blame_root(void)
{
	char *out, *err, *json, *again, s[128], path[300];
	const char *row, *root;

	snprintf(path, sizeof(path), "%s/chain.json", t_tmp());
	T_ASSERT_INT(t_run(&out, &err,
			   "%s SYNCPROF_OPTIONS=enabled=1,hold=1,hold_sample=1,warn_wait=200,"
			   "format=json,output=%s %s chain 1500",
			   env, path, prog),
		     ==, 0);
	json = t_slurp_file(path);
	T_ASSERT(json != NULL);
	/* The main thread's row: its site, then its blame with a root. */
	snprintf(s, sizeof(s), "\"line\":%d", t_marker_line(source, "SITE_MAIN_WAITS"));
	row = strstr(json, s);
	T_ASSERT(row != NULL);
	root = strstr(row, "\"root\":");
	T_ASSERT(root != NULL);
	snprintf(s, sizeof(s), "\"line\":%d", t_marker_line(source, "SITE_ROOT_TAKES"));
	T_ASSERT(!strncmp(strstr(root, "\"line\":"), s, strlen(s)));
	if (!strcmp(way, "compiled")) {
		T_ASSERT_INT(t_run(&again, NULL, "%s report -f json %s", tool, path), ==, 0);
		T_ASSERT_STR(again, json);
		free(again);
		T_ASSERT_INT(t_run(&again, NULL, "%s report %s", tool, path), ==, 0);
		T_ASSERT_CONTAINS(again, "root holder took its lock at");
		free(again);
	}
	free(json);
	free(out);
	free(err);
}

/* Hard contention in one lock order: chains of waiters all the time, never
 * a cycle, so never a deadlock report (and the program ends). */
static void busy(void)
{
	char *out, *err;

	int rc = t_run(&out, &err,
		       "%s SYNCPROF_OPTIONS=enabled=1,report_at_exit=0,deadlock=1 %s busy 2000", env,
		       prog);

	fprintf(stderr, "--- busy (%s):\n%s---\n", way, err);
	T_ASSERT_INT(rc, ==, 0);
	T_ASSERT_CONTAINS(out, "done ");
	T_ASSERT_INT(t_count_lines(err, "deadlock"), ==, 0);
	free(out);
	free(err);
}

/* A cycle through a timed wait ends at its deadline: no deadlock is
 * reported, one warning says so and names the timed wait, and the timed
 * call returns its timeout as without the profiler. */
static void timed_cycle(const char *case_, const char *header, const char *timed_site)
{
	char *out, *err, s[128], line[1024];
	int rc = t_run(&out, &err,
		       "%s SYNCPROF_OPTIONS=enabled=1,report_at_exit=0,deadlock=1 %s %s 1500", env,
		       prog, case_);

	fprintf(stderr, "--- %s (%s):\n%s---\n", case_, way, err);
	T_ASSERT_INT(rc, ==, 0);
	T_ASSERT_CONTAINS(out, "done timedout");
	T_ASSERT_INT(t_count_lines(err, "deadlock:"), ==, 0);
	T_ASSERT_INT(t_count_lines(err, "timed wait cycle:"), ==, 1);
	T_ASSERT_CONTAINS(line_with(err, "timed wait cycle:", line, sizeof(line)), header);
	site(s, sizeof(s), timed_site);
	T_ASSERT_CONTAINS(line_with(err, s, line, sizeof(line)), "waits, until its deadline, for");
	free(out);
	free(err);
}

static void condsig(void)
{
	char *out, *err, s[128], line[1024];

	T_ASSERT_INT(t_run(&out, &err,
			   "%s SYNCPROF_OPTIONS=enabled=1,report_at_exit=0,warn_wait=200 %s "
			   "condsig 1500",
			   env, prog),
		     ==, 0);
	fprintf(stderr, "--- condsig (%s):\n%s---\n", way, err);
	site(s, sizeof(s), "SITE_LONGWAIT");
	line_with(err, s, line, sizeof(line));
	T_ASSERT_CONTAINS(line, "(cv-main) has been waiting");
	T_ASSERT_CONTAINS(line, "a condition wait");
	site(s, sizeof(s), "SITE_SIGNAL");
	T_ASSERT_CONTAINS(line, "last signalled at ");
	T_ASSERT_CONTAINS(strstr(line, "last signalled at "), s);
	T_ASSERT_CONTAINS(line, "(signal)");
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	if (argc < 5 || argc > 6 || (strcmp(argv[1], "compiled") && strcmp(argv[1], "preload"))) {
		fprintf(stderr, "usage: test_explain compiled CLI PROGRAM SOURCE [PLAIN_PROGRAM]\n"
				"       test_explain preload PRELOAD_LIB PROGRAM SOURCE\n");
		return 2;
	}
	way = argv[1];
	tool = argv[2];
	prog = argv[3];
	source = argv[4];
	plain_prog = argc > 5 ? argv[5] : NULL;
	if (!strcmp(way, "preload"))
		snprintf(env, sizeof(env), "LD_PRELOAD=%s", tool);
	unsetenv("SYNCPROF_OPTIONS");
	setenv("SYNCPROF_CONTROL_DIR", t_tmp(), 1);
	if (plain_prog) {
		cli_deadlock();
		t_run(NULL, NULL, "rm -rf %s", t_tmp());
		fprintf(stderr, "test_explain: ok\n");
		return 0;
	}
	deadlock("abba", "(dl-ab)", "(dl-ba)", "SITE_AB_INNER", "SITE_AB_OUTER", "SITE_BA_INNER",
		 "SITE_BA_OUTER", "mutex 0x", !strcmp(way, "preload"));
	deadlock("rwdead", "(dl-reader)", "(dl-writer)", "SITE_RW_READER_WAITS", "SITE_RW_READ",
		 "SITE_RW_WRITER_WAITS", "SITE_RW_MUTEX", "mutex 0x", 0);
	ring("three", 3, (const char *const[]){ "(dl-1)", "(dl-2)", "(dl-3)" }, "SITE_RING_SECOND",
	     "SITE_RING_FIRST");
	ring("self", 1, (const char *const[]){ "(dl-self)" }, "SITE_SELF_AGAIN", "SITE_SELF_FIRST");
	chain("warn_wait=200,hold=1");
	chain("warn_wait=200,deadlock=1");
	blame_root();
	busy();
	condsig();
	timed_cycle("timedself", "1 thread waits, with a deadline, for a lock that it holds itself",
		    "SITE_TSELF_AGAIN");
	timed_cycle("timedabba", "ends when the wait of thread", "SITE_TAB_INNER");
	t_run(NULL, NULL, "rm -rf %s", t_tmp());
	fprintf(stderr, "test_explain: ok\n");
	return 0;
}
