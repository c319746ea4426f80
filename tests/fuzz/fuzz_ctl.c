/*
 * fuzz_ctl.c - libFuzzer target for the control socket's request parser
 * (src/control_proto.c), and for running what it accepts.
 *
 * Each input is one request as a client could send it (any bytes, any
 * length).  sp_ctl_parse() must never read past the input, must return 0
 * or -EINVAL with a NUL-terminated message, and what it accepts must be a
 * request that sp_ctl_execute() runs to completion (the report renderers
 * included: the report options come from the input).  AddressSanitizer and
 * UndefinedBehaviorSanitizer check the rest.  Built with
 * -DSYNCPROF_FUZZ=ON under clang; tests/fuzz/run-fuzz.sh SECONDS fuzz_ctl runs it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "report/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct syncprof_report_options defaults;
	struct sp_ctl_request req;
	char err[256], *copy, *out = NULL;
	size_t out_len = 0;
	FILE *f;
	int rc;

	/* An exact-size heap copy, so that ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	syncprof_report_options_init(&defaults);
	memset(err, 'x', sizeof(err));
	rc = sp_ctl_parse(copy, size, &defaults, &req, err, sizeof(err));
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (rc) {
		if (!memchr(err, '\0', sizeof(err)))
			abort(); /* the message must be a string */
		free(copy);
		return 0;
	}
	if ((unsigned)req.verb > SP_CTL_REPORT || sp_report_options_check(&req.report))
		abort(); /* accepted, so it must be valid */
	f = open_memstream(&out, &out_len);
	if (f) {
		sp_ctl_execute(&req, f);
		fclose(f);
	}
	free(out);
	free(copy);
	return 0;
}
