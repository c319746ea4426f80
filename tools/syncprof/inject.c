/*
 * inject.c - call a function inside another process, with ptrace: the
 * mechanism of 'syncprof attach' (cmd_attach.c).
 *
 * Design.  One thread of the target is stopped (PTRACE_SEIZE, then
 * PTRACE_INTERRUPT); every other thread keeps running.  The thread chosen
 * is one blocked in a system call (/proc/PID/task/TID/syscall), so that it
 * is not in the middle of malloc() or of the dynamic linker: a call to
 * dlopen() made from there cannot wait on a lock its own thread holds.
 * When no thread sleeps in a system call (all compute), the first thread
 * is stopped at the end of its next system call (PTRACE_SYSCALL), a point
 * as safe.
 *
 * A call: the registers are saved; strings go below the thread's stack,
 * under the 128-byte red zone; a return address of 0 is pushed (the stack
 * 16-byte aligned at the call, as the ABI wants); rip = the function,
 * rdi/rsi/rdx = arguments, orig_rax = -1 so that the kernel does not
 * "restart" the interrupted system call into our function.  The thread
 * runs until the function returns to address 0 and faults; that SIGSEGV
 * is never delivered (ptrace sees it first).  Other signals that arrive
 * meanwhile are delivered as usual.  At the end the saved registers go
 * back, so the interrupted system call restarts (or returns) exactly as it
 * would have, and PTRACE_DETACH lets the thread go.
 *
 * Never leave the target stopped: every path out of a successful
 * inject_begin() goes through inject_end(); the CLI blocks SIGINT and
 * SIGTERM while a thread is seized.  If the CLI itself is killed
 * (SIGKILL) while a thread is seized, the kernel detaches it; in the
 * middle of a call the thread would then resume in our function and die
 * on the return to 0: docs/attach.md says so.
 *
 * Alternatives considered: stopping every thread (as gdb does) - a longer
 * and wider stop for no gain, the library is loaded by one thread; writing
 * a call instruction into the code - needs a writable text page or
 * /proc/PID/mem on code, and a breakpoint, where a return to 0 needs
 * neither; process_vm_writev for the strings - refused on pages without
 * write permission, where /proc/PID/mem is not.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inject.h"

#define RED_ZONE 128
#define CHOOSE_TRIES 100   /* looks at the threads, 10 ms apart */
#define SYSCALL_WAIT_MS 3000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int fail(struct inject *in, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct inject *in, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(in->err, sizeof(in->err), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

/*
 * Wait for a state change of @tid, at most @ms (SIGCHLD is blocked by the
 * caller, so that it can be waited for).  0 with *@st, -ETIMEDOUT, or
 * -ESRCH when the thread is gone.
 */
static int wait_tid(pid_t tid, int *st, unsigned ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000u;
	sigset_t chld;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		pid_t r = waitpid(tid, st, __WALL | WNOHANG);
		uint64_t t;
		struct timespec left;

		if (r == tid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -ESRCH;
		t = now_ns();
		if (t >= end)
			return -ETIMEDOUT;
		left.tv_sec = (time_t)((end - t) / 1000000000u);
		left.tv_nsec = (long)((end - t) % 1000000000u);
		if (left.tv_sec == 0 && left.tv_nsec > 10000000)
			left.tv_nsec = 10000000; /* a SIGCHLD that went to another thread */
		else if (left.tv_sec)
			left.tv_sec = 0, left.tv_nsec = 10000000;
		sigtimedwait(&chld, NULL, &left);
	}
}

/* The system call @tid sleeps in, -1 when it runs (or is unknown). */
static long thread_syscall(pid_t pid, pid_t tid)
{
	char path[64], buf[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (buf[0] < '0' || buf[0] > '9')
		return -1; /* "running", or "-1 ..." (stopped outside a call) */
	return strtol(buf, NULL, 10);
}

/* Up to @max thread ids of @pid, the main thread first. */
static int list_threads(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	tids[n++] = pid;
	while ((e = readdir(d)) && n < max) {
		long t = strtol(e->d_name, NULL, 10);

		if (t > 0 && t != pid)
			tids[n++] = (pid_t)t;
	}
	closedir(d);
	return n;
}

/* Seize @tid and stop it; 0, or a negative errno (in->err set). */
static int seize_stop(struct inject *in, pid_t tid)
{
	int st, rc;

	if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(long)PTRACE_O_TRACESYSGOOD))
		return fail(in, errno, "ptrace(PTRACE_SEIZE) of thread %d: %s", (int)tid,
			    strerror(errno));
	in->tid = tid;
	in->seized = 1;
	in->t_stop_ns = now_ns();
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL))
		return fail(in, errno, "ptrace(PTRACE_INTERRUPT): %s", strerror(errno));
	for (int i = 0; i < 100; i++) {
		rc = wait_tid(tid, &st, 5000);
		if (rc)
			return fail(in, rc, rc == -ESRCH ? "the thread exited" :
						 "the thread did not stop within 5 s");
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			in->seized = 0;
			return fail(in, ESRCH, "the thread exited");
		}
		if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP)
			return 0;
		/* A signal on its way: deliver it, the interrupt stop follows. */
		if (WIFSTOPPED(st) && ptrace(PTRACE_CONT, tid, NULL,
					     (void *)(long)WSTOPSIG(st)))
			return fail(in, errno, "ptrace(PTRACE_CONT): %s", strerror(errno));
	}
	return fail(in, EAGAIN, "thread %d did not stop", (int)tid);
}

