/*
 * locklib_dlopen.c - a lock library loaded with dlopen() after start-up is
 * still known to the profiler: its futex wait's site is this program's
 * line, the first frame outside the library, not a line of the library.
 *
 * The look at start-up found no module that may hold a lock library, and
 * a later scan trusts that answer only while the loader has loaded
 * nothing since (record/locklib.c, none_at_adds): this program makes the
 * scan run after a dlopen().  Given a relative path ("./libx.so"), the
 * loader names the module so, and the look opens it from the current
 * directory (it skipped every name not starting with '/' before).  With
 * SYMBOL, that function of the library waits (fake_locklib_whole.c: a
 * stripped library whose wait is made by an unnamed internal function).
 * Usage: locklib_dlopen FAKE_LOCKLIB.so [SYMBOL]
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "preload_util.h"

int main(int argc, char **argv)
{
	void (*wait_fn)(uint32_t *);
	uint32_t word = 0;
	char needle[128], *json;
	void *h;
	int line, fails = 0;

	t_require_preload();
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: locklib_dlopen FAKE_LOCKLIB.so [SYMBOL]\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "locklib_dlopen: %s\n", dlerror());
		return 1;
	}
	wait_fn = (void (*)(uint32_t *))dlsym(h, argc == 3 ? argv[2] : "_ZN4absl8fakelock4WaitEPj");
	if (!wait_fn) {
		fprintf(stderr, "locklib_dlopen: %s\n", dlerror());
		return 1;
	}
	wait_fn(&word); line = __LINE__;
	json = t_report(1, 1);
	if (!json) {
		fprintf(stderr, "locklib_dlopen: FAIL: no report\n");
		return 1;
	}
	/* the row's site, not a frame of its stack */
	snprintf(needle, sizeof(needle), "\"site\":{\"function\":\"main\",\"file\":");
	if (!strstr(json, needle)) {
		fprintf(stderr, "locklib_dlopen: FAIL: no row whose site is main()\n");
		fails++;
	}
	snprintf(needle, sizeof(needle), "locklib_dlopen.c\",\"line\":%d", line);
	if (!strstr(json, needle)) {
		fprintf(stderr, "locklib_dlopen: FAIL: no row at this program's line %d (%s)\n",
			line, needle);
		fails++;
	}
	if (strstr(json, "fake_locklib.c")) {
		fprintf(stderr, "locklib_dlopen: FAIL: a row inside the lock library\n");
		fails++;
	}
	if (fails || getenv("T_SHOW"))
		fprintf(stderr, "%s\n", json);
	if (!fails)
		printf("locklib_dlopen: ok\n");
	free(json);
	dlclose(h);
	return fails ? 1 : 0;
}
