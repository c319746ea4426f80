/*
 * fake_locklib_whole.c - a stripped "lock library" whose every named
 * function carries an Abseil mangled name, for locklib_dlopen.c: the
 * entry point (a const member's name, `_ZNK4absl`) waits through an
 * internal function that has no name once the library is stripped (linked
 * with -s), as libabsl_synchronization's futex waits do.  Its wait's site
 * must still be the caller's line: the library is one whole
 * (record/locklib.c, scan_module()).  The wait times out after 30 ms.
 */
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline, used)) static void futex_wait_internal(uint32_t *word)
{
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, *word, &ts, NULL, 0);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

void event_wait(uint32_t *word) __asm__("_ZNK4absl8fakelock5Event4WaitEPj");
void event_set(uint32_t *word) __asm__("_ZN4absl8fakelock5Event3SetEPj");
void event_reset(uint32_t *word) __asm__("_ZN4absl8fakelock5Event5ResetEPj");
int event_is_set(const uint32_t *word) __asm__("_ZNK4absl8fakelock5Event5IsSetEPKj");

__attribute__((noinline)) void event_wait(uint32_t *word)
{
	futex_wait_internal(word);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

void event_set(uint32_t *word)
{
	__atomic_store_n(word, 1, __ATOMIC_RELEASE);
}

void event_reset(uint32_t *word)
{
	__atomic_store_n(word, 0, __ATOMIC_RELEASE);
}

int event_is_set(const uint32_t *word)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE) != 0;
}
