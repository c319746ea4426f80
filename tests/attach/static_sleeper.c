/* static_sleeper.c - a statically linked program that waits on stdin, for
 * the refusal of 'syncprof attach' (attach_refusals.sh). */
#include <stdio.h>

int main(void)
{
	char line[64];

	puts("ready");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))
		;
	return 0;
}
