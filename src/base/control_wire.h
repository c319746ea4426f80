/*
 * control_wire.h - what both ends of the control socket agree on: the
 * longest request line and where the sockets live.  The server is
 * src/runtime/control.c, the client tools/syncprof/ctl_client.c (for 'ctl'
 * and 'top'); the protocol is in docs/control.md.
 * Also the report box of 'syncprof attach' (preload/attach.c writes it,
 * tools/syncprof/cmd_attach.c reads it).
 * Private to src/runtime, preload/ and tools/syncprof.
 */
#ifndef SP_BASE_CONTROL_WIRE_H
#define SP_BASE_CONTROL_WIRE_H


#define SP_CTL_LINE_MAX 1024 /* longest request line, newline included */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

/*
 * Where @uid's control sockets may live, in the order the server tries
 * them: candidate @i (0, 1, ...) into @buf; 0, -ENOENT past the last, or
 * -ENAMETOOLONG.  $SYNCPROF_CONTROL_DIR alone when it is set; else
 * /dev/shm/syncprof-UID, then /tmp/syncprof-UID.  The server binds in the
 * first that it can make a private directory of (control.c), the client
 * looks in each (it checks the answering pid, SO_PEERCRED).  tmpfs first:
 * making a socket's file costs 15-18 us on /dev/shm, and 24 us to 0.84 ms
 * on the ext4 /tmp of the VM of docs/cost.md ("Per process"), the more
 * files its directory lost lately - on every profiled process's start.
 */
static inline int sp_ctl_dir(uid_t uid, int i, char *buf, size_t size)
{
	static const char *const roots[] = { "/dev/shm", "/tmp" };
	const char *env = getenv("SYNCPROF_CONTROL_DIR");
	int n;

	if (env && *env)
		n = i ? -1 : snprintf(buf, size, "%s", env);
	else if (i < 0 || i >= (int)(sizeof(roots) / sizeof(*roots)))
		n = -1;
	else
		n = snprintf(buf, size, "%s/syncprof-%u", roots[i], (unsigned)uid);
	if (n < 0)
		return -ENOENT;
	return (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/*
 * The report of an attach session, rendered in the target by the attach
 * library's own thread after syncprof__attach_stop() asked for it, so that
 * no thread of the program stays stopped while it is symbolized; the CLI
 * polls @state through /proc/PID/mem.  The exported symbol
 * syncprof__attach_box is this struct.
 */
enum { SP_ATTACH_IDLE, SP_ATTACH_ASKED, SP_ATTACH_DONE };
struct sp_attach_box {
	int32_t state;  /* SP_ATTACH_*; DONE is stored last, with release order */
	int32_t rc;     /* 0, or a negative errno */
	uint64_t data;  /* the report's bytes (malloc'd in the target) */
	uint64_t len;
	char request[SP_CTL_LINE_MAX + 1];
};
_Static_assert(sizeof(struct sp_attach_box) == 24 + SP_CTL_LINE_MAX + 1 + 7,
	       "the box's layout is read from another process");

#endif /* SP_BASE_CONTROL_WIRE_H */
