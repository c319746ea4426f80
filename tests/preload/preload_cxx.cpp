/*
 * preload_cxx.cpp - C++ locks under the preload: std::mutex (inline in
 * the headers, calls pthread_mutex_lock from the program),
 * std::condition_variable::wait (in libstdc++, calls pthread_cond_wait
 * from the library) and std::shared_mutex.  Frames inside libstdc++ are
 * skipped by default, so every site must be in this program's functions,
 * never in libstdc++.so.
 */
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "syncprof.h"

static std::mutex m;
static std::condition_variable cv;
static std::shared_mutex sm;
static int turn;

__attribute__((noinline)) static void ping_pong(int me)
{
	for (int i = 0; i < 500; i++) {
		std::unique_lock<std::mutex> l(m);
		cv.wait(l, [me] { return turn == me; }); // inside libstdc++
		turn = !me;
		cv.notify_all();
	}
}

__attribute__((noinline)) static void readers(void)
{
	for (int i = 0; i < 1000; i++) {
		std::shared_lock<std::shared_mutex> r(sm);
	}
}

// try_lock_for() and wait_for() call pthread_mutex_clocklock() and
// pthread_cond_clockwait() (steady_clock) from libstdc++'s headers.
static std::timed_mutex tm;
static std::mutex wm;
static std::condition_variable wcv;
static int l_try_lock_for, l_wait_for;

__attribute__((noinline)) static void timed_waits(void)
{
	using namespace std::chrono_literals;

	l_try_lock_for = __LINE__ + 1;
	if (!tm.try_lock_for(20ms))
		std::abort();
	tm.unlock();
	std::unique_lock<std::mutex> l(wm);
	l_wait_for = __LINE__ + 1;
	wcv.wait_for(l, 10ms);
}

/* A row of @type whose site is at @line of this file. */
static bool has_row(const std::string &json, const char *type, int line)
{
	std::string t = std::string("{\"type\":\"") + type + "\"";
	std::string ln = "\"line\":" + std::to_string(line) + ",";

	for (size_t p = 0; (p = json.find(t, p)) != std::string::npos; p++) {
		size_t end = json.find("{\"type\":", p + 1);
		std::string row = json.substr(p, end == std::string::npos ? end : end - p);
		size_t site = row.find("\"site\":");
		std::string s = row.substr(site, row.find("\"stack\":") - site);

		if (s.find(ln) != std::string::npos && s.find("preload_cxx.cpp") != std::string::npos)
			return true;
	}
	return false;
}

int main()
{
	typedef int (*report_fn)(FILE *, const struct syncprof_report_options *);
	report_fn report = (report_fn)dlsym(RTLD_DEFAULT, "syncprof_report");
	struct syncprof_report_options o;
	char *buf = nullptr;
	size_t len = 0;

	if (!report) {
		std::fputs("run me with LD_PRELOAD=libsyncprof-preload.so\n", stderr);
		return 1;
	}
	std::thread a(ping_pong, 0), b(ping_pong, 1), c(readers);
	a.join();
	b.join();
	c.join();
	timed_waits();

	FILE *f = open_memstream(&buf, &len);
	std::memset(&o, 0, sizeof(o));
	o.coalesce = 1;
	o.format = SYNCPROF_FORMAT_JSON;
	if (report(f, &o))
		return 1;
	std::fclose(f);
	std::string json(buf);
	std::free(buf);
	// Every site is in this program: the condition wait inside libstdc++
	// is attributed to its caller, the (inlined) wait<> in ping_pong.
	if (json.find("\"type\":\"condvar\"") == std::string::npos ||
	    json.find("\"type\":\"rwlock_read\"") == std::string::npos) {
		std::fprintf(stderr, "preload_cxx: FAIL: rows missing:\n%s\n", json.c_str());
		return 1;
	}
	for (size_t p = 0; (p = json.find("{\"type\":", p)) != std::string::npos; p++) {
		size_t end = json.find("{\"type\":", p + 1);
		std::string row = json.substr(p, end == std::string::npos ? end : end - p);
		std::string site = row.substr(row.find("\"site\":"),
					      row.find("\"stack\":") - row.find("\"site\":"));

		if (site.find("libstdc++") != std::string::npos ||
		    (row.find("\"type\":\"condvar\"") == 0 &&
		     site.find("ping_pong") == std::string::npos)) {
			std::fprintf(stderr, "preload_cxx: FAIL: site %s\n", site.c_str());
			return 1;
		}
	}
	if (!has_row(json, "mutex", l_try_lock_for) || !has_row(json, "condvar", l_wait_for)) {
		std::fprintf(stderr, "preload_cxx: FAIL: no mutex row at line %d or condvar row "
			     "at line %d:\n%s\n", l_try_lock_for, l_wait_for, json.c_str());
		return 1;
	}
	std::puts("preload_cxx: ok");
	return 0;
}
