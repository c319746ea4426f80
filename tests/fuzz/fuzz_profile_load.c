/*
 * fuzz_profile_load.c - libFuzzer target for the saved-profile reader
 * (src/read/profile_load.c over src/read/json_stream.c).
 *
 * Each input is a file as a user could hand to 'syncprof report'.  The
 * reader must return 0 or a negative errno with a NUL-terminated message
 * and never read past the input; what it accepts must render (table, HTML
 * and JSON), and the JSON it renders must read back and render to the same
 * bytes (the re-render guarantee of docs/formats.md).  AddressSanitizer,
 * UndefinedBehaviorSanitizer and libFuzzer's leak check see the rest.
 * Built with -DSYNCPROF_FUZZ=ON under clang; tests/fuzz/run-fuzz.sh SECONDS fuzz_profile_load
 * SECONDS runs it from tests/fuzz/profile-seeds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/profile_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* @p rendered as @f into a new string (*@len bytes); NULL when it failed. */
static char *render(struct sp_profile *p, enum syncprof_format f, size_t *len)
{
	struct syncprof_report_options o;
	char *out = NULL;
	FILE *m = open_memstream(&out, len);
	int rc;

	if (!m)
		return NULL;
	syncprof_report_options_init(&o);
	o.format = f;
	o.coalesce = 0;
	rc = sp_profile_shape(p, &o); /* as 'syncprof report --no-coalesce' */
	if (!rc)
		rc = sp_render(m, p, &o);
	fclose(m);
	if (rc) {
		free(out);
		return NULL;
	}
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sp_profile p, q;
	char err[256], *copy, *json, *again;
	size_t len, len2;
	int rc;

	/* An exact-size heap copy, so that ASan sees any read past the end. */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	memset(err, 'x', sizeof(err));
	rc = sp_profile_parse("fuzz.json", copy, size, &p, err, sizeof(err));
	free(copy);
	if (rc) {
		if (rc != -EINVAL && rc != -ENOMEM)
			abort();
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			abort(); /* a problem is said, as one string */
		return 0;
	}
	free(render(&p, SYNCPROF_FORMAT_TABLE, &len));
	free(render(&p, SYNCPROF_FORMAT_HTML, &len));
	json = render(&p, SYNCPROF_FORMAT_JSON, &len);
	sp_profile_free(&p);
	if (!json)
		return 0;
	/* What we wrote, we read, and it renders to the same bytes. */
	if (sp_profile_parse("again.json", json, len, &q, err, sizeof(err))) {
		fprintf(stderr, "re-read failed: %s\n", err);
		abort();
	}
	again = render(&q, SYNCPROF_FORMAT_JSON, &len2);
	sp_profile_free(&q);
	if (!again || len2 != len || memcmp(again, json, len)) {
		fprintf(stderr, "re-rendered JSON differs\n");
		abort();
	}
	free(again);
	free(json);
	return 0;
}
