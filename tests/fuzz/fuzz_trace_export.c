/*
 * fuzz_trace_export.c - libFuzzer target for 'syncprof trace export': any
 * input that the reader accepts is built into a timeline
 * (src/analyse/trace_timeline.c) and written as Perfetto protobuf, Chrome
 * JSON and the HTML page's timeline (export_perfetto.c, export_chrome.c,
 * export_html.c), which must never crash, hang
 * or leak, whatever the records say: waits without ends, releases without
 * holds, drops over anything, timestamps in any order, absurd counts.
 *
 * Build: cmake -DSYNCPROF_FUZZ=ON -DCMAKE_C_COMPILER=clang; run through
 * tests/fuzz/run-fuzz.sh SECONDS (after the reader's target).
 */
#include <stdio.h>
#include <stdlib.h>

#include "read/trace_reader.h"
#include "analyse/trace_timeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_trace_reader *r = calloc(1, sizeof(*r));
	struct sp_timeline tl;
	FILE *out;

	if (!r)
		return 0;
	if (sp_trace_reader_init(r, data, size) == 0) {
		if (sp_timeline_build(&tl, r) == 0 && (out = fopen("/dev/null", "w"))) {
			/* the HTML timeline with a small cap: its pick of the longest slices runs */
			if (sp_export_perfetto(out, &tl) || sp_export_chrome(out, &tl) ||
			    sp_export_html_timeline(out, &tl, 16, 4))
				abort(); /* only a write error may fail them */
			fclose(out);
		}
		sp_timeline_free(&tl);
	}
	sp_trace_reader_fini(r);
	free(r);
	return 0;
}
