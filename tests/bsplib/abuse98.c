/*
 * abuse98.c - misuse that only the int dialect can express: negative
 * sizes.  Each must abort with a message naming the call.
 *
 *   ./abuse98 put|send|tagsize
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bsp.h>

int main(int argc, char **argv)
{
	int x = 0, t = -4;

	bsp_begin(2);
	bsp_push_reg(&x, sizeof(x));
	bsp_sync();
	if (bsp_pid() == 0 && argc > 1) {
		if (!strcmp(argv[1], "put"))
			bsp_put(1, &x, &x, 0, -1);
		else if (!strcmp(argv[1], "send"))
			bsp_send(1, NULL, &x, -8);
		else if (!strcmp(argv[1], "tagsize"))
			bsp_set_tagsize(&t);
	}
	bsp_sync();
	bsp_end();
	return 0;
}