static void release_thread(struct inject *in)
{
	if (in->seized)
		ptrace(PTRACE_DETACH, in->tid, NULL, NULL);
	in->seized = 0;
}

/* The thread stopped at its next system-call exit (PTRACE_SYSCALL). */
static int stop_at_syscall_exit(struct inject *in)
{
	struct __ptrace_syscall_info info;
	uint64_t end = now_ns() + (uint64_t)SYSCALL_WAIT_MS * 1000000u;
	int st, rc;

	while (now_ns() < end) {
		if (ptrace(PTRACE_SYSCALL, in->tid, NULL, NULL))
			return fail(in, errno, "ptrace(PTRACE_SYSCALL): %s", strerror(errno));
		rc = wait_tid(in->tid, &st, SYSCALL_WAIT_MS);
		if (rc == -ETIMEDOUT)
			break;
		if (rc || WIFEXITED(st) || WIFSIGNALED(st)) {
			in->seized = 0;
			return fail(in, ESRCH, "the process exited");
		}
		if (WSTOPSIG(st) == (SIGTRAP | 0x80) &&
		    ptrace(PTRACE_GET_SYSCALL_INFO, in->tid, (void *)sizeof(info), &info) > 0 &&
		    info.op == PTRACE_SYSCALL_INFO_EXIT)
			return 0;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80) && (st >> 16) != PTRACE_EVENT_STOP &&
		    ptrace(PTRACE_SYSCALL, in->tid, NULL, (void *)(long)WSTOPSIG(st)) == 0) {
			/* delivered the signal; the loop asks again */
			continue;
		}
	}
	/* Stop it again (it runs now) before letting go. */
	ptrace(PTRACE_INTERRUPT, in->tid, NULL, NULL);
	wait_tid(in->tid, &st, 1000);
	return fail(in, ETIMEDOUT,
		    "no thread of process %d made a system call within %d s (it only computes); "
		    "not stopping it at an arbitrary point",
		    (int)in->pid, SYSCALL_WAIT_MS / 1000);
}

int inject_begin(struct inject *in, pid_t pid)
{
	char path[64];
	pid_t tids[512];
	int n, rc;

	memset(in, 0, sizeof(*in));
	in->pid = pid;
	in->mem_fd = -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	for (int tries = 0; tries < CHOOSE_TRIES; tries++) {
		n = list_threads(pid, tids, (int)(sizeof(tids) / sizeof(*tids)));
		if (n < 0)
			return fail(in, ESRCH, "process %d exited", (int)pid);
		for (int i = 0; i < n; i++) {
			if (thread_syscall(pid, tids[i]) < 0)
				continue;
			rc = seize_stop(in, tids[i]);
			if (rc == -EPERM)
				return rc;
			if (rc) {
				release_thread(in);
				continue;
			}
			if (ptrace(PTRACE_GETREGS, in->tid, NULL, &in->saved)) {
				release_thread(in);
				continue;
			}
			if ((long)in->saved.orig_rax >= 0)
				goto stopped; /* still in (or just out of) its call */
			release_thread(in); /* it left the call meanwhile */
		}
		struct timespec step = { 0, 10000000 };
		nanosleep(&step, NULL);
	}
	/* Nobody sleeps in a system call: catch the first one's next exit. */
	rc = seize_stop(in, pid);
	if (rc)
		return rc;
	rc = stop_at_syscall_exit(in);
	if (rc) {
		release_thread(in);
		return rc;
	}
	if (ptrace(PTRACE_GETREGS, in->tid, NULL, &in->saved)) {
		rc = fail(in, errno, "ptrace(PTRACE_GETREGS): %s", strerror(errno));
		release_thread(in);
		return rc;
	}
stopped:
	in->mem_fd = open(path, O_RDWR | O_CLOEXEC);
	if (in->mem_fd < 0) {
		rc = fail(in, errno, "cannot open %s: %s", path, strerror(errno));
		release_thread(in);
		return rc;
	}
	in->scratch = (in->saved.rsp - RED_ZONE - 256) & ~(uint64_t)15;
	return 0;
}

