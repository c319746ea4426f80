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
 * profiling off, stop the rescans.  The statistics stay for the report.
 * Return: the number of slots put back.
 */
long syncprof__attach_stop(void);
/*
 * syncprof__attach_report() - the answer 'syncprof ctl PID @request' would
 * give (@request: a control request line, "report format=json top=0"),
 * rendered into memory: *@out, *@out_len bytes, to be freed with
 * syncprof__attach_release().  Return: 0 or a negative errno.
 */
int syncprof__attach_report(const char *request, char **out, size_t *out_len);
void syncprof__attach_release(char *report);

#endif /* SP_PRELOAD_ATTACH_H */
