/*
 * pprof_libs.h - protobuf-c and zlib for the pprof renderer, loaded at the
 * first pprof report (pprof_proto.c says why and how).  Private to
 * src/report/render: pprof.c and pprof_proto.c.
 */
#ifndef SP_REPORT_RENDER_PPROF_LIBS_H
#define SP_REPORT_RENDER_PPROF_LIBS_H

#include <zlib.h>

/* zlib's three functions that pprof.c calls, once sp_pprof_libs_load()
 * said 1. */
struct sp_pprof_zlib {
	__typeof__(deflateInit2_) *deflateInit2_;
	__typeof__(deflate) *deflate;
	__typeof__(deflateEnd) *deflateEnd;
};
extern struct sp_pprof_zlib sp_pprof_z;

/* 1 when protobuf-c and zlib can be called (linked, or loaded now or
 * before), 0 when they cannot (a static program without -lprotobuf-c
 * -lz, or the libraries not installed).  Thread-safe; may dlopen(): call
 * it from a report, never from a lock call. */
int sp_pprof_libs_load(void);

#endif
