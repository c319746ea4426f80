/*
 * cmd_attach.c - 'syncprof attach PID': profile a running, dynamically
 * linked process that was started without syncprof, then leave it as it
 * was.
 *
 *   syncprof attach PID [--duration S] [report options]
 *
 * Design.  Three steps, each through inject.c (one thread of the target
 * stopped at a system-call boundary for the length of a few calls; the
 * other threads run on):
 *   1. attach: dlopen() of libsyncprof-preload.so in the target (libc's
 *      dlopen, glibc >= 2.34), then syncprof__attach_start(): the library
 *      starts its runtime, rewrites the GOT slots of the lock calls of
 *      every loaded object to its shims and switches profiling on
 *      (preload/attach.c);
 *   2. wait S seconds, or for Ctrl-C (SIGINT, SIGTERM, SIGHUP), watching
 *      that the target lives;
 *   3. detach: syncprof__attach_stop(REQUEST) puts every slot back,
 *      switches profiling off and lets the library's own thread render
 *      the report as 'syncprof ctl PID report' would (same request line,
 *      same bytes) while the program runs; we poll syncprof__attach_box
 *      through /proc/PID/mem, read the report, and a last short stop
 *      frees it (syncprof__attach_release()).
 * The library stays loaded, inert (no thread, no socket, no redirected
 * slot); a later attach finds it and starts a fresh session.
 *
 * Refusals come first, each one line and exit 1 (2 for bad usage): the
 * caller itself, no such process, a zombie, a stopped or already traced
 * process, a kernel thread, another user's process without
 * CAP_SYS_PTRACE, Yama's ptrace_scope (named with its setting), a
 * statically linked or 32-bit program, no glibc with dlopen() in libc, and
 * a process profiled already (libsyncprof linked in or compiled in:
 * 'syncprof ctl'; preloaded: the library says so at start, -EALREADY).
 *
 * Signals: SIGINT, SIGTERM and SIGHUP are blocked from the attach to the
 * exit and taken with sigtimedwait(), so that Ctrl-C during a stop never
 * leaves the target stopped or with redirected slots; it ends the wait
 * (one that is ignored, as in a shell's background job, stays ignored).
 * SIGCHLD is blocked so that inject.c can wait for it.
 *
 * The CLI links no runtime (docs/layout.md): it only reads ELF files,
 * /proc and the target's memory.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "inject.h"
#include "base/control_wire.h"
#include "read/profile_load.h"
#include "report/profile.h"

#define CALL_TIMEOUT_MS 30000
#define CAP_SYS_PTRACE_BIT 19

static const char help[] =
	"Usage: syncprof attach PID [--duration S] [-q] [REPORT OPTIONS]\n"
	"\n"
	"Profile a running, dynamically linked process that was started without\n"
	"syncprof, for S seconds (default: until Ctrl-C), then print or write its\n"
	"report as 'syncprof run' would, and leave the process running,\n"
	"unprofiled.  Attaching again later works.\n"
	"\n"
	"How: ptrace stops one thread of PID at a system call for a few\n"
	"milliseconds, makes it dlopen() libsyncprof-preload.so and redirect the\n"
	"lock calls of every loaded object (their GOT slots) to the profiler; at\n"
	"the end two more short stops put the slots back and free the report,\n"
	"which the library renders meanwhile and syncprof reads from the process.\n"
	"The library stays loaded but inert.  A child the process forks while\n"
	"attached puts the slots back at once and runs unprofiled.  docs/attach.md\n"
	"has the costs and the limits (calls made inside libc, statically linked\n"
	"programs).\n"
	"\n"
	"Options:\n"
	"  -d, --duration S   profile for S seconds (a decimal number > 0)\n"
	"  -q, --quiet        no 'attached'/'detached' lines on stderr\n"
	"%s"
	"\n"
	"Needs: the same user as PID, or CAP_SYS_PTRACE (root); with\n"
	"kernel.yama.ptrace_scope=1 only root (or CAP_SYS_PTRACE) can attach to a\n"
	"process that is not its own child; 2 needs CAP_SYS_PTRACE; 3 forbids it.\n"
	"Refused: statically linked or 32-bit programs, processes already profiled\n"
	"(use 'syncprof ctl PID'), zombies, stopped or traced processes.\n"
	"Exit status: 0 report written, 1 refused or failed (the process is left\n"
	"as it was), 2 bad usage.\n"
	"Example: syncprof attach $(pidof memcached) -d 10 -n 5\n";

struct target {
	pid_t pid;
	char comm[64];
	char libc[PATH_MAX];      /* as /proc/PID/maps names it */
	char libc_file[PATH_MAX + 32]; /* the same, readable from here */
	char lib[PATH_MAX];       /* libsyncprof-preload.so, resolved */
};

