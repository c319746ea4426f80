/*
 * control.c - the helper thread: control socket, long-wait watchdog and
 * report on a signal.
 *
 * What it does.  With SYNCPROF_OPTIONS control=1 the process listens on
 * the Unix socket DIR/PID.sock, DIR being $SYNCPROF_CONTROL_DIR, else
 * /dev/shm/syncprof-UID, or /tmp/syncprof-UID where that cannot be made
 * (control_wire.h, sp_ctl_dir()); 'syncprof ctl PID ...' connects there
 * and sends one request line (control_proto.c).  With warn_wait=MS the
 * same thread runs the watchdog (watchdog.c); with report_signal=USR2 it
 * prints a report when the signal arrives.
 *
 * Access.  DIR is created 0700 and must be a directory owned by us with no
 * group/other permission bits, else the next candidate is tried, and when
 * none is left the socket is not created (a warning says why): that stops
 * another user from pre-creating it in /dev/shm or /tmp.  The socket is
 * chmod'ed 0600.  Every accepted connection is checked with
 * SO_PEERCRED: a peer that is neither our effective uid nor root is closed
 * without a byte of answer.
 *
 * Never block.  The thread serves at most MAX_CLIENTS connections at once
 * from one poll() loop, all sockets non-blocking.  A client must send its
 * request line within REQUEST_MS and take the answer within ANSWER_MS;
 * a line longer than SP_CTL_LINE_MAX is answered with an error.  Past the
 * limits the connection is closed, so a silent or garbage-sending client
 * costs one slot for a bounded time and never delays another client or
 * the program.  More than MAX_CLIENTS at once: the oldest connection that
 * has not sent its request yet is closed to make room; when all of them
 * are receiving answers, the newcomer gets "error too many ...".
 *
 * Signals stay the program's: the helper thread blocks every signal, and
 * no handler is installed unless report_signal is set; that handler only
 * writes a byte to a non-blocking pipe, and the helper thread, woken by
 * it, renders the report (no stdio or locks in the handler).
 *
 * Invisible to the profile: the helper thread marks itself inside the
 * profiler (sp_thread_enter) for its whole life, so its own lock calls
 * (stdio, malloc) are not recorded and it never registers as a thread.
 * The lock bench sees it as a thread asleep in poll(): see
 * docs/control.md for the measurement.
 *
 * fork(): the child has no helper thread, but the parent's descriptors.
 * An atfork child handler closes them; the child's own helper thread and
 * socket start at its first profiled lock call or new thread (through the
 * registry's slow path), not in the handler: a thread created there
 * deadlocked under ASan.  A child that makes no profiled lock call (for
 * instance with profiling off) has no control socket.  The socket file is
 * removed at exit.
 *
 * Start-up: the starting thread creates the helper and waits (on a futex,
 * woken by it) until it runs; the helper makes the socket itself, so the
 * program does not wait for the file operations.  Exit and fork wait until
 * the socket is made (bounded), so that it is removed, and a child knows
 * every descriptor it inherited.
 *
 * Alternatives considered: abstract-namespace sockets (no file modes, so
 * SO_PEERCRED would be the only guard, and no directory to list); a
 * thread per connection (a stuck client pins a thread, unbounded threads);
 * signalfd (needs the signal blocked in every thread of the program,
 * which changes the program's signal behaviour).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "record/registry.h"

#define MAX_CLIENTS 8
#define REQUEST_MS 2000
#define ANSWER_MS 10000
/* Test point: SYNCPROF_TEST_CONTROL_REQUEST_MS shortens the request
 * deadline, so that tests/ctl_stress.sh meets it on any machine. */
static uint64_t request_ms = REQUEST_MS;

struct client {
	int fd;                        /* -1: free slot */
	uint64_t deadline_ns;
	size_t in_len;
	char in[SP_CTL_LINE_MAX];
	char *out;                     /* answer being sent, malloc'd */
	size_t out_len, out_off;
};

static sp_lock_t start_lock = SP_LOCK_INIT;
/* Written under start_lock by the thread that starts the helper: the
 * process it runs in, and the pipe from the report signal's handler. */
static struct {
	pid_t pid;
	int sig_pipe[2];
} starter = { .sig_pipe = { -1, -1 } };
/* Written by the helper thread (and at exit, once it stopped): its
 * socket, the socket file's name and the clients. */
