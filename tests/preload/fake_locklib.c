/*
 * fake_locklib.c - a "lock library" for locklib_dlopen.c: one function
 * whose name carries Abseil's mangled prefix (record/locklib.c knows
 * lock libraries by such names) and that waits through syscall(SYS_futex),
 * as absl::Mutex does.  The wait times out after 30 ms: it slept, so the
 * profiler records it.
 */
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void fake_wait(uint32_t *word) __asm__("_ZN4absl8fakelock4WaitEPj");

__attribute__((noinline)) void fake_wait(uint32_t *word)
{
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, *word, &ts, NULL, 0); /* LIB_WAIT */
	__asm__ volatile("" ::: "memory"); /* no tail call */
}