static int read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return 0;
}

static int has_cap_ptrace(void)
{
	char buf[4096], *p;

	if (read_file("/proc/self/status", buf, sizeof(buf)) || !(p = strstr(buf, "CapEff:")))
		return geteuid() == 0;
	return (strtoull(p + 7, NULL, 16) >> CAP_SYS_PTRACE_BIT) & 1;
}

static int ptrace_scope(void)
{
	char buf[16];

	if (read_file("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)))
		return 0; /* no Yama */
	return atoi(buf);
}

static const char *scope_why(int scope)
{
	switch (scope) {
	case 1: return "kernel.yama.ptrace_scope is 1 (restricted: only a parent may trace its "
		       "child); attach as root or with CAP_SYS_PTRACE, or set it to 0 (sysctl "
		       "kernel.yama.ptrace_scope=0)";
	case 2: return "kernel.yama.ptrace_scope is 2 (admin-only): attaching needs "
		       "CAP_SYS_PTRACE (root)";
	case 3: return "kernel.yama.ptrace_scope is 3 (no attach): ptrace is disabled until the "
		       "next reboot";
	}
	return NULL;
}

/* Is @pid a descendant of ours? */
static int is_descendant(pid_t pid)
{
	char path[64], buf[4096], *p;

	for (int depth = 0; pid > 1 && depth < 64; depth++) {
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		if (read_file(path, buf, sizeof(buf)) || !(p = strstr(buf, "PPid:")))
			return 0;
		pid = (pid_t)strtol(p + 5, NULL, 10);
		if (pid == getpid())
			return 1;
	}
	return 0;
}

/* libc.so.6 of @t->pid, and whether libsyncprof.so is mapped. */
static int scan_maps(struct target *t, int *linked)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	*linked = 0;
	t->libc[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)t->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/'), *base;

		if (!name)
			continue;
		name[strcspn(name, "\n")] = '\0';
		base = strrchr(name, '/') + 1;
		if (!strcmp(base, "libc.so.6") && !t->libc[0])
			snprintf(t->libc, sizeof(t->libc), "%s", name);
		if (!strncmp(base, "libsyncprof.so", 14))
			*linked = 1;
	}
	fclose(f);
	return 0;
}

/* The ELF of /proc/PID/exe: 1 when it has a PT_INTERP, 0 when static,
 * -1 when it is not a 64-bit x86-64 ELF. */
static int exe_kind(pid_t pid)
{
	char path[64];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd, dynamic = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -2;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64 ||
	    eh.e_phentsize != sizeof(ph)) {
		close(fd);
		return -1;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) == sizeof(ph) &&
		    ph.p_type == PT_INTERP)
			dynamic = 1;
	close(fd);
	return dynamic;
}

/* The process is there, and running: /proc/PID/stat's state; its name
 * into t->comm. */
