/*
 * cmd_top.c - 'syncprof top PID': a live view of a running process's
 * report, refreshed every interval like top(1), with sort keys, pause and
 * reset; or, when stdout is not a terminal (or with --batch N), N
 * snapshots as plain text, like 'top -b'.
 *
 *   syncprof top PID [-d S] [-s KEY] [-n ROWS] [-b N] [--no-coalesce] [--merged]
 *
 * Design.  The snapshots, rates and drawing are top_view.c; this file is
 * the command line, the terminal and the loop.  The terminal is driven
 * with termios and a few ANSI escapes (alternate screen, cursor home,
 * clear to end of line, reverse video): no curses library, as every
 * terminal emulator in use understands these.  Input is non-canonical
 * without echo, but keeps ISIG, so Ctrl-C and Ctrl-Z work as usual.  The
 * loop sleeps in poll() on stdin until the next refresh or a key; a key
 * redraws the last snapshot at once (sorting is local).
 *
 * The terminal is always given back: on q, on end of input, when the
 * process goes away, and on SIGINT, SIGTERM and SIGHUP, whose handlers
 * only set a flag that the loop reads (then top restores the terminal and
 * dies of the same signal, so that a shell sees how it ended); each
 * handler also writes a byte to a pipe that the loop polls with stdin, so
 * that a signal between the loop's look at the flags and its poll() is
 * not slept through (a paused top polls without a timeout).  A second
 * such signal while a request is still waiting for its answer (up to
 * 30 s) restores the terminal from the handler (tcsetattr and write are
 * async-signal-safe) and dies at once.  Ctrl-Z gives the terminal back
 * before stopping and takes it again on continue; SIGWINCH redraws at the
 * new size.
 *
 * The process exiting is not an error: after at least one snapshot, a
 * failed request whose process is gone (or becomes a zombie within 2 s:
 * its socket is removed by an atexit handler, a moment before it is gone)
 * ends top with "process N (...) exited" and status 0.
 *
 * Alternatives: ncurses (one more run-time dependency for a screen of
 * lines; terminfo differences do not matter for these escapes); a
 * persistent connection (the control socket answers one request per
 * connection, see ctl_client.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "top.h"

static const char help[] =
	"Usage: syncprof top PID [-d SECONDS] [-s KEY] [-n ROWS] [-b N] [--no-coalesce]\n"
	"                    [--merged]\n"
	"\n"
	"A live view of a running profiled process, refreshed like top(1): the call\n"
	"sites where its threads wait for locks, with their rates since the previous\n"
	"refresh.  The process must listen on a control socket, as for 'syncprof ctl'\n"
	"(started with 'syncprof run', or with SYNCPROF_OPTIONS=control=1).\n"
	"\n"
	"Options:\n"
	"  -d, --interval S  seconds between refreshes, 0.1 to 3600 (default 2)\n"
	"  -s, --sort KEY    rate (default), total, count, contended, avg, max, hold\n"
	"  -n, --rows N      at most N rows (default: as many as the terminal holds;\n"
	"                    all of them in batch mode)\n"
	"  -b, --batch N     no screen: N snapshots as plain text, one per interval\n"
	"                    (when stdout or stdin is not a terminal: 1 snapshot)\n"
	"  --no-coalesce     a row per lock object (--coalesce: per call site; default:\n"
	"                    the process's own SYNCPROF_OPTIONS)\n"
	"  --merged          one list of rows; by default the rows of locks (mutex,\n"
	"                    rwlock, spinlock, futex, glibc_lock) come first, under a\n"
	"                    line \"-- Lock contention ...\", and the waits for an event\n"
	"                    (condvar, semaphore, barrier, join) after them, under\n"
	"                    \"-- Waits for an event ...\", each sorted by the key\n"
	"\n"
	"Keys:\n"
	"  q                 quit (also Ctrl-C)\n"
	"  space, p          pause (the screen stays; keys still work); again: go on\n"
	"  t w c n a m o     sort by rate, total, count, contended, avg, max, hold\n"
	"  s                 the next sort key\n"
	"  l                 locks first (the default) / one list (--merged)\n"
	"  r                 reset the process's statistics (as 'syncprof ctl PID reset')\n"
	"  h, ?              the keys and columns\n"
	"\n"
	"Columns: TYPE (mutex, rec_mutex, condvar, rwlock_read, rwlock_write,\n"
	"spinlock, semaphore, barrier, join, futex, glibc_lock); ACQ/s, WAITS/s: acquisitions and waits (contended\n"
	"acquisitions) per second, and WAIT%: wait time per second (100% is one\n"
	"thread waiting all the time), all three since the previous refresh, over\n"
	"the process's profiled time; then, since start-up or the last reset, ACQS,\n"
	"WAITS, WAIT (total wait), AVG (wait per acquisition), MAX (longest wait),\n"
	"HOLD (total hold, with hold tracking; '-' for futex and glibc_lock rows,\n"
	"whose holds are not seen); OBJECT (lock name or address) and\n"
	"SITE.  A narrow terminal drops OBJECT, ACQS, HOLD, ACQ/s, MAX, AVG,\n"
	"WAITS/s and WAITS, in that order, but not the sort key's column.\n"
	"\n"
	"Exit status: 0 done, also when the process exited meanwhile; 1 the process\n"
	"could not be reached (the messages of 'syncprof ctl'); 2 bad usage.\n"
	"\n"
	"Examples:\n"
	"  syncprof run --hold -- ./server &     # in one terminal, or in the background\n"
	"  syncprof top $(pidof server) -d 1 -s avg\n"
	"  syncprof top 4242 -b 10 -d 5 > waits.log   # 10 snapshots, 5 s apart\n";

struct top_opts {
	pid_t pid;
	double interval;
	enum top_sort sort;
	unsigned rows;
	unsigned batch;
	int coalesce; /* -1: the process's own */
	int merged;   /* --merged: one list, not locks first */
};

