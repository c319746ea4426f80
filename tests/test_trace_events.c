/*
 * test_trace_events - the general trace API: registering events, per-event
 * and global enable, the inline flag, argument names in the file, bad
 * arguments.
 */
#include "trace_util.h"

static unsigned count_a, count_b, count_c;
static int id_a, id_b, id_c;

static void count(const struct sp_trace_reader *r, const struct sp_trace_rec *rec, void *arg)
{
	(void)r, (void)arg;
	if (rec->type == SP_REC_EVENT_DEF && (int)rec->id == id_b) {
		T_ASSERT_STR(rec->def->name, "ev_b");
		T_ASSERT_UINT(rec->def->nargs, ==, 2);
		T_ASSERT_STR(rec->def->args[0], "first");
		T_ASSERT_STR(rec->def->args[1], "a1"); /* unnamed: default name */
	}
	if (rec->type != SP_REC_EVENT)
		return;
	T_ASSERT(rec->def != NULL);
	if ((int)rec->id == id_a) {
		T_ASSERT_UINT(rec->nargs, ==, 0);
		count_a++;
	} else if ((int)rec->id == id_b) {
		T_ASSERT_UINT(rec->nargs, ==, 2);
		T_ASSERT_UINT(rec->args[0], ==, 7);
		T_ASSERT_UINT(rec->args[1], ==, 0xffffffffffffffffull);
		count_b++;
	} else if ((int)rec->id == id_c) {
		T_ASSERT_UINT(rec->nargs, ==, 6);
		for (unsigned i = 0; i < 6; i++)
			T_ASSERT_UINT(rec->args[i], ==, i + 1);
		count_c++;
	}
}

int main(void)
{
	static const char *const b_args[] = { "first", NULL };
	static const char *const long_arg[] = { "0123456789012345678901234567890123456789" };
	uint64_t six[7] = { 1, 2, 3, 4, 5, 6, 7 };
	char dir[256], path[512];

	t_tmpdir(dir, sizeof(dir), "events");
	snprintf(path, sizeof(path), "%s/events.trace", dir);

	id_a = syncprof_trace_register("ev_a", NULL, 0);
	id_b = syncprof_trace_register("ev_b", b_args, 2);
	id_c = syncprof_trace_register("ev_c", NULL, 6);
	T_ASSERT_INT(id_a, >=, 16);
	T_ASSERT_INT(id_b, >, id_a);
	T_ASSERT_INT(syncprof_trace_register("ev_b", NULL, 0), ==, id_b); /* same name */
	T_ASSERT_INT(syncprof_trace_event_id("ev_c"), ==, id_c);
	T_ASSERT_INT(syncprof_trace_event_id("lock_acquired"), ==, SP_EV_LOCK_ACQUIRED);
	T_ASSERT_INT(syncprof_trace_event_id("nope"), ==, -ENOENT);
	T_ASSERT_INT(syncprof_trace_register("", NULL, 0), ==, -EINVAL);
	T_ASSERT_INT(syncprof_trace_register("x", NULL, 7), ==, -EINVAL);
	T_ASSERT_INT(syncprof_trace_register("y", long_arg, 1), ==, -EINVAL);
	T_ASSERT_INT(syncprof_trace_set_event(0, 1), ==, -EINVAL);
	T_ASSERT_INT(syncprof_trace_set_event(999, 1), ==, -EINVAL);
	T_ASSERT_INT(syncprof_trace_set_buffer_size(0), ==, -EINVAL);
	T_ASSERT_INT(syncprof_trace_flush(), ==, -EBADF);
	T_ASSERT_INT(syncprof_trace_open(""), ==, -EINVAL);
	T_ASSERT_INT(syncprof_trace_open("/nonexistent-dir/x.trace"), ==, -ENOENT);

	/* No file: nothing is on. */
	T_ASSERT_INT(syncprof_trace_event_on((unsigned)id_a), ==, 0);
	SYNCPROF_TRACE0(id_a);

	T_ASSERT_INT(syncprof_trace_open(path), ==, 0);
	T_ASSERT_INT(syncprof_trace_event_on((unsigned)id_a), !=, 0);
	SYNCPROF_TRACE0(id_a);                          /* a: 1 */
	SYNCPROF_TRACE(id_b, 7, 0xffffffffffffffffull); /* b: 1 */
	syncprof_trace_emit((unsigned)id_c, 7, six);    /* c: 1 (7 cut to 6) */

	T_ASSERT_INT(syncprof_trace_set_event(id_b, 0), ==, 0);
	T_ASSERT_INT(syncprof_trace_event_on((unsigned)id_b), ==, 0);
	SYNCPROF_TRACE0(id_a);                          /* a: 2 */
	SYNCPROF_TRACE(id_b, 7, 0xffffffffffffffffull); /* off */
	syncprof_trace_emit((unsigned)id_b, 2, six);    /* off, even called directly */

	syncprof_trace_disable();
	T_ASSERT_INT(syncprof_trace_event_on((unsigned)id_a), ==, 0);
	SYNCPROF_TRACE0(id_a); /* off */
	T_ASSERT_INT(syncprof_trace_set_event(id_b, 1), ==, 0);
	SYNCPROF_TRACE(id_b, 7, 0xffffffffffffffffull); /* still off globally */
	syncprof_trace_enable();
	SYNCPROF_TRACE(id_b, 7, 0xffffffffffffffffull); /* b: 2 */
	T_ASSERT_INT(syncprof_trace_set_event(id_a, 0), ==, 0);
	SYNCPROF_TRACE0(id_a); /* off */

	syncprof_trace_emit(SYNCPROF_TRACE_MAX_EVENTS + 5, 0, NULL); /* ignored */
	syncprof_trace_emit(1000, 0, NULL);                          /* undefined: off */

	T_ASSERT_INT(syncprof_trace_flush(), ==, 0);
	T_ASSERT_INT(syncprof_trace_close(), ==, 0);
	T_ASSERT_INT(t_trace_read(path, count, NULL), ==, SP_TRACE_READ_OK);
	T_ASSERT_UINT(count_a, ==, 2);
	T_ASSERT_UINT(count_b, ==, 2);
	T_ASSERT_UINT(count_c, ==, 1);
	T_ASSERT_UINT(syncprof_trace_dropped(), ==, 0);
	unlink(path);
	rmdir(dir);
	return 0;
}