static int check_state(struct target *t)
{
	char path[64], buf[4096], *p;

	if (t->pid == getpid()) {
		cli_error("attach", "process %d is this syncprof itself", (int)t->pid);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)t->pid);
	if (read_file(path, buf, sizeof(buf))) {
		cli_error("attach", "no process %d (it exited, or the pid is wrong)", (int)t->pid);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)t->pid);
	if (!read_file(path, t->comm, sizeof(t->comm)))
		t->comm[strcspn(t->comm, "\n")] = '\0';
	p = strrchr(buf, ')');
	if (p && (p[2] == 'Z' || p[2] == 'X')) {
		cli_error("attach", "process %d (%s) is a zombie: it has exited", (int)t->pid,
			  t->comm);
		return 1;
	}
	if (p && p[2] == 'T') {
		cli_error("attach", "process %d (%s) is stopped; continue it first (kill -CONT %d)",
			  (int)t->pid, t->comm, (int)t->pid);
		return 1;
	}
	return 0;
}

/* This syncprof may trace it: no tracer yet, its user's or
 * CAP_SYS_PTRACE, as the Yama ptrace scope allows. */
static int check_permission(const struct target *t)
{
	char path[64], buf[4096], *p;
	unsigned long uids[4];
	int scope = ptrace_scope();

	snprintf(path, sizeof(path), "/proc/%d/status", (int)t->pid);
	if (read_file(path, buf, sizeof(buf)) || !(p = strstr(buf, "Uid:")) ||
	    sscanf(p + 4, "%lu %lu %lu %lu", &uids[0], &uids[1], &uids[2], &uids[3]) != 4) {
		cli_error("attach", "cannot read /proc/%d/status", (int)t->pid);
		return 1;
	}
	if ((p = strstr(buf, "TracerPid:")) && atoi(p + 10) != 0) {
		cli_error("attach", "process %d (%s) is traced by process %d (a debugger?); "
				    "detach it first",
			  (int)t->pid, t->comm, atoi(p + 10));
		return 1;
	}
	if (!has_cap_ptrace()) {
		for (int i = 0; i < 3; i++)
			if (uids[i] != (unsigned long)geteuid()) {
				cli_error("attach",
					  "process %d (%s) belongs to uid %lu, not to you (uid %u); "
					  "attaching needs its user or CAP_SYS_PTRACE (root)",
					  (int)t->pid, t->comm, uids[i], (unsigned)geteuid());
				return 1;
			}
		if (scope >= 2 || (scope == 1 && !is_descendant(t->pid))) {
			cli_error("attach", "cannot attach to process %d (%s): %s", (int)t->pid,
				  t->comm, scope_why(scope));
			return 1;
		}
	} else if (scope == 3) {
		cli_error("attach", "cannot attach to process %d (%s): %s", (int)t->pid, t->comm,
			  scope_why(scope));
		return 1;
	}
	return 0;
}

/* Its program can take the preload: a dynamically linked x86-64 program
 * on glibc, not profiled already; its libc's path into t->libc_file. */
