/*
 * runtime.h - the running library (src/runtime): start-up, exit and fork
 * order (lifecycle.c), the switch, resets and reports (switch.c), options, the control socket and its protocol, the
 * watchdog.  Private to src/runtime and preload/.
 */
#ifndef SP_RUNTIME_RUNTIME_H
#define SP_RUNTIME_RUNTIME_H

#include "base/base.h"
#include "base/control_wire.h"
#include "read/options.h"
#include "record/record.h"

extern struct sp_options sp_opts; /* switch.c: read once at start-up (lifecycle.c) */

/* ---- "lifecycle.c" ---------------------------------------------------- */

void sp_runtime_init(void);
/*
 * Attach mode (preload/attach.c).  Set before the constructors run when
 * the preload library was loaded by dlopen() without interposing: then
 * sp_runtime_init() does nothing and start-up waits for
 * sp_runtime_attach(), which starts the runtime with @options
 * (SYNCPROF_OPTIONS syntax; the environment is not read), profiling off,
 * no report at exit, no control socket; called again (a later attach), it
 * resets the statistics instead.  Return 0 or a negative errno.
 */
extern int sp_runtime_deferred;
int sp_runtime_attach(const char *options);
/*
 * The fork work of attach mode (preload/attach.c, above the runtime: it
 * installs these at its first attach, with a release store).  The
 * lifecycle's one fork handler calls @prepare last (after the lock-order
 * graph's: its lock is a leaf), @parent first, and @child first, before
 * any other subsystem's child work.
 */
struct sp_fork_hooks {
	void (*prepare)(void);
	void (*parent)(void);
	void (*child)(void);
};
extern const struct sp_fork_hooks *sp_attach_fork_hooks;
/* ---- "switch.c" ------------------------------------------------------- */

/* How long profiling was on since start-up or the last reset. */
uint64_t sp_profiled_ns(void);
/* The program's command line, read once at start-up: from the argv that
 * glibc hands the constructors (init_array functions are called with
 * argc, argv and envp), given with sp_command_from_argv(), when
 * @at_start; else (under attach) from /proc/self/cmdline. */
const char *sp_command(void);
void sp_command_from_argv(int argc, char **argv);
void sp_command_read(int at_start);
/* Whether profiling was ever switched on; start-up dates the state. */
int sp_ever_enabled(void);
void sp_state_started(void);
/* Wall-clock time (CLOCK_REALTIME ns) of the last on/off switch, or of
 * start-up when it never switched. */
uint64_t sp_state_since_ns(void);
/* The profile of this process as @o shapes it, named and ready to render
 * (any thread; takes report_lock).  Free it with sp_profile_free(). */
struct sp_profile;
int sp_report_profile(struct sp_profile *p, const struct syncprof_report_options *o);
int sp_report_snapshot(void);
/* report_lock: serialises reports, resets and symbolizing (watchdog). */
void sp_report_lock(void);
void sp_report_unlock(void);
/* The same under report_lock, named (@named 1) or with interposed sites
 * left as addresses (0: for syncprof run to name). */
int sp_report_build_locked(struct sp_profile *p, const struct syncprof_report_options *o,
			   int named);
/* syncprof_report() once start-up ran: render the profile to @out. */
int sp_report_write(FILE *out, const struct syncprof_report_options *opts);

/* ---- "control.c" ------------------------------------------------------ */

/*
 * Start the helper thread: the control socket when sp_opts.control is set,
 * the long-wait watchdog when sp_opts.warn_wait_ms is, and the report on
 * sp_opts.report_signal.  Idempotent; also restarts it in a forked child.
 * Return: 0, or a negative errno (then the program runs on without it).
 */
int sp_control_start(void);
/* In a forked child, start the helper thread that fork() left behind; a
 * no-op (one relaxed load) otherwise.  Called from the registry's slow
 * path, at the child's first profiled lock call or new thread. */
void sp_control_after_fork(void);
/* At exit: remove the socket, print the totals of warned waits that
 * ended since the last scan.  In a forked child: forget the parent's
 * socket and helper thread (restarted by sp_control_after_fork()).  Both
 * called by the lifecycle, no-ops when the helper never started. */
void sp_control_exit(void);
/* At _exit() (preload.c), where no exit handler runs: remove this
 * process's socket, if it made one.  Async-signal-safe (getpid(),
 * unlink()): _exit() may be called from a signal handler or a vfork
 * child, whose getpid() is not the socket's. */
void sp_control_exit_now(void);
void sp_control_fork_child(void);
void sp_control_fork_prepare(void);

/* ---- "control_proto.c" ------------------------------------------------ */

enum sp_ctl_verb { SP_CTL_STATUS, SP_CTL_ON, SP_CTL_OFF, SP_CTL_RESET, SP_CTL_REPORT };

struct sp_ctl_request {
	enum sp_ctl_verb verb;
	struct syncprof_report_options report; /* for SP_CTL_REPORT */
	char columns[256];                     /* report.columns points here */
	char src_root[256];                    /* report.src_root points here */
};

