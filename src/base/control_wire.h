/*
 * control_wire.h - what both ends of the control socket agree on: the
 * longest request line.  The server is src/runtime/control.c, the client
 * tools/syncprof/cmd_ctl.c; the protocol is in docs/control.md.
 * Private to src/runtime and tools/syncprof.
 */
#ifndef SP_BASE_CONTROL_WIRE_H
#define SP_BASE_CONTROL_WIRE_H


#define SP_CTL_LINE_MAX 1024 /* longest request line, newline included */

#endif /* SP_BASE_CONTROL_WIRE_H */
