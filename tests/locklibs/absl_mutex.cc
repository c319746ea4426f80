// absl_mutex.cc - std_mutex.rs with Abseil's absl::Mutex, which waits on
// its own futex through syscall() (absl's FutexImpl), never pthread.
// Prints "measured_wait_ns N".
// Usage: absl_mutex [HOLDS [HOLD_MS [WAITERS]]]
#include <absl/synchronization/mutex.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

using Clock = std::chrono::steady_clock;

int main(int argc, char **argv)
{
	const long holds = argc > 1 ? atol(argv[1]) : 12;
	const long hold_ms = argc > 2 ? atol(argv[2]) : 20;
	const long waiters = argc > 3 ? atol(argv[3]) : 3;
	absl::Mutex lock;
	std::atomic<bool> done{false};
	std::vector<std::thread> ts;
	std::vector<long long> waited(waiters);
	long long counter = 0;

	lock.Lock(); // held while the waiters start
	for (long i = 0; i < waiters; i++)
		ts.emplace_back([&, i] {
			while (!done.load(std::memory_order_relaxed)) {
				auto t = Clock::now();
				lock.Lock(); // LINE_WAIT
				waited[i] += std::chrono::duration_cast<std::chrono::nanoseconds>(
						     Clock::now() - t).count();
				counter++;
				lock.Unlock();
				std::this_thread::sleep_for(std::chrono::milliseconds(2));
			}
		});
	std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
	lock.Unlock();
	for (long k = 1; k < holds; k++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
		lock.Lock(); // LINE_HOLD
		std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms)); // held, sleeping
		lock.Unlock();
	}
	done = true;
	long long total = 0;
	for (long i = 0; i < waiters; i++) {
		ts[i].join(); // LINE_JOIN
		total += waited[i];
	}
	printf("measured_wait_ns %lld\n", total);
	return counter > 0 ? 0 : 1;
}
