/*
 * attach.h - what preload.c and attach.c share for 'syncprof attach'.
 * Private to preload/.
 */
#ifndef SP_PRELOAD_ATTACH_H
#define SP_PRELOAD_ATTACH_H

#include <stddef.h>

/* ---- "preload.c" ------------------------------------------------------ */

/* A shim by the name of the call it stands for. */
struct sp_attach_shim {
	const char *name;
	void *fn;
};
/* Every shim, ended by { NULL, NULL }. */
extern const struct sp_attach_shim sp_attach_shims[];
/* 1 when this library was loaded by dlopen() without interposing (by
 * 'syncprof attach'), 0 when its definitions come first (preloaded). */
int sp_attach_loaded(void);

/* ---- "attach.c": called by 'syncprof attach' through ptrace ------------ */

/*
 * syncprof__attach_start() - start (or restart) profiling in this process:
 * start the runtime with @options (SYNCPROF_OPTIONS syntax, may be NULL),
 * redirect the lock calls of every loaded object to the shims, switch
 * profiling on, and keep redirecting objects loaded later.
 * Return: the number of GOT slots redirected (>= 0); -EALREADY when the
 * library is preloaded (profiled already: use syncprof ctl); another
 * negative errno when the runtime could not start (nothing redirected).
 */
long syncprof__attach_start(const char *options);
/*
 * syncprof__attach_stop() - put back every redirected slot, switch
 * profiling off, end the rescans.  With a @request (a control request
 * line, "report format=json top=5"), the library's thread then renders the
 * answer 'syncprof ctl PID @request' would give into syncprof__attach_box
 * (control_wire.h), where the CLI reads it without stopping anyone; the
 * caller returns at once.  Return: the number of slots put back, or a
 * negative errno.
 */
long syncprof__attach_stop(const char *request);
/* Free the box's report and join the library's thread. */
void syncprof__attach_release(void);

#endif /* SP_PRELOAD_ATTACH_H */
