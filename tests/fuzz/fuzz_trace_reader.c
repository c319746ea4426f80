/*
 * fuzz_trace_reader.c - libFuzzer target for the trace reader
 * (src/trace_reader.c): any input must be read to its end or to a clean
 * stop (truncated/corrupt, with a message), never crash, hang or leak.
 * Also exercises the name lookups the CLI makes per event.
 *
 * Build: cmake -DSYNCPROF_FUZZ=ON -DCMAKE_C_COMPILER=clang; run through
 * tests/fuzz/run-fuzz.sh SECONDS.
 */
#include <stdlib.h>
#include <string.h>

#include "read/trace_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_trace_reader *r = calloc(1, sizeof(*r));
	struct sp_trace_rec rec;
	char buf[512];
	uint64_t off;
	int rc;

	if (!r)
		return 0;
	if (sp_trace_reader_init(r, data, size) == 0) {
		while ((rc = sp_trace_reader_next(r, &rec)) > 0) {
			if (rec.type == SP_REC_EVENT) {
				(void)sp_trace_reader_rel_ns(r, rec.ts);
				(void)sp_trace_reader_thread(r, rec.tid);
				sp_trace_reader_site(r, &rec, buf, sizeof(buf));
				(void)sp_trace_reader_pc_dso(r, rec.args[0], buf, sizeof(buf), &off);
			}
		}
		if (rc < 0 && (r->status == SP_TRACE_READ_OK || !r->error[0]))
			abort(); /* a stop must say why */
	} else if (!r->error[0]) {
		abort();
	}
	sp_trace_reader_fini(r);
	free(r);
	return 0;
}