static struct {
	int listen_fd;
	struct client clients[MAX_CLIENTS];
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
} helper = { .listen_fd = -1 };
/*
 * HELPER_* (futex word): the helper thread runs, makes its socket, has
 * made it (or failed to).  The socket is made by the helper, not the
 * starting thread, so that a program's start-up does not wait for its
 * file operations (issue 25: ~0.5 ms of mkdir, bind, chmod, listen on
 * /tmp), nor - outside the sanitizers, below - for the thread to be
 * scheduled.  A process that exits before the helper began its socket
 * closes it (HELPER_CLOSED, a compare-and-swap either side wins): the
 * helper then makes none, and the exit waits only for a socket in the
 * making, which it removes.
 */
enum { HELPER_STARTING, HELPER_RUNNING, HELPER_MAKING, HELPER_SETTLED, HELPER_CLOSED };
static int helper_ready;

/* From @from to @to, unless another state came first: 1 if it moved. */
static int helper_move(int from, int to)
{
	return __atomic_compare_exchange_n(&helper_ready, &from, to, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

/* DIR exists (or is created) as a private directory of ours. */
static int private_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return -EPERM;
	return 0;
}

static int open_socket(void)
{
	struct sockaddr_un addr;
	char dir[sizeof(helper.sock_path)], first[sizeof(helper.sock_path)];
	int fd, rc, first_rc = 0;

	first[0] = '\0';

	/* The first candidate (control_wire.h) we can make our own. */
	for (int i = 0;; i++) {
		rc = sp_ctl_dir(geteuid(), i, dir, sizeof(dir) - 16);
		if (rc == -ENOENT) {
			fprintf(stderr,
				"syncprof: control socket not started: %s must be a directory "
				"owned by uid %u with mode 0700 (%s)\n",
				first, (unsigned)geteuid(), strerror(-first_rc));
			return first_rc;
		}
		if (rc)
			return rc;
		rc = private_dir(dir);
		if (!rc)
			break;
		if (!i) {
			memcpy(first, dir, sizeof(first));
			first_rc = rc;
		}
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%d.sock", dir, (int)getpid()) >=
	    (int)sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	unlink(addr.sun_path); /* a stale socket of an earlier process with our pid */
	/* Named before it exists, so that an _exit() meanwhile removes it
	 * too (sp_control_exit_now()). */
	memcpy(helper.sock_path, addr.sun_path, sizeof(helper.sock_path));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || chmod(addr.sun_path, 0600) ||
	    listen(fd, MAX_CLIENTS)) {
		rc = -errno;
		fprintf(stderr, "syncprof: control socket %s: %s\n", addr.sun_path, strerror(-rc));
		close(fd);
		unlink(addr.sun_path);
		helper.sock_path[0] = '\0';
		return rc;
	}
	helper.listen_fd = fd;
	return 0;
}

static void client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

/* Owner and root only; the others get no answer at all. */
static int peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || len != sizeof(cred))
		return 0;
	return cred.uid == geteuid() || cred.uid == 0;
}

