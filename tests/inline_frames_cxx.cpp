/*
 * inline_frames_cxx.cpp - a C++ lambda whose lock is taken in a static
 * function inlined into it, for tests/check_inline_frames.py (built -O2
 * -g, run preloaded under 'syncprof run').
 *
 * teller() runs a lambda per turn; the lambda and the static,
 * always_inline post() it calls are both inlined into teller() at -O2, so
 * the return address of post()'s std::mutex::lock() lies in teller()'s
 * code and the lambda exists only in DWARF's inline records.  The reports
 * must show teller, then the lambda, as frames above the lock's site.
 * Four threads hold the mutex 2 ms per turn: waits in every run.
 */
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

static std::mutex ledger_lock;
static long ledger;

static inline __attribute__((always_inline)) void post(long amount)
{
	std::lock_guard<std::mutex> g(ledger_lock);
	std::this_thread::sleep_for(std::chrono::milliseconds(2));
	ledger += amount;
}

static __attribute__((noinline)) void teller(long amount)
{
	auto pay = [amount](int turn) __attribute__((always_inline)) { post(amount + turn); };

	for (int i = 0; i < 10; i++)
		pay(i);
}

int main()
{
	std::vector<std::thread> v;

	for (long i = 1; i <= 4; i++)
		v.emplace_back(teller, i);
	for (auto &t : v)
		t.join();
	std::printf("inline_frames_cxx: ledger %ld\n", ledger);
	return ledger == 4 * 45 + 10 * (1 + 2 + 3 + 4) ? 0 : 1;
}