/* ---- command line ---------------------------------------------------------- */

/* "--name=V", "--name V", "-x V": the value, or NULL (*@matched says
 * whether argv[*i] was this option at all). */
static const char *take(int argc, char **argv, int *i, const char *shortn, const char *longn,
			int *matched)
{
	const char *a = argv[*i];
	size_t n = strlen(longn);

	*matched = 0;
	if (!strncmp(a, longn, n) && a[n] == '=') {
		*matched = 1;
		return a + n + 1;
	}
	if (strcmp(a, longn) && strcmp(a, shortn))
		return NULL;
	*matched = 1;
	if (*i + 1 >= argc) {
		cli_error("top", "option %s needs a value", a);
		return NULL;
	}
	return argv[++*i];
}

static int parse_uint(const char *v, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long n;

	if (!*v || *v == '-' || *v == '+')
		return -1;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (*end || errno || n > max)
		return -1;
	*out = (unsigned)n;
	return 0;
}

/* 0, or 2 after one message. */
/* One of top's options with a value, at argv[*i], into @o: 1 when
 * taken, 0 when it is none of them, 2 after one line on stderr. */
static int value_option(int argc, char **argv, int *i, struct top_opts *o)
{
	const char *v;
	int m;

	v = take(argc, argv, i, "-d", "--interval", &m);
	if (m) {
		char *end;

		if (!v)
			return 2;
		o->interval = strtod(v, &end);
		if (!*v || *end || !isfinite(o->interval) || o->interval < 0.1 ||
		    o->interval > 3600) {
			cli_error("top", "bad --interval '%s' (seconds, 0.1 to 3600)", v);
			return 2;
		}
		return 1;
	}
	v = take(argc, argv, i, "-s", "--sort", &m);
	if (m) {
		int k;

		if (!v)
			return 2;
		k = top_sort_parse(v);
		if (k < 0) {
			cli_error("top", "bad sort key '%s' (valid: rate, total, count, "
					 "contended, avg, max, hold)", v);
			return 2;
		}
		o->sort = (enum top_sort)k;
		return 1;
	}
	v = take(argc, argv, i, "-n", "--rows", &m);
	if (m) {
		if (!v)
			return 2;
		if (parse_uint(v, 100000, &o->rows) || !o->rows) {
			cli_error("top", "bad --rows '%s' (a number of rows, 1 or more)", v);
			return 2;
		}
		return 1;
	}
	v = take(argc, argv, i, "-b", "--batch", &m);
	if (m) {
		if (!v)
			return 2;
		if (parse_uint(v, 1000000000ul, &o->batch) || !o->batch) {
			cli_error("top", "bad --batch '%s' (a number of snapshots, 1 or more)", v);
			return 2;
		}
		return 1;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct top_opts *o)
{
	int have_pid = 0;

	*o = (struct top_opts){ .interval = 2, .sort = TOP_SORT_RATE, .coalesce = -1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *end;
		long pid;
		int taken;

		if (!strcmp(a, "--no-coalesce") || !strcmp(a, "--coalesce")) {
			o->coalesce = a[2] == 'c';
			continue;
		}
		if (!strcmp(a, "--merged")) {
			o->merged = 1;
			continue;
		}
		taken = value_option(argc, argv, &i, o);
		if (taken == 2)
			return 2;
		if (taken)
			continue;
		if (a[0] == '-' || have_pid) {
			cli_error("top", "unexpected argument '%s' (see syncprof top --help)", a);
			return 2;
		}
		pid = strtol(a, &end, 10);
		if (!*a || *end || pid <= 0 || pid > 0x3fffffff) {
			cli_error("top", "'%s' is not a process id", a);
			return 2;
		}
		o->pid = (pid_t)pid;
		have_pid = 1;
	}
	if (!have_pid) {
		cli_error("top", "usage: syncprof top PID [-d S] [-s KEY] [-n ROWS] [-b N] "
				 "(see --help)");
		return 2;
	}
	return 0;
}

/* ---- the process going away ------------------------------------------------ */

/* @pid is gone or a zombie. */
static int process_gone(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	if (kill(pid, 0) && errno == ESRCH)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')'); /* the state follows the command, which may hold ')' */
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * A request failed with @rc: after a snapshot (@seen), and when the
 * process is gone or goes within 2 s, say so and return 0; else print
 * @err and return 1.
 */
static int fetch_failed(pid_t pid, int rc, const char *err, const struct top_snap *seen)
{
	for (int i = 0; seen && rc != -EPERM && rc != -EREMOTEIO && i <= 40; i++) {
		struct timespec ts = { 0, 50 * 1000000L };

		if (process_gone(pid)) {
			fprintf(stderr, "syncprof top: process %d (%s) exited\n", (int)pid,
				seen->command);
			return 0;
		}
		if (rc == -ESRCH)
			break;
		nanosleep(&ts, NULL);
	}
	cli_error("top", "%s", err);
	return 1;
}

/* ---- batch ------------------------------------------------------------------- */

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int run_batch(const struct top_opts *o)
{
	struct top_screen v = { .max_rows = o->rows, .sort = o->sort, .interval = o->interval,
				.merged = o->merged };
	struct top_snap prev, cur;
	int have = 0, rc = 0;
	char err[512];

	for (unsigned i = 0; i < (o->batch ? o->batch : 1); i++) {
		if (i)
			sleep_s(o->interval);
		rc = top_fetch(o->pid, o->coalesce, &cur, err, sizeof(err));
		if (rc) {
			rc = fetch_failed(o->pid, rc, err, have ? &prev : NULL);
			break;
		}
		top_rates(&cur, have ? &prev : NULL);
		top_sort(&cur, o->sort, o->merged);
		if (i)
			putchar('\n');
		top_draw(stdout, &cur, &v);
		fflush(stdout);
		if (have)
			top_snap_free(&prev);
		prev = cur;
		have = 1;
	}
	if (have)
		top_snap_free(&prev);
	if (fflush(stdout) || ferror(stdout)) {
		cli_error("top", "writing the output failed: %s", strerror(errno));
		return 1;
	}
	return rc;
}

/* ---- the terminal ------------------------------------------------------------ */

static struct termios saved_tio;
static volatile sig_atomic_t raw_on, got_stop, got_winch, got_tstp;
/* The handlers write a byte here, so that a signal that comes between the
 * loop's look at the flags and its poll() still wakes the poll. */
static int wake_pipe[2] = { -1, -1 };

static void wake(void)
{
	int e = errno;

	if (wake_pipe[1] >= 0 && write(wake_pipe[1], "", 1) < 0) {
		/* full: the loop is awake already */
	}
	errno = e;
}

static const char enter_seq[] = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J";
static const char leave_seq[] = "\x1b[?25h\x1b[?1049l";

/* Async-signal-safe: write() and tcsetattr() only. */
static void term_restore(void)
{
	if (!raw_on)
		return;
	raw_on = 0;
	if (write(STDOUT_FILENO, leave_seq, sizeof(leave_seq) - 1) < 0) {
		/* nothing better to do: the terminal settings still go back */
	}
	tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_tio);
}

