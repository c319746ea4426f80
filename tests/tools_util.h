/*
 * tools_util.h - helpers for the tests that drive the syncprof CLI and
 * profiled programs: run a command with its output in files, start a
 * profiled program and wait for its control socket, read a file.
 */
#ifndef SYNCPROF_TEST_TOOLS_UTIL_H
#define SYNCPROF_TEST_TOOLS_UTIL_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

static char t_tmpdir[64];

/* A private directory for this test's files. */
static inline const char *t_tmp(void)
{
	if (!t_tmpdir[0]) {
		snprintf(t_tmpdir, sizeof(t_tmpdir), "/tmp/syncprof-test-XXXXXX");
		if (!mkdtemp(t_tmpdir))
			T_FAIL("mkdtemp: %s", strerror(errno));
	}
	return t_tmpdir;
}

static inline void t_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static inline double t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/*
 * Run the shell command made from @fmt; its stdout and stderr are returned
 * in *out and *err (malloc'd, NUL-terminated).  Returns the exit status,
 * or 128 + signal.
 */
static inline int t_run(char **out, char **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static inline int t_run(char **out, char **err, const char *fmt, ...)
{
	char cmd[4096], full[4800], po[300], pe[300];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	snprintf(po, sizeof(po), "%s/out", t_tmp());
	snprintf(pe, sizeof(pe), "%s/err", t_tmp());
	snprintf(full, sizeof(full), "( %s ) >%s 2>%s", cmd, po, pe);
	st = system(full);
	if (out)
		*out = t_slurp_file(po);
	if (err)
		*err = t_slurp_file(pe);
	fprintf(stderr, "$ %s -> %d\n", cmd,
		WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A program started with a pipe on its stdin (closing it ends "serve"). */
struct t_proc {
	pid_t pid;
	int stdin_fd;
	FILE *out; /* its stdout */
};

/* Start @argv with SYNCPROF_OPTIONS=@opts; wait for its first stdout line
 * ("ready") into @line. */
static inline void t_start(struct t_proc *p, const char *opts, char *const argv[], char *line,
			   size_t size)
{
	int in[2], out[2];

	if (pipe(in) || pipe(out))
		T_FAIL("pipe: %s", strerror(errno));
	p->pid = fork();
	if (p->pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		setenv("SYNCPROF_OPTIONS", opts, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->stdin_fd = in[1];
	p->out = fdopen(out[0], "r");
	if (!fgets(line, (int)size, p->out))
		T_FAIL("%s printed nothing", argv[0]);
}

/* Close its stdin and reap it; returns its exit status. */
static inline int t_stop(struct t_proc *p)
{
	int st;

	close(p->stdin_fd);
	waitpid(p->pid, &st, 0);
	fclose(p->out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Wait until @path exists (at most @ms). */
static inline int t_wait_path(const char *path, int ms)
{
	struct stat st;

	for (int i = 0; i < ms; i += 5) {
		if (!stat(path, &st))
			return 0;
		t_sleep_ms(5);
	}
	return -1;
}

/* Sum of every "KEY":N in a JSON text. */
static inline unsigned long long t_json_sum(const char *json, const char *key)
{
	char pat[64];
	unsigned long long sum = 0;
	size_t n;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	n = strlen(pat);
	for (const char *p = strstr(json, pat); p; p = strstr(p + n, pat))
		sum += strtoull(p + n, NULL, 10);
	return sum;
}

/* Number of lines of @s that contain @needle. */
static inline int t_count_lines(const char *s, const char *needle)
{
	int n = 0;

	while (s && *s) {
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) : strlen(s);
		char *line = strndup(s, len);

		n += strstr(line, needle) != NULL;
		free(line);
		s += len + (nl != NULL);
	}
	return n;
}

/* Line number of the first line of @file containing @marker. */
static inline int t_marker_line(const char *file, const char *marker)
{
	char *text = t_slurp_file(file);
	int line = 1;

	if (!text)
		T_FAIL("cannot read %s", file);
	for (const char *p = text; *p; p++) {
		if (!strncmp(p, marker, strlen(marker))) {
			free(text);
			return line;
		}
		line += *p == '\n';
	}
	T_FAIL("marker %s not in %s", marker, file);
	return 0;
}

#endif