static int check_program(struct target *t)
{
	char path[64];
	int linked, kind = exe_kind(t->pid);
	uint64_t v;

	if (kind == -2) {
		cli_error("attach", "process %d (%s) has no program file (a kernel thread, or it "
				    "exited)",
			  (int)t->pid, t->comm);
		return 1;
	}
	if (kind < 0) {
		cli_error("attach", "process %d (%s) is not a 64-bit x86-64 program", (int)t->pid,
			  t->comm);
		return 1;
	}
	if (kind == 0) {
		cli_error("attach",
			  "process %d (%s) is statically linked: attach needs a dynamically linked "
			  "program (for a static one, build with -include syncprof/instrument.h)",
			  (int)t->pid, t->comm);
		return 1;
	}
	if (scan_maps(t, &linked)) {
		cli_error("attach", "cannot read /proc/%d/maps", (int)t->pid);
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
	if (linked || !inject_elf_symbol(path, "syncprof__enabled", &v)) {
		cli_error("attach",
			  "process %d (%s) is profiled already (libsyncprof is linked in); use "
			  "'syncprof ctl %d' (it needs SYNCPROF_OPTIONS=control=1)",
			  (int)t->pid, t->comm, (int)t->pid);
		return 1;
	}
	if (!t->libc[0]) {
		cli_error("attach", "process %d (%s) does not use glibc's libc.so.6", (int)t->pid,
			  t->comm);
		return 1;
	}
	snprintf(t->libc_file, sizeof(t->libc_file), "/proc/%d/root%s", (int)t->pid, t->libc);
	return 0;
}

/* Every refusal that can be told before touching the process. */
static int check_target(struct target *t)
{
	return check_state(t) || check_permission(t) || check_program(t);
}

static int inject_fail(const struct target *t, struct inject *in, int rc)
{
	if (rc == -EPERM)
		cli_error("attach", "cannot attach to process %d (%s): %s", (int)t->pid, t->comm,
			  scope_why(ptrace_scope())
				  ? scope_why(ptrace_scope())
				  : "ptrace was refused (not permitted here: a container's seccomp "
				    "policy, or the process is not dumpable)");
	else if (in->gone || rc == -ESRCH)
		cli_error("attach", "process %d (%s) exited during the attach", (int)t->pid,
			  t->comm);
	else
		cli_error("attach", "process %d (%s): %s", (int)t->pid, t->comm, in->err);
	return 1;
}

/* An address in the target: @sym of @file loaded from @maps_path. */
static int target_fn(const struct target *t, const char *maps_path, const char *file,
		     const char *sym, uint64_t *addr)
{
	uint64_t bias, v;

	if (inject_load_bias(t->pid, maps_path, file, &bias) || inject_elf_symbol(file, sym, &v)) {
		cli_error("attach", "process %d (%s): no %s in %s", (int)t->pid, t->comm, sym,
			  maps_path);
		return -1;
	}
	*addr = bias + v;
	return 0;
}

/* The target's dlerror() text after a failed dlopen(). */
static void dl_error(const struct target *t, struct inject *in, char *buf, size_t size)
{
	uint64_t fn, s = 0;

	snprintf(buf, size, "unknown error");
	if (target_fn(t, t->libc, t->libc_file, "dlerror", &fn) ||
	    inject_call(in, fn, 0, 0, 0, &s, CALL_TIMEOUT_MS) || !s)
		return;
	for (size_t i = 0; i + 1 < size; i++) {
		if (inject_read(in, s + i, &buf[i], 1) || !buf[i]) {
			buf[i] = '\0';
			return;
		}
		buf[i + 1] = '\0';
	}
}

/* Step 1.  Returns the slots redirected (>= 0), or -1 (said why). */
static long do_attach(const struct target *t, uint64_t *stopped_ns)
{
	struct inject in;
	uint64_t dlopen_fn, start_fn, arg, handle = 0, ret = 0;
	char err[512];
	int rc;

	if (target_fn(t, t->libc, t->libc_file, "dlopen", &dlopen_fn)) {
		cli_error("attach", "process %d (%s): its libc has no dlopen() (glibc older than "
				    "2.34?)",
			  (int)t->pid, t->comm);
		return -1;
	}
	rc = inject_begin(&in, t->pid);
	if (rc)
		return inject_fail(t, &in, rc), -1;
	rc = inject_put(&in, t->lib, strlen(t->lib) + 1, &arg);
	if (!rc)
		rc = inject_call(&in, dlopen_fn, arg, 2 /* RTLD_NOW */, 0, &handle, CALL_TIMEOUT_MS);
	if (!rc && !handle) {
		dl_error(t, &in, err, sizeof(err));
		inject_end(&in);
		cli_error("attach", "process %d (%s): dlopen(%s) failed: %s", (int)t->pid, t->comm,
			  t->lib, err);
		return -1;
	}
	if (!rc && target_fn(t, t->lib, t->lib, "syncprof__attach_start", &start_fn)) {
		inject_end(&in);
		return -1;
	}
	if (!rc)
		rc = inject_put(&in, "", 1, &arg);
	if (!rc)
		rc = inject_call(&in, start_fn, arg, 0, 0, &ret, CALL_TIMEOUT_MS);
	if (rc) {
		int e = inject_end(&in);

		(void)e;
		return inject_fail(t, &in, rc), -1;
	}
	if (inject_end(&in))
		return inject_fail(t, &in, -EIO), -1;
	*stopped_ns = in.stopped_ns;
	if ((long)ret == -EALREADY) {
		cli_error("attach",
			  "process %d (%s) is profiled already (libsyncprof-preload.so is preloaded); "
			  "use 'syncprof ctl %d' (it needs SYNCPROF_OPTIONS=control=1)",
			  (int)t->pid, t->comm, (int)t->pid);
		return -1;
	}
	if ((long)ret < 0) {
		cli_error("attach", "process %d (%s): the profiler could not start there: %s",
			  (int)t->pid, t->comm, strerror((int)-(long)ret));
		return -1;
	}
	return (long)ret;
}

/* One stop of a thread of @t, for one call of @fn(@str or @a0); its return
 * value to *@ret, the stop's length added to *@stopped_ns.  0, or 1 (said
 * why). */
static int call_once(const struct target *t, uint64_t fn, const char *str, uint64_t a0,
		     uint64_t *ret, uint64_t *stopped_ns)
{
	struct inject in;
	int rc = inject_begin(&in, t->pid);

	if (rc)
		return inject_fail(t, &in, rc);
	if (str)
		rc = inject_put(&in, str, strlen(str) + 1, &a0);
	if (!rc)
		rc = inject_call(&in, fn, a0, 0, 0, ret, CALL_TIMEOUT_MS);
	if (inject_end(&in) && !rc)
		rc = -EIO;
	*stopped_ns += in.stopped_ns;
	return rc ? inject_fail(t, &in, rc) : 0;
}

static int read_mem(int fd, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));

		if (n <= 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}

