/*
 * cxx_waits.cpp - the sites of C++'s timed waits and joins (issue 28):
 * std::timed_mutex::try_lock_for() and try_lock_until(steady_clock),
 * std::condition_variable::wait_for() and wait_until(steady_clock),
 * std::async's join (future::get()) and std::jthread's (its destructor),
 * for tests/check_cxx_waits.py, built -O2 -g (compiled in: with
 * -include syncprof/instrument.h; preloaded: plain).
 *
 * Each site's function is cold: GCC then leaves libstdc++'s templates
 * out of line (_M_try_lock_until<steady_clock>, __wait_until_impl), as it
 * does in main() or any code it does not think hot, so the lock call's
 * return address lies in one copy of the template that two sites share;
 * the two try_locks, and the two waits, must still be two rows, each at
 * its own line.  std::async's join is made by libstdc++'s
 * _Async_state_commonV2::_M_complete_async(), a virtual function, never
 * inlined into the program.
 *
 * Each marked site stores its own __LINE__, written on the line of the
 * call; main prints "mark NAME FUNCTION TYPE LINE MODES" (MODES: "both",
 * or "preload" where the compiled-in header cannot see the call: a join
 * inside libstdc++.so; FUNCTION "-": a lambda, whose name the compilers
 * spell differently).  Two more sites must stay where they are: a lock in
 * a lambda that std::function runs, and the lock call of a class of the
 * program's that std::unique_lock takes (libstdc++'s copies, with the
 * program's code in them: the line is the program's).  Deterministic:
 * the try_locks fail (main holds the mutex), the waits time out (nobody
 * notifies), the joins join.
 */
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#define SITE __attribute__((noinline, cold))

static std::timed_mutex tmx;
static std::mutex cm;
static std::condition_variable cv;
static std::mutex lm;
static unsigned at_try_for, at_try_until, at_wait_for, at_wait_until, at_async, at_jthread,
	at_lambda, at_own;
static int failed;

SITE static void try_for()
{
	at_try_for = __LINE__ + 1;
	if (tmx.try_lock_for(std::chrono::milliseconds(1))) {
		tmx.unlock();
		failed = 1;
	}
}

SITE static void try_until()
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);

	at_try_until = __LINE__ + 1;
	if (tmx.try_lock_until(deadline)) {
		tmx.unlock();
		failed = 1;
	}
}

SITE static void wait_for()
{
	std::unique_lock<std::mutex> l(cm);
	cv.wait_for(l, std::chrono::milliseconds(1)); at_wait_for = __LINE__;
}

SITE static void wait_until()
{
	std::unique_lock<std::mutex> l(cm);
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);

	cv.wait_until(l, deadline); at_wait_until = __LINE__;
}

SITE static int async_get()
{
	auto f = std::async(std::launch::async, [] { return 7; });

	at_async = __LINE__ + 1;
	return f.get();
}

SITE static void jthread_join()
{
	std::jthread t([] {});
	at_jthread = __LINE__ + 1;
}

/* Not skipped: the program's lambda, which std::function's out-of-line
 * _M_invoke<lambda> holds inlined; its lock is the lambda's line, not
 * the line that calls the std::function. */
SITE static void function_lambda()
{
	std::function<void()> f = [] {
		std::lock_guard<std::mutex> g(lm); at_lambda = __LINE__;
	};

	f();
}

/* Nor the program's own lock that std::unique_lock<Guarded> takes:
 * libstdc++'s copy of unique_lock<Guarded>::lock() (a name of the
 * library's that says "lock") holds Guarded::lock() inlined, and its
 * pthread call is the program's line (preloaded; compiled in, the call is
 * the program's own and named by __FILE__:__LINE__ anyway). */
struct Guarded {
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	void lock()
	{
		pthread_mutex_lock(&m); at_own = __LINE__;
	}
	void unlock() { pthread_mutex_unlock(&m); }
};
static Guarded guarded;

SITE static void own_lock()
{
	/* called through a pointer: the copy is surely out of line */
	static void (std::unique_lock<Guarded>::*volatile lock)() = &std::unique_lock<Guarded>::lock;
	std::unique_lock<Guarded> l(guarded, std::defer_lock);

	(l.*lock)();
}

int main()
{
	tmx.lock();
	std::thread([] {
		for (int i = 0; i < 3; i++) {
			try_for();
			try_until();
		}
	}).join();
	tmx.unlock();
	for (int i = 0; i < 3; i++) {
		wait_for();
		wait_until();
		if (async_get() != 7)
			failed = 1;
		jthread_join();
		function_lambda();
		own_lock();
	}

	const struct {
		const char *name, *function, *type, *modes;
		unsigned line;
	} marks[] = {
		{ "timed_mutex::try_lock_for", "try_for()", "mutex", "both", at_try_for },
		{ "timed_mutex::try_lock_until", "try_until()", "mutex", "both", at_try_until },
		{ "condition_variable::wait_for", "wait_for()", "condvar", "both", at_wait_for },
		{ "condition_variable::wait_until", "wait_until()", "condvar", "both", at_wait_until },
		{ "async::get", "async_get()", "join", "preload", at_async },
		{ "jthread::~jthread", "jthread_join()", "join", "preload", at_jthread },
		{ "std::function-lambda", "-", "mutex", "both", at_lambda },
		{ "unique_lock<Guarded>", "-", "mutex", "both", at_own },
	};
	for (const auto &k : marks)
		std::printf("mark %s %s %s %u %s\n", k.name, k.function, k.type, k.line, k.modes);
	return failed;
}