static void accept_clients(void)
{
	for (;;) {
		int fd = accept4(helper.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct client *slot = NULL;

		if (fd < 0)
			return;
		if (!peer_allowed(fd)) {
			close(fd);
			continue;
		}
		for (int i = 0; i < MAX_CLIENTS && !slot; i++)
			if (helper.clients[i].fd < 0)
				slot = &helper.clients[i];
		/* All taken: the oldest client still silent makes room, so that
		 * silent clients cannot lock the others out. */
		if (!slot) {
			for (int i = 0; i < MAX_CLIENTS; i++)
				if (!helper.clients[i].out &&
				    (!slot || helper.clients[i].deadline_ns < slot->deadline_ns))
					slot = &helper.clients[i];
			if (slot)
				client_close(slot);
		}
		if (!slot) {
			static const char busy[] = "error too many control connections; retry\n";

			(void)!send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
			close(fd);
			continue;
		}
		slot->fd = fd;
		slot->deadline_ns = sp_now_ns() + request_ms * 1000000u;
	}
}

/* Build the answer to the line in c->in[0, len). */
static void answer(struct client *c, size_t len)
{
	struct sp_ctl_request *req = malloc(sizeof(*req));
	char err[256] = "out of memory", head[64];
	char *payload = NULL;
	size_t plen = 0;
	FILE *f = NULL;
	int rc = -ENOMEM;

	uint64_t t0 = sp_now_ns(), busy;

	if (req)
		rc = sp_ctl_parse(c->in, len, &sp_opts.report, req, err, sizeof(err));
	if (!rc) {
		f = open_memstream(&payload, &plen);
		rc = f ? sp_ctl_execute(req, f) : -ENOMEM;
		if (f && fclose(f) && !rc)
			rc = -EIO;
		if (rc)
			snprintf(err, sizeof(err), "%s", strerror(-rc));
	}
	/* The time spent here (a report can take long) was not the other
	 * clients' to lose: their deadlines move by as much. */
	busy = sp_now_ns() - t0;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (helper.clients[i].fd >= 0 && &helper.clients[i] != c)
			helper.clients[i].deadline_ns += busy;
	free(req);
	if (rc) {
		free(payload);
		payload = NULL;
		plen = 0;
		snprintf(head, sizeof(head), "error ");
	} else {
		snprintf(head, sizeof(head), "ok %zu\n", plen);
	}
	c->out_len = strlen(head) + (rc ? strlen(err) + 1 : plen);
	c->out = malloc(c->out_len);
	if (!c->out) {
		free(payload);
		client_close(c);
		return;
	}
	memcpy(c->out, head, strlen(head));
	if (rc) {
		memcpy(c->out + strlen(head), err, strlen(err));
		c->out[c->out_len - 1] = '\n';
	} else if (plen) {
		memcpy(c->out + strlen(head), payload, plen);
	}
	free(payload);
	c->out_off = 0;
	c->deadline_ns = sp_now_ns() + (uint64_t)ANSWER_MS * 1000000u;
}

static void client_read(struct client *c)
{
	ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
	char *nl;

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		client_close(c);
		return;
	}
	if (n < 0)
		return;
	nl = memchr(c->in + c->in_len, '\n', (size_t)n);
	c->in_len += (size_t)n;
	if (nl)
		answer(c, (size_t)(nl - c->in) + 1);
	else if (c->in_len == sizeof(c->in))
		answer(c, c->in_len); /* too long: the parser says so */
}

static void client_write(struct client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		client_close(c);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off == c->out_len)
		client_close(c);
}

/*
 * One report per signal: each signal's byte is one request, served in
 * turn (signals that arrive during a report wait in the pipe, and the
 * next poll serves them).  Requests the pipe had no room for (64 KiB of
 * them pending) are counted by the handler and said by the next report:
 * never lost without a word.  Two signals that arrive before the first
 * is delivered are one to the kernel (a standard signal is pending or
 * not), which no handler can tell.
 */
static unsigned sig_unqueued; /* handler: requests the full pipe refused */

static void signal_report(void)
{
	char c;
	unsigned unqueued;

	if (read(starter.sig_pipe[0], &c, 1) != 1)
		return;
	sp_report_write(stderr, &sp_opts.report);
	unqueued = __atomic_exchange_n(&sig_unqueued, 0, __ATOMIC_RELAXED);
	if (unqueued)
		fprintf(stderr,
			"syncprof: %u more report requests arrived while the queue of "
			"requests was full; this report answers them too\n",
			unqueued);
}

static void on_report_signal(int sig)
{
	int saved = errno;

	(void)sig;
	if (write(starter.sig_pipe[1], "r", 1) != 1)
		__atomic_fetch_add(&sig_unqueued, 1, __ATOMIC_RELAXED);
	errno = saved;
}

