/*
 * fuzz_trace_model.c - libFuzzer target for the readers behind 'syncprof
 * trace what-if' and 'trace chains' (src/analyse/trace_model.c, whatif.c,
 * chains.c): any input is modelled, replayed at two factors with every
 * site scaled, and searched for chains, without a crash, a hang or a leak;
 * a failure must say why.  Site naming (trace_sites.c, the symbolizer) is
 * left out: it reads only the reader's strings and the files on disk.
 *
 * Build: cmake -DSYNCPROF_FUZZ=ON -DCMAKE_C_COMPILER=clang; run through
 * tests/fuzz/run-fuzz.sh SECONDS fuzz_trace_model.
 */
#include <stdlib.h>
#include <string.h>

#include "analyse/trace_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_trace_reader *r = calloc(1, sizeof(*r));
	struct sp_trace_model *m = calloc(1, sizeof(*m));
	struct sp_whatif w;
	struct sp_chains c;
	int rc;

	if (!r || !m)
		goto out;
	if (sp_trace_reader_init(r, data, size) == 0) {
		if (sp_trace_model_build(m, r) == 0) {
			for (size_t i = 0; i < m->n_sites; i++)
				(void)sp_tm_site_matches(&m->sites[i], "a.c:1");
			rc = sp_whatif_run(m, NULL, 2.0, 3, &w);
			if (rc && !w.error[0])
				abort(); /* a failure must say why */
			sp_whatif_free(&w);
			rc = sp_whatif_run(m, NULL, 0.25, 0, &w);
			if (rc && !w.error[0])
				abort();
			sp_whatif_free(&w);
			if (sp_chains_run(m, &c) == 0)
				sp_chains_free(&c);
		}
		sp_trace_model_free(m);
	}
	sp_trace_reader_fini(r);
out:
	free(r);
	free(m);
	return 0;
}