static int target_alive(pid_t pid);

/*
 * Step 3.  Stop: slots back, profiling off, the report asked for; the
 * library's own thread renders it while the program runs, and we read it
 * from /proc/PID/mem; a second short stop frees it.  The report's bytes go
 * to *@out (malloc'd), the slots put back to *@restored.  0, or 1 (said
 * why).
 */
static int do_detach(const struct target *t, const char *request, char **out, size_t *out_len,
		     long *restored, uint64_t stopped_ns[2])
{
	uint64_t stop_fn, release_fn, box_addr, ret = 0;
	struct sp_attach_box box;
	char path[64], *buf = NULL;
	int fd, rc = 0;

	if (target_fn(t, t->lib, t->lib, "syncprof__attach_stop", &stop_fn) ||
	    target_fn(t, t->lib, t->lib, "syncprof__attach_release", &release_fn) ||
	    target_fn(t, t->lib, t->lib, "syncprof__attach_box", &box_addr))
		return 1;
	if (call_once(t, stop_fn, request, 0, &ret, &stopped_ns[0])) {
		if (target_alive(t->pid))
			cli_error("attach",
				  "process %d (%s) is still profiled, its lock calls redirected: run "
				  "'syncprof attach %d' again to take the session over and detach",
				  (int)t->pid, t->comm, (int)t->pid);
		return 1;
	}
	*restored = (long)ret;
	if ((long)ret < 0) {
		cli_error("attach", "process %d (%s): the detach failed: %s", (int)t->pid, t->comm,
			  strerror((int)-(long)ret));
		return 1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error("attach", "cannot open %s: %s", path, strerror(errno));
		return 1;
	}
	for (int i = 0;; i++) {
		struct timespec step = { 0, 10000000 };

		if (read_mem(fd, box_addr, &box, offsetof(struct sp_attach_box, request)) ||
		    !target_alive(t->pid)) {
			close(fd);
			cli_error("attach", "process %d (%s) exited before its report was read",
				  (int)t->pid, t->comm);
			return 1;
		}
		/* DONE is stored after the rest: read the rest again after it. */
		if (box.state == SP_ATTACH_DONE &&
		    !read_mem(fd, box_addr, &box, offsetof(struct sp_attach_box, request)))
			break;
		if (i == 12000) { /* 120 s */
			close(fd);
			cli_error("attach", "process %d (%s): its report did not come within 120 s "
					    "(the slots are put back; profiling is off)",
				  (int)t->pid, t->comm);
			return 1;
		}
		nanosleep(&step, NULL);
	}
	if (!box.rc && box.data) {
		buf = malloc(box.len + 1);
		if (!buf || read_mem(fd, box.data, buf, box.len)) {
			cli_error("attach", "process %d (%s): reading its report failed", (int)t->pid,
				  t->comm);
			rc = 1;
		}
	}
	close(fd);
	if (call_once(t, release_fn, NULL, 0, &ret, &stopped_ns[1]))
		rc = 1;
	if (!rc && box.rc) {
		cli_error("attach", "process %d (%s): the report failed: %s", (int)t->pid, t->comm,
			  strerror(-box.rc));
		rc = 1;
	}
	if (rc) {
		free(buf);
		return 1;
	}
	*out = buf;
	*out_len = buf ? box.len : 0;
	return 0;
}


