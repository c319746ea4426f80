/*
 * report_util.h - the rows of this process's report, for tests that look
 * at rows rather than rendered text.  The rows' names live in a profile
 * kept here until the next call.
 */
#ifndef SYNCPROF_TEST_REPORT_UTIL_H
#define SYNCPROF_TEST_REPORT_UTIL_H

#include <string.h>

#include "runtime/runtime.h"
#include "report/profile.h"

static struct sp_profile t_report_profile;

static inline int t_report_rows(struct sp_rows *rows, const struct syncprof_report_options *o)
{
	int rc;

	sp_profile_free(&t_report_profile);
	rc = sp_report_profile(&t_report_profile, o);
	if (!rc) {
		*rows = t_report_profile.rows;
		memset(&t_report_profile.rows, 0, sizeof(t_report_profile.rows));
	}
	return rc;
}

#endif
