/*
 * cxx_sites.cpp - C++ lock sites under the compiled-in instrumentation
 * (built with -include syncprof/instrument.h -O2 -g).  libstdc++ makes its
 * pthread calls inside its headers (__gthread_mutex_lock in gthr-default.h,
 * __glibcxx_rwlock_rdlock in <shared_mutex>), yet every row must name the
 * line and function of this file that took the lock, one row per line.
 *
 * Each marked site stores its own __LINE__, written on the line of the
 * lock; main prints "mark NAME FUNCTION TYPE LINE" for each (FUNCTION as
 * demangled: "guard_a()"; the pthread call's is __func__), and
 * check_cxx_sites.py runs this program once per report format and looks
 * for those rows.  Deterministic: a trylock on a lock that another thread
 * holds fails (a contended attempt), and a condition wait with a deadline
 * always waits, so the pprof and folded outputs (rows with contention or
 * wait only) have rows too.
 */
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <shared_mutex>
#include <thread>

#define NOINLINE __attribute__((noinline))

static std::mutex m, cm;
static std::shared_mutex sm;
static std::timed_mutex tmx;
static std::recursive_mutex rm;
static std::condition_variable cv;
static pthread_mutex_t raw = PTHREAD_MUTEX_INITIALIZER;
static std::atomic<long> counter;

/* Written by two threads, one of them under a read lock: atomics. */
static std::atomic<unsigned> at_guard_a, at_guard_b, at_unique, at_scoped, at_member, at_shared,
	at_exclusive, at_timed, at_recursive, at_cond_lock, at_cond, at_try, at_try_shared,
	at_raw;

/* std::mutex through each of its RAII types and directly; two lock_guards
 * in two functions must be two rows. */
NOINLINE static void guard_a() { std::lock_guard<std::mutex> g(m); at_guard_a = __LINE__; counter++; }
NOINLINE static void guard_b() { std::lock_guard<std::mutex> g(m); at_guard_b = __LINE__; counter++; }
NOINLINE static void unique() { std::unique_lock<std::mutex> l(m); at_unique = __LINE__; counter++; }
NOINLINE static void scoped() { std::scoped_lock l(m); at_scoped = __LINE__; counter++; }
NOINLINE static void member()
{
	m.lock(); at_member = __LINE__;
	counter++;
	m.unlock();
}

/* std::shared_mutex, shared and exclusive. */
NOINLINE static void reader() { std::shared_lock<std::shared_mutex> r(sm); at_shared = __LINE__; }
NOINLINE static void writer() { std::unique_lock<std::shared_mutex> w(sm); at_exclusive = __LINE__; counter++; }

/* std::timed_mutex with a system_clock deadline (pthread_mutex_timedlock;
 * try_lock_for uses pthread_mutex_clocklock, which is not instrumented). */
NOINLINE static void timed()
{
	if (tmx.try_lock_until(std::chrono::system_clock::now() + std::chrono::seconds(5))) { at_timed = __LINE__;
		tmx.unlock();
	}
}

NOINLINE static void recursive() { std::lock_guard<std::recursive_mutex> g(rm); at_recursive = __LINE__; counter++; }

/* A condition wait with a system_clock deadline: pthread_cond_timedwait,
 * inline in the header (condition_variable::wait() without a deadline is
 * inside libstdc++.so, where instrument.h cannot reach). */
NOINLINE static void cond_until()
{
	std::unique_lock<std::mutex> l(cm); at_cond_lock = __LINE__;
	cv.wait_until(l, std::chrono::system_clock::now() + std::chrono::milliseconds(2)); at_cond = __LINE__;
}

/* Trylocks that fail: the caller's thread holds the lock elsewhere. */
NOINLINE static void try_fail() { bool ok = m.try_lock(); at_try = __LINE__; if (ok) m.unlock(); }
NOINLINE static void try_fail_shared() { bool ok = sm.try_lock_shared(); at_try_shared = __LINE__; if (ok) sm.unlock_shared(); }

/* The program's own pthread call: named by __FILE__/__LINE__ as in C. */
NOINLINE static void raw_call() { pthread_mutex_lock(&raw); at_raw = __LINE__; counter++; pthread_mutex_unlock(&raw); }

static void work(int rounds)
{
	for (int i = 0; i < rounds; i++) {
		guard_a();
		guard_b();
		unique();
		scoped();
		member();
		reader();
		writer();
		timed();
		recursive();
		raw_call();
	}
}

int main()
{
	std::thread t1(work, 1000), t2(work, 1000);

	t1.join();
	t2.join();
	for (int i = 0; i < 3; i++)
		cond_until();
	/* Held here, tried there: one failed attempt each. */
	m.lock();
	std::thread(try_fail).join();
	m.unlock();
	sm.lock();
	std::thread(try_fail_shared).join();
	sm.unlock();

	const struct {
		const char *name, *function, *type;
		unsigned line;
	} marks[] = {
		{ "guard_a", "guard_a()", "mutex", at_guard_a },
		{ "guard_b", "guard_b()", "mutex", at_guard_b },
		{ "unique_lock", "unique()", "mutex", at_unique },
		{ "scoped_lock", "scoped()", "mutex", at_scoped },
		{ "mutex::lock", "member()", "mutex", at_member },
		{ "shared_lock", "reader()", "rwlock_read", at_shared },
		{ "unique_lock<shared_mutex>", "writer()", "rwlock_write", at_exclusive },
		{ "timed_mutex::try_lock_until", "timed()", "mutex", at_timed },
		{ "recursive_mutex", "recursive()", "rec_mutex", at_recursive },
		{ "cond_lock", "cond_until()", "mutex", at_cond_lock },
		{ "condition_variable::wait_until", "cond_until()", "condvar", at_cond },
		{ "mutex::try_lock", "try_fail()", "mutex", at_try },
		{ "shared_mutex::try_lock_shared", "try_fail_shared()", "rwlock_read", at_try_shared },
		{ "pthread_mutex_lock", "raw_call", "mutex", at_raw },
	};
	for (const auto &k : marks)
		std::printf("mark %s %s %s %u\n", k.name, k.function, k.type, k.line);
	return counter == 2 * 1000 * 8 ? 0 : 1;
}