/*
 * Parse one request line (@len bytes, no NUL needed, newline optional) with
 * @defaults as the report options.  Never reads past @len; allocates
 * nothing.  Return 0, or -EINVAL with a message in @err.
 */
int sp_ctl_parse(const char *line, size_t len, const struct syncprof_report_options *defaults,
		 struct sp_ctl_request *req, char *err, size_t err_size);
/* Run a parsed request; the answer's payload goes to @out. */
int sp_ctl_execute(const struct sp_ctl_request *req, FILE *out);

/* ---- "deadlock.c" ----------------------------------------------------- */

/*
 * The waits-for graph of one watchdog scan (deadlock.c has the design).
 * Built and read under the watchdog's scan_lock only; sp_wg_add(),
 * sp_wg_find() and sp_wg_recheck() also need the registry lock (they are
 * called from sp_registry_foreach_thread()).
 */
#define SP_WG_MAX 256    /* waiting threads in one scan */
#define SP_WG_SLOTS 512  /* thread -> node index */
#define SP_WG_CYCLES 8   /* cycles examined per scan */

enum sp_wg_holder_kind {
	SP_WG_NO_HOLDER,  /* condvar, semaphore, barrier, join: no single holder */
	SP_WG_UNTRACKED,  /* hold tracking is off */
	SP_WG_UNKNOWN,    /* no holder found */
	SP_WG_HELD,       /* held by @tid */
	SP_WG_READ_HELD,  /* held for reading by @n_readers threads, @tid one of them */
};

struct sp_wg_holder {
	int kind;
	pid_t tid;
	struct sp_site site;  /* where @tid took the lock */
	uint64_t since_ns;    /* sp_now_ns(); a lower bound of the hold's start */
	unsigned n_readers;
};

struct sp_wg_node {
	struct sp_thread *thr; /* compared, dereferenced only under the registry lock */
	pid_t tid;
	char name[16];
	uint32_t id;           /* the wait's sequence number (wait_pub.c) */
	uint64_t waited_ns;
	uintptr_t obj;
	struct sp_site site;
	uint8_t type, n_frames;
	uint8_t timed;         /* a lock wait with a deadline (wait_pub.c) */
	uintptr_t frames[SP_MAX_FRAMES];
	struct sp_wg_holder holder;
	int next;              /* node of the holder when it waits too; -1 */
	int same;              /* second read: still the same wait */
};

struct sp_wg_cycle {
	unsigned n;
	int confirmed;
	int member[SP_WG_MAX]; /* each waits for what the next one holds */
};

struct sp_wg {
	uint64_t now;
	unsigned n, dropped;
	struct sp_wg_node node[SP_WG_MAX];
	int slot[SP_WG_SLOTS]; /* node index + 1; 0 free */
	unsigned n_cycles;
	struct sp_wg_cycle cycle[SP_WG_CYCLES];
};

void sp_wg_reset(struct sp_wg *g, uint64_t now);
struct sp_wg_node *sp_wg_add(struct sp_wg *g, struct sp_thread *t);
struct sp_wg_node *sp_wg_find(struct sp_wg *g, const struct sp_thread *t);
/* Holders (lock-free lookups), links and the cycles among them. */
void sp_wg_link(struct sp_wg *g);
/* The double collect: holders again, then (registry lock) each wait again. */
void sp_wg_recheck_holders(struct sp_wg *g);
void sp_wg_recheck(struct sp_wg *g, struct sp_thread *t);
/* Print the confirmed cycles not reported before; returns how many.
 * report_lock held (names sites). */
unsigned sp_wg_report_deadlocks(FILE *out, struct sp_wg *g);
/* The long-wait warning about @n and its chain (report_lock held). */
void sp_wg_print_warning(FILE *out, const struct sp_wg *g, const struct sp_wg_node *n);
/* Where the root holder of @n's chain took its lock; 0 without one. */
int sp_wg_root(const struct sp_wg *g, const struct sp_wg_node *n, pid_t *tid,
	       struct sp_site *site);
void sp_wg_site_name(const struct sp_site *s, char *buf, size_t size);
/* Deadlocks reported so far, and the last few reports (ctl status). */
void sp_wg_status(FILE *out);
/* In a forked child: forget the parent's reports. */
void sp_wg_forget(void);

/* ---- "watchdog.c" ----------------------------------------------------- */

/* One scan of every thread (helper thread); returns ms until the next. */
unsigned sp_watchdog_scan(FILE *out);
/* In a forked child: forget the parent's warned waits (atfork handler). */
void sp_watchdog_forget(void);
/* The watchdog has something to do: warn_wait, or the deadlock check. */
int sp_watchdog_wanted(void);
/* Deadlocks found so far, for 'syncprof ctl PID status' (takes scan_lock). */
void sp_watchdog_status(FILE *out);

#endif /* SP_RUNTIME_RUNTIME_H */