int inject_put(struct inject *in, const void *data, size_t len, uint64_t *addr)
{
	uint64_t a = (in->scratch - len) & ~(uint64_t)15;

	if (pwrite(in->mem_fd, data, len, (off_t)a) != (ssize_t)len)
		return fail(in, errno ? errno : EIO, "writing into process %d failed: %s",
			    (int)in->pid, strerror(errno ? errno : EIO));
	in->scratch = a;
	*addr = a;
	return 0;
}

int inject_read(struct inject *in, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(in->mem_fd, (char *)buf + done, len - done, (off_t)(addr + done));

		if (n <= 0)
			return fail(in, n < 0 ? errno : EIO, "reading process %d failed: %s",
				    (int)in->pid, strerror(n < 0 ? errno : EIO));
		done += (size_t)n;
	}
	return 0;
}

int inject_call(struct inject *in, uint64_t fn, uint64_t a0, uint64_t a1, uint64_t a2,
		uint64_t *ret, unsigned timeout_ms)
{
	struct user_regs_struct r = in->saved;
	uint64_t zero = 0, sp;
	int st, rc;

	/* At the function's first instruction rsp + 8 is 16-byte aligned. */
	sp = (in->scratch - 64) & ~(uint64_t)15;
	sp -= 8;
	if (pwrite(in->mem_fd, &zero, sizeof(zero), (off_t)sp) != sizeof(zero))
		return fail(in, EIO, "writing into process %d failed: %s", (int)in->pid,
			    strerror(errno));
	r.rsp = sp;
	r.rip = fn;
	r.rdi = a0;
	r.rsi = a1;
	r.rdx = a2;
	r.rax = 0;
	r.orig_rax = (uint64_t)-1; /* no system-call restart into our call */
	if (ptrace(PTRACE_SETREGS, in->tid, NULL, &r))
		return fail(in, errno, "ptrace(PTRACE_SETREGS): %s", strerror(errno));
	if (ptrace(PTRACE_CONT, in->tid, NULL, NULL))
		return fail(in, errno, "ptrace(PTRACE_CONT): %s", strerror(errno));
	for (;;) {
		rc = wait_tid(in->tid, &st, timeout_ms);
		if (rc == -ETIMEDOUT) {
			/* Stop it where it is; inject_end() puts it back. */
			ptrace(PTRACE_INTERRUPT, in->tid, NULL, NULL);
			wait_tid(in->tid, &st, 1000);
			return fail(in, ETIMEDOUT,
				    "the call in thread %d did not return within %u s; it was "
				    "abandoned (the process may be left with a lock held)",
				    (int)in->tid, timeout_ms / 1000);
		}
		if (rc || WIFEXITED(st) || WIFSIGNALED(st)) {
			in->seized = 0;
			in->gone = 1;
			return fail(in, ESRCH, "process %d exited during the attach", (int)in->pid);
		}
		if (!WIFSTOPPED(st))
			continue;
		if (WSTOPSIG(st) == SIGSEGV) {
			if (ptrace(PTRACE_GETREGS, in->tid, NULL, &r))
				return fail(in, errno, "ptrace(PTRACE_GETREGS): %s", strerror(errno));
			if (r.rip == 0) {
				*ret = r.rax;
				return 0;
			}
			return fail(in, EFAULT,
				    "the injected call crashed in thread %d at 0x%llx (SIGSEGV, not "
				    "delivered)",
				    (int)in->tid, (unsigned long long)r.rip);
		}
		if ((st >> 16) == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_CONT, in->tid, NULL, NULL);
			continue;
		}
		/* Any other signal is the program's: deliver it. */
		ptrace(PTRACE_CONT, in->tid, NULL, (void *)(long)WSTOPSIG(st));
	}
}

int inject_end(struct inject *in)
{
	int rc = 0;

	if (in->seized) {
		if (ptrace(PTRACE_SETREGS, in->tid, NULL, &in->saved))
			rc = fail(in, errno, "restoring thread %d's registers failed: %s",
				  (int)in->tid, strerror(errno));
		if (ptrace(PTRACE_DETACH, in->tid, NULL, NULL) && !rc)
			rc = fail(in, errno, "ptrace(PTRACE_DETACH): %s", strerror(errno));
		in->seized = 0;
		in->stopped_ns = now_ns() - in->t_stop_ns;
	}
	if (in->mem_fd >= 0)
		close(in->mem_fd);
	in->mem_fd = -1;
	return rc;
}

/* ---- ELF files and maps ------------------------------------------------ */

struct elf_map {
	const uint8_t *p;
	size_t size;
};