static int write_report(const struct target *t, const struct cli_render_opts *o,
			const char *data, size_t len)
{
	FILE *out = cli_open_output("attach", o);
	int rc = 0;

	if (!out)
		return 1;
	if (cli_render_here(o)) {
		struct sp_profile p;
		char name[64], err[512];

		snprintf(name, sizeof(name), "the report of process %d", (int)t->pid);
		if (sp_profile_parse(name, data, len, &p, err, sizeof(err))) {
			cli_error("attach", "%s", err);
			rc = 1;
		} else {
			int e = sp_render(out, &p, &o->report);

			if (e) {
				cli_error("attach", "rendering the report (%s) failed: %s",
					  sp_format_name(o->report.format), strerror(-e));
				rc = 1;
			}
			sp_profile_free(&p);
		}
	} else if (len) {
		fwrite(data, 1, len, out);
	}
	if (cli_close_output("attach", o, out))
		rc = 1;
	return rc;
}

/* Is the target still there (not exited, not a zombie)? */
static int target_alive(pid_t pid)
{
	char path[64], buf[1024], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_file(path, buf, sizeof(buf)))
		return 0;
	p = strrchr(buf, ')');
	return !(p && (p[2] == 'Z' || p[2] == 'X'));
}

/* Step 2: @seconds (0: no limit) or a signal; 0, or -1 when the target
 * went away. */
static int wait_session(pid_t pid, double seconds, const sigset_t *stop)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct timespec step = { 0, 100000000 }; /* 0.1 s: notice an exit */
		double left = 1e9;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (seconds > 0) {
			left = seconds - ((double)(now.tv_sec - t0.tv_sec) +
					  (double)(now.tv_nsec - t0.tv_nsec) / 1e9);
			if (left <= 0)
				return 0;
			if (left < 0.1) {
				step.tv_sec = 0;
				step.tv_nsec = (long)(left * 1e9) + 1;
			}
		}
		if (sigtimedwait(stop, NULL, &step) > 0)
			return 0;
		if (!target_alive(pid))
			return -1;
	}
}

static int find_library(char *buf, size_t size)
{
	const char *lib = cli_find_preload();
	char *r;

	if (!lib)
		return -1;
	r = realpath(lib, NULL);
	if (!r || strlen(r) >= size) {
		free(r);
		return -1;
	}
	strcpy(buf, r);
	free(r);
	return 0;
}

/* The command line into @o, @pid, @seconds and @quiet: 0, 1 after --help,
 * or 2 after saying what is wrong. */
