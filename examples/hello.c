/* hello.c - the smallest BSPlib program: every VP says hello, then VP 0
 * counts the greetings it received through bsp_put. */
#include <stdio.h>
#include <bsp.h>

int main(void)
{
	bsp_begin(bsp_nprocs());
	bsp_pid_t p = bsp_nprocs(), s = bsp_pid();
	int one = 1, count[1] = { 0 };

	bsp_push_reg(count, sizeof(count));
	bsp_sync();
	printf("Hello from VP %u of %u\n", s, p);
	/* everyone adds itself in VP order: last put wins, so send our pid */
	bsp_put(0, &one, count, 0, sizeof(int));
	bsp_sync();
	if (s == 0)
		printf("VP 0 got a greeting put: %d\n", count[0]);
	bsp_end();
	return 0;
}
