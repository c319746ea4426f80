/*
 * ctl_client.c - the client end of the control socket (docs/control.md),
 * shared by 'syncprof ctl' (cmd_ctl.c) and 'syncprof top' (cmd_top.c).
 *
 * Design: one connection per request; the request is one line
 * ("report format=json top=5"), the answer "ok LEN\n" + LEN bytes or
 * "error MESSAGE\n" (src/runtime/control_proto.c).  Before connecting, the
 * PID is checked so that each way of failing gets its own message and its
 * own errno: no such process (-ESRCH), someone else's process (-EPERM), a
 * process without a control socket (-ENOENT), a stale socket
 * (-ECONNREFUSED), a socket answered by another process (-EADDRINUSE), no
 * answer (-ETIMEDOUT, -EPROTO: the process exited, is exiting, or answers
 * only its owner and root), a refused request (-EREMOTEIO).  The answer must arrive within
 * CTL_TIMEOUT_MS.
 *
 * Nothing here prints: the message goes to the caller's buffer, so that
 * 'ctl --list' can stay quiet about processes that are gone and 'top' can
 * restore the terminal before it says why it stopped.
 *
 * Alternatives: one persistent connection for top's refreshes - the
 * server closes every connection after one answer (so that a client can
 * never pin one of its 8 slots), and a connection costs microseconds next
 * to rendering a report.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/control_wire.h"
#include "cli.h"

#define CTL_TIMEOUT_MS 30000

static int fail(char *err, size_t size, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t size, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return rc;
}

int cli_read_comm(pid_t pid, char *buf, size_t size)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	buf[0] = '\0';
	if (!f)
		return -errno;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return 0;
}

/* Connect to @pid's control socket: the descriptor, or a negative errno
 * with the reason in @err. */
static int ctl_connect(pid_t pid, char *err, size_t esize)
{
	struct sockaddr_un addr;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char dir[sizeof(addr.sun_path)], comm[64], proc[64];
	struct stat st;
	uid_t uid;
	int fd;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (kill(pid, 0) && errno == ESRCH)
		return fail(err, esize, -ESRCH, "no process %d (it exited, or the pid is wrong)",
			    (int)pid);
	if (stat(proc, &st)) {
		int e = errno;

		return fail(err, esize, e == ENOENT ? -ESRCH : -e, "cannot look at process %d: %s",
			    (int)pid, strerror(e));
	}
	cli_read_comm(pid, comm, sizeof(comm));
	if (st.st_uid != geteuid() && geteuid() != 0)
		return fail(err, esize, -EPERM,
			    "process %d (%s) belongs to uid %u, not to you (uid %u); only "
			    "its owner or root can control it",
			    (int)pid, comm, (unsigned)st.st_uid, (unsigned)geteuid());
	/* The first of the server's candidates (control_wire.h) that has
	 * the socket: the pid that answers is checked below. */
	uid = st.st_uid;
	for (int i = 0;; i++) {
		int rc = sp_ctl_dir(uid, i, dir, sizeof(dir) - 16);

		if (rc == -ENAMETOOLONG)
			return fail(err, esize, rc,
				    "SYNCPROF_CONTROL_DIR is too long for a socket path");
		if (rc) {
			char where[2 * sizeof(addr.sun_path) + 16];

			sp_ctl_dir(uid, 0, where, sizeof(where));
			if (!sp_ctl_dir(uid, 1, dir, sizeof(dir) - 16))
				snprintf(where + strlen(where), sizeof(where) - strlen(where),
					 " or %s", dir);
			return fail(err, esize, -ENOENT,
				    "process %d (%s) is not profiled with a control socket "
				    "(no %d.sock in %s); start it with "
				    "SYNCPROF_OPTIONS=control=1",
				    (int)pid, comm, (int)pid, where);
		}
		memset(&addr, 0, sizeof(addr));
		addr.sun_family = AF_UNIX;
		snprintf(addr.sun_path, sizeof(addr.sun_path), "%.*s/%d.sock",
			 (int)(sizeof(dir) - 16), dir, (int)pid);
		if (!lstat(addr.sun_path, &st) && S_ISSOCK(st.st_mode))
			break;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		if (e == ECONNREFUSED)
			return fail(err, esize, -ECONNREFUSED,
				    "process %d (%s) does not listen on %s any more (a stale "
				    "socket: the process exec'd or stopped its helper thread)",
				    (int)pid, comm, addr.sun_path);
		return fail(err, esize, -e, "cannot connect to %s: %s", addr.sun_path,
			    strerror(e));
	}
	if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) && cred.pid != pid) {
		close(fd);
		return fail(err, esize, -EADDRINUSE,
			    "%s is answered by process %d, not %d; not talking to it",
			    addr.sun_path, (int)cred.pid, (int)pid);
	}
	return fd;
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read the whole answer (until EOF) into a malloc'd buffer. */
static char *recv_all(int fd, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);

	while (buf) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;
		int pr = poll(&p, 1, CTL_TIMEOUT_MS);

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			free(buf);
			errno = ETIMEDOUT;
			return NULL;
		}
		if (n == cap) {
			char *b = realloc(buf, cap *= 2);

			if (!b)
				break;
			buf = b;
		}
		r = recv(fd, buf + n, cap - n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		if (r == 0) {
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	return NULL;
}

/* Why @pid closed the connection without an answer, as far as can be told
 * afterwards: it exited (or is a zombie), it belongs to someone else (it
 * answers only its owner and root), or it is exiting. */
static const char *why_no_answer(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned uid = 0;
	FILE *f;
	int state = 0;

	if (kill(pid, 0) && errno == ESRCH)
		return "it has exited";
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "re"))) {
		while (fgets(buf, sizeof(buf), f)) {
			if (!strncmp(buf, "State:", 6) && (p = buf + 6 + strspn(buf + 6, " \t")))
				state = *p;
			else if (!strncmp(buf, "Uid:", 4))
				sscanf(buf + 4, "%*u %u", &uid); /* the effective uid */
		}
		fclose(f);
	}
	if (state == 'Z' || state == 'X')
		return "it has exited";
	if (geteuid() && uid != geteuid())
		return "it answers only its owner and root";
	return "it is exiting, or its control thread stopped";
}