static int elf_open(const char *path, struct elf_map *m)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -ENOEXEC;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	m->p = p;
	m->size = (size_t)st.st_size;
	if (memcmp(m->p, ELFMAG, SELFMAG) || m->p[EI_CLASS] != ELFCLASS64) {
		munmap(p, m->size);
		return -ENOEXEC;
	}
	return 0;
}

static int in_file(const struct elf_map *m, uint64_t off, uint64_t len)
{
	return off <= m->size && len <= m->size - off;
}

static int symtab_find(const struct elf_map *m, const Elf64_Shdr *sh, const Elf64_Shdr *shdrs,
		       unsigned shnum, const Elf64_Shdr *versym, const char *name, uint64_t *value)
{
	const Elf64_Shdr *strsh;
	const Elf64_Sym *syms;
	size_t n;
	int found = 0;

	if (sh->sh_link >= shnum || sh->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file(m, sh->sh_offset, sh->sh_size))
		return 0;
	strsh = &shdrs[sh->sh_link];
	if (!in_file(m, strsh->sh_offset, strsh->sh_size))
		return 0;
	syms = (const void *)(m->p + sh->sh_offset);
	n = sh->sh_size / sizeof(Elf64_Sym);
	if (versym && (!in_file(m, versym->sh_offset, versym->sh_size) ||
		       versym->sh_size < n * sizeof(Elf64_Half)))
		versym = NULL;
	for (size_t i = 1; i < n; i++) {
		const char *s;

		if (syms[i].st_shndx == SHN_UNDEF || syms[i].st_name >= strsh->sh_size)
			continue;
		s = (const char *)m->p + strsh->sh_offset + syms[i].st_name;
		if (strnlen(s, strsh->sh_size - syms[i].st_name) == strsh->sh_size - syms[i].st_name ||
		    strcmp(s, name))
			continue;
		*value = syms[i].st_value;
		found = 1;
		/* A hidden (non-default) version only when nothing better. */
		if (!versym || !(((const Elf64_Half *)(m->p + versym->sh_offset))[i] & 0x8000))
			return 1;
	}
	return found;
}

int inject_elf_symbol(const char *path, const char *name, uint64_t *value)
{
	struct elf_map m;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *shdrs, *versym = NULL;
	int rc = elf_open(path, &m), found = 0;

	if (rc)
		return rc;
	eh = (const void *)m.p;
	if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(&m, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr))) {
		munmap((void *)m.p, m.size);
		return -ENOEXEC;
	}
	shdrs = (const void *)(m.p + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (shdrs[i].sh_type == SHT_GNU_versym)
			versym = &shdrs[i];
	for (int pass = 0; pass < 2 && !found; pass++)
		for (unsigned i = 0; i < eh->e_shnum && !found; i++)
			if (shdrs[i].sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM))
				found = symtab_find(&m, &shdrs[i], shdrs, eh->e_shnum,
						    pass ? NULL : versym, name, value);
	munmap((void *)m.p, m.size);
	return found ? 0 : -ENOENT;
}

/* The lowest PT_LOAD's page-aligned address of the ELF file @path. */
static int elf_first_load(const char *path, uint64_t *vaddr)
{
	struct elf_map m;
	const Elf64_Ehdr *eh;
	int rc = elf_open(path, &m);

	if (rc)
		return rc;
	eh = (const void *)m.p;
	rc = -ENOEXEC;
	if (eh->e_phentsize == sizeof(Elf64_Phdr) &&
	    in_file(&m, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr))) {
		const Elf64_Phdr *ph = (const void *)(m.p + eh->e_phoff);

		for (unsigned i = 0; i < eh->e_phnum; i++)
			if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
				*vaddr = ph[i].p_vaddr & ~(uint64_t)4095;
				rc = 0;
				break;
			}
	}
	munmap((void *)m.p, m.size);
	return rc;
}

/*
 * The loader maps an object's first segment (offset 0) without write
 * permission and an executable segment after it; other mappings of the
 * same file at offset 0 exist (libdw maps whole files read-write, private,
 * to read their symbols): they are skipped.
 */
int inject_load_bias(pid_t pid, const char *path, const char *file, uint64_t *bias)
{
	char maps[64], line[4096 + 128], perms[8];
	FILE *f;
	int rc = -ENOENT, have_first = 0;
	unsigned long long first = 0;
	uint64_t vaddr;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, off;
		int pos = 0;

		if (sscanf(line, "%llx-%*x %7s %llx %*s %*s %n", &lo, perms, &off, &pos) < 3 || !pos)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line + pos, path))
			continue;
		if (off == 0 && perms[1] != 'w') {
			first = lo;
			have_first = 1;
		}
		if (perms[2] != 'x' || !have_first)
			continue;
		if (elf_first_load(file, &vaddr))
			break;
		*bias = first - vaddr;
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}
