/*
 * stack_walk_dso.c - a library for test_stack_walk.c: a frame of its own
 * on the way to a capture, so that a learned rule of one of its return
 * addresses can be seen to stop being used once the library is unloaded.
 */
__attribute__((noinline, visibility("default"))) void stack_walk_dso_call(void (*fn)(void *),
									   void *arg)
{
	fn(arg);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}