static void helper_settle(int state)
{
	sp_store_release(&helper_ready, state);
	sp_futex(&helper_ready, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
}

/* Wait while the helper's state is @state, 2 s at most (it waits for
 * nothing of ours: a bound all the same). */
static void helper_wait_past(int state)
{
	for (int i = 0; i < 20 && sp_load_acquire(&helper_ready) == state; i++) {
		const struct timespec step = { 0, 100 * 1000 * 1000 };

		sp_futex(&helper_ready, FUTEX_WAIT_PRIVATE, state, &step);
	}
}

/*
 * The clients past their deadline at @now, served or dropped; returns the
 * poll timeout (ms, at most @timeout) that wakes the helper at the next
 * deadline.
 */
static int clients_due(uint64_t now, int timeout)
{
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &helper.clients[i];
		int left;

		if (c->fd < 0)
			continue;
		if (now >= c->deadline_ns) {
			/*
			 * Past its deadline - but maybe by our fault: the request
			 * (or the room for the answer) may have been waiting
			 * while this thread rendered other clients' reports, or
			 * was not scheduled.  Serve what is there first; drop the
			 * client only when that does not move it on (then it is
			 * silent or slow).  Dropping it unread reset connections
			 * whose request sat in the socket (ctl_stress.sh).
			 */
			uint64_t d = c->deadline_ns;
			size_t off = c->out_off;

			if (c->out)
				client_write(c);
			else
				client_read(c);
			if (c->fd >= 0 && c->deadline_ns == d && c->out_off == off)
				client_close(c); /* silent or slow: drop it */
			if (c->fd < 0)
				continue;
			if (c->deadline_ns == d) /* progress on the answer */
				c->deadline_ns = now + (uint64_t)ANSWER_MS * 1000000u;
		}
		left = (int)((c->deadline_ns - now) / 1000000u) + 1;
		timeout = left < timeout ? left : timeout;
	}
	return timeout;
}

/* The clients whose descriptors poll() found ready (@pfd, one per client). */
static void clients_serve(const struct pollfd *pfd)
{
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &helper.clients[i];
		short ev = pfd[i].revents;

		if (c->fd < 0 || !ev)
			continue;
		if (c->out)
			client_write(c);
		else if (ev & (POLLIN | POLLHUP | POLLERR))
			client_read(c);
	}
}

static void *helper_main(void *arg)
{
	struct pollfd pfd[MAX_CLIENTS + 2];
	uint64_t next_scan = 0;

	(void)arg;
	sp_thread_enter(); /* never recorded, never registered */
	if (!helper_move(HELPER_STARTING, HELPER_RUNNING))
		return NULL; /* the process is exiting */
	sp_futex(&helper_ready, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL);
	if (!helper_move(HELPER_RUNNING, HELPER_MAKING))
		return NULL;
	/* Without its socket (a warning said why) the thread still serves the
	 * watchdog and the report signal, when those are asked for. */
	if (sp_opts.control && helper.listen_fd < 0 && open_socket() && !sp_watchdog_wanted() &&
	    !sp_opts.report_signal) {
		helper_settle(HELPER_SETTLED);
		return NULL;
	}
	helper_settle(HELPER_SETTLED);
	for (;;) {
		uint64_t now = sp_now_ns();
		int timeout = 1000, n = 0;

		if (sp_watchdog_wanted() && now >= next_scan)
			next_scan = now + (uint64_t)sp_watchdog_scan(stderr) * 1000000u;
		if (sp_watchdog_wanted())
			timeout = (int)((next_scan - now) / 1000000u) + 1;
		pfd[n++] = (struct pollfd){ .fd = helper.listen_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = starter.sig_pipe[0], .events = POLLIN };
		timeout = clients_due(now, timeout);
		for (int i = 0; i < MAX_CLIENTS; i++)
			pfd[n++] = (struct pollfd){ .fd = helper.clients[i].fd,
						    .events = helper.clients[i].out ? POLLOUT : POLLIN };
		if (poll(pfd, (nfds_t)n, timeout) <= 0)
			continue;
		if (pfd[1].revents & POLLIN)
			signal_report();
		clients_serve(pfd + 2);
		if (pfd[0].revents & POLLIN)
			accept_clients();
	}
	return NULL;
}

void sp_control_exit(void)
{
	struct sp_thread *saved;

	if (starter.pid != getpid())
		return;
	/* A program that ends at once: a helper that has not begun its socket
	 * makes none; one in the making is waited for, and removed. */
	if (!helper_move(HELPER_STARTING, HELPER_CLOSED))
		helper_move(HELPER_RUNNING, HELPER_CLOSED);
	helper_wait_past(HELPER_MAKING);
	if (helper.sock_path[0])
		unlink(helper.sock_path);
	/* Totals of warned waits that ended since the helper's last scan. */
	if (sp_watchdog_wanted()) {
		saved = sp_thread_enter();
		sp_watchdog_scan(stderr);
		sp_thread_leave(saved);
	}
}