static int attach_args(int argc, char **argv, struct cli_render_opts *o, long *pid,
		       double *seconds, int *quiet)
{
	char *end;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			printf(help, cli_render_help);
			return 1;
		}
		if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			*quiet = 1;
			continue;
		}
		if (!strcmp(a, "-d") || !strcmp(a, "--duration") || !strncmp(a, "--duration=", 11)) {
			const char *v = a[2] == '-' && a[10] == '=' ? a + 11 : NULL;

			if (!v && i + 1 >= argc) {
				cli_error("attach", "option %s needs a value", a);
				return 2;
			}
			if (!v)
				v = argv[++i];
			errno = 0;
			*seconds = strtod(v, &end);
			if (!*v || *end || errno || !(*seconds > 0) || !isfinite(*seconds) ||
			    *seconds > 1e7) {
				cli_error("attach", "--duration: '%s' is not a number of seconds > 0",
					  v);
				return 2;
			}
			continue;
		}
		r = cli_render_option("attach", argc, argv, &i, o);
		if (r < 0)
			return 2;
		if (r > 0)
			continue;
		if (a[0] == '-' || *pid) {
			cli_error("attach", "unexpected argument '%s' (see --help)", a);
			return 2;
		}
		*pid = strtol(a, &end, 10);
		if (!*a || *end || *pid <= 0 || *pid > 0x3fffffff) {
			cli_error("attach", "'%s' is not a process id", a);
			return 2;
		}
	}
	if (!*pid) {
		cli_error("attach", "usage: syncprof attach PID [--duration S] [REPORT OPTIONS] "
				    "(see --help)");
		return 2;
	}
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct cli_render_opts o;
	struct target t;
	char request[SP_CTL_LINE_MAX], *report = NULL;
	sigset_t block, stop;
	double seconds = 0;
	long pid = 0, slots, restored = 0;
	uint64_t stop_attach = 0, stop_detach[2] = { 0, 0 };
	size_t report_len = 0;
	int quiet = 0, rc;

	cli_render_opts_init(&o);
	rc = attach_args(argc, argv, &o, &pid, &seconds, &quiet);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (cli_report_request(&o, request, sizeof(request))) {
		cli_error("attach", "report options too long (or --src-root with a space)");
		return 2;
	}
	memset(&t, 0, sizeof(t));
	t.pid = (pid_t)pid;
	if (check_target(&t))
		return 1;
	if (find_library(t.lib, sizeof(t.lib))) {
		cli_error("attach", "cannot find libsyncprof-preload.so (set SYNCPROF_PRELOAD)");
		return 1;
	}
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	block = stop;
	sigaddset(&block, SIGCHLD);
	/* Blocked until the command exits: a second Ctrl-C during the detach
	 * or while the report is written must not kill us half-way. */
	sigprocmask(SIG_BLOCK, &block, NULL);

	slots = do_attach(&t, &stop_attach);
	if (slots < 0)
		return 1;
	if (!quiet)
		fprintf(stderr,
			"syncprof attach: attached to process %d (%s): %ld lock-call slots "
			"redirected, one thread stopped %.2f ms; %s\n",
			(int)t.pid, t.comm, slots, (double)stop_attach / 1e6,
			seconds > 0 ? "profiling" : "profiling until Ctrl-C");
	if (wait_session(t.pid, seconds, &stop)) {
		cli_error("attach", "process %d (%s) exited while attached; no report", (int)t.pid,
			  t.comm);
		return 1;
	}
	rc = do_detach(&t, request, &report, &report_len, &restored, stop_detach);
	if (rc)
		return 1;
	if (!quiet)
		fprintf(stderr,
			"syncprof attach: detached from process %d: %ld slots put back, one thread "
			"stopped %.2f ms, then %.2f ms to free the report\n",
			(int)t.pid, restored, (double)stop_detach[0] / 1e6,
			(double)stop_detach[1] / 1e6);
	rc = write_report(&t, &o, report, report_len);
	free(report);
	return rc;
}
