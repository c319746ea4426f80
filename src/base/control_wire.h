/*
 * control_wire.h - what both ends of the control socket agree on: the
 * longest request line.  The server is src/runtime/control.c, the client
 * tools/syncprof/ctl_client.c (for 'ctl' and 'top'); the protocol is in
 * docs/control.md.
 * Also the report box of 'syncprof attach' (preload/attach.c writes it,
 * tools/syncprof/cmd_attach.c reads it).
 * Private to src/runtime, preload/ and tools/syncprof.
 */
#ifndef SP_BASE_CONTROL_WIRE_H
#define SP_BASE_CONTROL_WIRE_H


#define SP_CTL_LINE_MAX 1024 /* longest request line, newline included */

#include <stdint.h>

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