void sp_control_exit_now(void)
{
	if (starter.pid == getpid() && helper.sock_path[0])
		unlink(helper.sock_path);
}

static void close_inherited(void)
{
	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (helper.clients[i].fd >= 0)
			close(helper.clients[i].fd);
		free(helper.clients[i].out);
		memset(&helper.clients[i], 0, sizeof(helper.clients[i]));
		helper.clients[i].fd = -1;
	}
	if (helper.listen_fd >= 0)
		close(helper.listen_fd);
	helper.listen_fd = -1;
	helper.sock_path[0] = '\0';
}

static int restart_pending; /* in a forked child: start the helper thread */

/* Before fork(): the helper's socket made, so that the child's copy of
 * listen_fd names every descriptor it inherits (it closes them). */
void sp_control_fork_prepare(void)
{
	if (starter.pid == getpid()) {
		helper_wait_past(HELPER_STARTING);
		helper_wait_past(HELPER_RUNNING);
		helper_wait_past(HELPER_MAKING);
	}
}

void sp_control_fork_child(void)
{
	if (!starter.pid)
		return;
	/* The parent's socket, pipe and helper thread are not ours.  Only
	 * close descriptors here: creating a thread inside an atfork handler
	 * deadlocked under ASan (its allocator is still locked by its fork
	 * interceptor), and POSIX allows only async-signal-safe calls here. */
	start_lock = (sp_lock_t)SP_LOCK_INIT;
	close_inherited();
	for (int i = 0; i < 2; i++) {
		if (starter.sig_pipe[i] >= 0)
			close(starter.sig_pipe[i]);
		starter.sig_pipe[i] = -1;
	}
	starter.pid = 0;
	sp_watchdog_forget();
	sp_store_relaxed(&restart_pending, 1);
	/* The forking thread's next profiled lock call takes the registry's
	 * slow path, which calls sp_control_after_fork(). */
	sp_tls_self_set(NULL);
}

void sp_control_after_fork(void)
{
	if (SP_LIKELY(!sp_load_relaxed(&restart_pending)))
		return;
	if (__atomic_exchange_n(&restart_pending, 0, __ATOMIC_ACQ_REL))
		sp_control_start();
}

static int start_locked(void)
{
	pthread_t th;
	sigset_t all, old;
	int rc;

	static int clients_ready;

	if (!clients_ready) {
		for (int i = 0; i < MAX_CLIENTS; i++)
			helper.clients[i].fd = -1;
		clients_ready = 1;
	}
	if (starter.sig_pipe[0] < 0 && pipe2(starter.sig_pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	if (getenv("SYNCPROF_TEST_CONTROL_REQUEST_MS"))
		request_ms = strtoull(getenv("SYNCPROF_TEST_CONTROL_REQUEST_MS"), NULL, 10);
	if (sp_watchdog_wanted())
		sp_store_relaxed(&sp_watch_on, 1);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sp_store_relaxed(&helper_ready, HELPER_STARTING);
	/* Born named (sp_born_named()): the time account leaves it out by
	 * name, also in a report made before it first runs (nothing waits
	 * for that, above).  No other thread runs yet at start-up to see
	 * this one under that name meanwhile. */
	rc = -sp_born_named(&th, NULL, helper_main, "syncprof-ctl");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		close_inherited();
		return rc;
	}
	pthread_detach(th);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* Under the sanitizers, return once the thread runs: their fork()
	 * locks their allocator before the atfork handlers run, so
	 * sp_control_fork_prepare() could not wait for a thread still in its
	 * start, and the child inherited the allocator locked.  Woken by the
	 * helper, not polled.  glibc's fork() needs no such wait: the
	 * prepare handler waits for the helper instead, and a program that
	 * never forks at once does not wait at all. */
	helper_wait_past(HELPER_STARTING);
#endif
	starter.pid = getpid();
	if (sp_opts.report_signal) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_report_signal;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(sp_opts.report_signal, &sa, NULL);
	}
	return 0;
}

int sp_control_start(void)
{
	struct sp_thread *saved;
	int rc = 0;

	saved = sp_thread_enter();
	sp_lock(&start_lock);
	if (starter.pid != getpid())
		rc = start_locked();
	sp_unlock(&start_lock);
	sp_thread_leave(saved);
	return rc;
}