static int term_raw(void)
{
	struct termios t = saved_tio;

	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t))
		return -errno;
	raw_on = 1;
	if (write(STDOUT_FILENO, enter_seq, sizeof(enter_seq) - 1) < 0)
		return -errno;
	return 0;
}

static void on_stop_signal(int sig)
{
	if (got_stop) { /* the loop did not get to it: a request hangs */
		term_restore();
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	got_stop = sig;
	wake();
}

static void on_winch(int sig)
{
	(void)sig;
	got_winch = 1;
	wake();
}

static void on_tstp(int sig)
{
	(void)sig;
	got_tstp = 1;
	wake();
}

/* No SA_RESTART: poll() returns EINTR, and the loop looks at the flags. */
static void set_handler(int sig, void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void term_size(unsigned *width, unsigned *height)
{
	struct winsize ws;

	*width = 80;
	*height = 24;
	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col && ws.ws_row) {
		*width = ws.ws_col;
		*height = ws.ws_row;
	}
}

/* Ctrl-Z: give the terminal back, stop, take it again on continue. */
static void suspend(void)
{
	got_tstp = 0;
	term_restore();
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);
	/* continued */
	set_handler(SIGTSTP, on_tstp);
	term_raw();
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void draw(const struct top_snap *s, const struct top_screen *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	top_draw(f, s, v);
	if (!fclose(f)) {
		for (size_t off = 0; off < len;) {
			ssize_t n = write(STDOUT_FILENO, buf + off, len - off);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
	}
	free(buf);
}

/* ---- the interactive loop ---------------------------------------------------- */

struct top_state {
	const struct top_opts *o;
	struct top_screen v;
	struct top_snap snap;  /* shown, sorted */
	double next;           /* when to refresh (monotonic seconds) */
	int force;             /* refresh now, even when paused */
	int quit;
	char message[600];
	int message_ttl;       /* refreshes left to show it */
};

static void key_sort(struct top_state *t, enum top_sort k)
{
	t->v.sort = k;
	top_sort(&t->snap, k, t->v.merged);
}

static void key_reset(struct top_state *t)
{
	char err[512], *payload = NULL;
	size_t len;

	if (cli_ctl_request(t->o->pid, "reset\n", &payload, &len, err, sizeof(err))) {
		snprintf(t->message, sizeof(t->message), "reset failed: %s", err);
	} else {
		snprintf(t->message, sizeof(t->message), "reset: the numbers count from now");
		t->force = 1;
	}
	free(payload);
	t->message_ttl = 2;
}

static void on_key(struct top_state *t, const char *keys, ssize_t n)
{
	static const char sort_keys[TOP_SORT_N] = { 't', 'w', 'c', 'n', 'a', 'm', 'o' };

	for (ssize_t i = 0; i < n && !t->quit; i++) {
		char k = keys[i];

		if (k == '\x1b') /* an escape sequence (arrows, function keys): ignored */
			break;
		if (t->v.help && k != 'q') {
			t->v.help = 0;
			continue;
		}
		switch (k) {
		case 'q': case 'Q': t->quit = 1; break;
		case ' ': case 'p': case 'P':
			t->v.paused = !t->v.paused;
			if (!t->v.paused)
				t->next = 0; /* refresh now */
			break;
		case 'h': case 'H': case '?': t->v.help = 1; break;
		case 's': key_sort(t, (enum top_sort)((t->v.sort + 1) % TOP_SORT_N)); break;
		case 'l': case 'L':
			t->v.merged = !t->v.merged;
			key_sort(t, t->v.sort);
			break;
		case 'r': case 'R': key_reset(t); break;
		case '\f': break; /* Ctrl-L: redrawn below */
		default:
			for (int s = 0; s < TOP_SORT_N; s++)
				if (k == sort_keys[s])
					key_sort(t, (enum top_sort)s);
			break;
		}
	}
}

/* One refresh: 0, or the request's negative errno with @err. */
static int refresh(struct top_state *t, char *err, size_t esize)
{
	struct top_snap cur;
	int rc = top_fetch(t->o->pid, t->o->coalesce, &cur, err, esize);

	if (rc)
		return rc;
	top_rates(&cur, &t->snap);
	top_snap_free(&t->snap);
	t->snap = cur;
	top_sort(&t->snap, t->v.sort, t->v.merged);
	t->next = now_s() + t->o->interval;
	t->force = 0;
	if (t->message_ttl && !--t->message_ttl)
		t->message[0] = '\0';
	return 0;
}

/* The first snapshot, then the terminal raw and the signals handled: 0,
 * or 1 after one line on stderr (the terminal as it was). */
static int screen_setup(struct top_state *t, char *err, size_t size)
{
	const struct top_opts *o = t->o;
	int rc;

	t->v = (struct top_screen){ .max_rows = o->rows, .sort = o->sort, .interval = o->interval,
				    .tty = 1, .merged = o->merged };
	/* The first snapshot before the screen: an unreachable process is one
	 * line on a normal terminal. */
	rc = top_fetch(o->pid, o->coalesce, &t->snap, err, size);
	if (rc) {
		cli_error("top", "%s", err);
		return 1;
	}
	top_rates(&t->snap, NULL);
	top_sort(&t->snap, t->v.sort, t->v.merged);
	t->next = now_s() + o->interval;
	if (tcgetattr(STDIN_FILENO, &saved_tio) || pipe2(wake_pipe, O_NONBLOCK | O_CLOEXEC)) {
		cli_error("top", "cannot set up the terminal: %s", strerror(errno));
		top_snap_free(&t->snap);
		return 1;
	}
	set_handler(SIGINT, on_stop_signal);
	set_handler(SIGTERM, on_stop_signal);
	set_handler(SIGHUP, on_stop_signal);
	set_handler(SIGWINCH, on_winch);
	set_handler(SIGTSTP, on_tstp);
	if (term_raw()) {
		term_restore();
		cli_error("top", "cannot set up the terminal: %s", strerror(errno));
		top_snap_free(&t->snap);
		return 1;
	}
	return 0;
}

/* Refresh, draw and take keys until q, end of input, a stop signal or a
 * failed refresh (its status, @err saying why). */
static int screen_loop(struct top_state *t, char *err, size_t size)
{
	int rc = 0;

	for (int redraw = 1; !t->quit && !got_stop;) {
		struct pollfd p[2] = { { .fd = STDIN_FILENO, .events = POLLIN },
				       { .fd = wake_pipe[0], .events = POLLIN } };
		double wait;
		char keys[64];
		ssize_t n;

		if (got_tstp) {
			suspend();
			redraw = 1;
		}
		if (got_winch) {
			got_winch = 0;
			redraw = 1;
		}
		if (t->force || (!t->v.paused && now_s() >= t->next)) {
			rc = refresh(t, err, size);
			if (rc)
				break;
			redraw = 1;
		}
		if (redraw) {
			term_size(&t->v.width, &t->v.height);
			t->v.message = t->message[0] ? t->message : NULL;
			draw(&t->snap, &t->v);
			redraw = 0;
		}
		wait = t->v.paused ? -1 : ceil((t->next - now_s()) * 1000);
		if (poll(p, 2, wait < 0 && !t->v.paused ? 0 : (int)wait) <= 0)
			continue; /* a refresh is due, or a signal came */
		if (p[1].revents) {
			while (read(wake_pipe[0], keys, sizeof(keys)) > 0)
				;
			continue; /* the flags are looked at first */
		}
		n = read(STDIN_FILENO, keys, sizeof(keys));
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break; /* end of input: as q */
		on_key(t, keys, n);
		redraw = 1;
	}
	return rc;
}

static int run_screen(const struct top_opts *o)
{
	struct top_state t = { .o = o };
	char err[512];
	int rc;

	if (screen_setup(&t, err, sizeof(err)))
		return 1;
	rc = screen_loop(&t, err, sizeof(err));
	term_restore();
	close(wake_pipe[0]);
	close(wake_pipe[1]);
	wake_pipe[0] = wake_pipe[1] = -1;
	if (got_stop) {
		int sig = got_stop;

		top_snap_free(&t.snap);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	if (rc)
		rc = fetch_failed(o->pid, rc, err, &t.snap);
	top_snap_free(&t.snap);
	return rc;
}

int cmd_top(int argc, char **argv)
{
	struct top_opts o;
	int rc;

	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(help, stdout);
		return 0;
	}
	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	if (o.batch || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return run_batch(&o);
	return run_screen(&o);
}