int cli_ctl_request(pid_t pid, const char *line, char **payload, size_t *plen, char *err,
		    size_t esize)
{
	int fd = ctl_connect(pid, err, esize);
	char *ans, *nl;
	size_t len = 0;
	unsigned long long want;

	if (fd < 0)
		return fd;
	if (send_all(fd, line, strlen(line))) {
		int e = errno;

		close(fd);
		return fail(err, esize, -e, "process %d: sending the request failed: %s", (int)pid,
			    strerror(e));
	}
	ans = recv_all(fd, &len);
	close(fd);
	if (!ans) {
		int e = errno;

		return fail(err, esize, -e, "process %d: no answer: %s", (int)pid, strerror(e));
	}
	nl = memchr(ans, '\n', len);
	if (!len || !nl) {
		free(ans);
		return fail(err, esize, -EPROTO, "process %d closed the connection without "
			    "answering (%s)", (int)pid, why_no_answer(pid));
	}
	if (!strncmp(ans, "error ", 6)) {
		fail(err, esize, 0, "process %d: %.*s", (int)pid, (int)(nl - ans - 6), ans + 6);
		free(ans);
		return -EREMOTEIO;
	}
	if (sscanf(ans, "ok %llu", &want) != 1 || want != len - (size_t)(nl + 1 - ans)) {
		free(ans);
		return fail(err, esize, -EPROTO, "process %d: truncated or malformed answer",
			    (int)pid);
	}
	*plen = (size_t)want;
	memmove(ans, nl + 1, *plen);
	ans[*plen] = '\0'; /* in the buffer: the "ok LEN" line was longer than 0 bytes */
	*payload = ans;
	return 0;
}

const char *cli_ctl_field(const char *payload, const char *key, char *buf, size_t size)
{
	size_t k = strlen(key);

	for (const char *p = payload; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, k) && p[k] == ':' && p[k + 1] == ' ') {
			snprintf(buf, size, "%.*s", (int)strcspn(p + k + 2, "\n"), p + k + 2);
			return buf;
		}
	snprintf(buf, size, "?");
	return buf;
}
