/*
 * bsp98.c - the BSPlib-1998 (int) dialect of bsp.h.
 *
 * A program compiled with -DBSPLIB_1998 calls these entry points under
 * the standard names (bsp.h maps them with asm labels): every size,
 * offset and count is an int, and bsp_qsize / bsp_get_tag /
 * bsp_set_tagsize write ints.  Each converts and calls the size_t
 * implementation in bsp.c, so the semantics are the same; it never
 * writes more than an int through an int pointer.  A negative size, or a
 * result above INT_MAX that an int cannot carry, aborts with a message
 * naming the call (the program's view of it).
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "bsp.h"

PEMS_API void bsp98_push_reg(const void *ident, int size);
PEMS_API void bsp98_put(int pid, const void *src, void *dst, int offset, int nbytes);
PEMS_API void bsp98_hpput(int pid, const void *src, void *dst, int offset, int nbytes);
PEMS_API void bsp98_get(int pid, const void *src, int offset, void *dst, int nbytes);
PEMS_API void bsp98_hpget(int pid, const void *src, int offset, void *dst, int nbytes);
PEMS_API void bsp98_set_tagsize(int *tag_nbytes);
PEMS_API void bsp98_send(int pid, const void *tag, const void *payload, int payload_nbytes);
PEMS_API void bsp98_qsize(int *nmessages, int *accum_nbytes);
PEMS_API void bsp98_get_tag(int *status, void *tag);
PEMS_API void bsp98_move(void *payload, int reception_nbytes);
PEMS_API int bsp98_hpmove(void **tag_ptr, void **payload_ptr);

/* @n as a size, or abort: "FN: WHAT is negative (-3)" */
static size_t size_arg(const char *fn, const char *what, int n)
{
	if (n < 0)
		bsp_abort("%s: %s is negative (%d)", fn, what, n);
	return (size_t)n;
}

/* a pid as the size_t API takes it: negative ones become out of range
 * there and abort with the usual message */
static bsp_pid_t pid_arg(int pid)
{
	return (bsp_pid_t)pid;
}

/* @n as an int result, or abort: the int dialect cannot report it */
static int int_result(const char *fn, const char *what, size_t n)
{
	if (n > INT_MAX)
		bsp_abort("%s: %s is %zu bytes, more than the int dialect (BSPLIB_1998) can report (INT_MAX); build without -DBSPLIB_1998",
			  fn, what, n);
	return (int)n;
}

PEMS_API void bsp98_push_reg(const void *ident, int size)
{
	bsp_push_reg(ident, size_arg("bsp_push_reg", "size", size));
}

PEMS_API void bsp98_put(int pid, const void *src, void *dst, int offset, int nbytes)
{
	bsp_put(pid_arg(pid), src, dst, size_arg("bsp_put", "offset", offset),
		size_arg("bsp_put", "nbytes", nbytes));
}

PEMS_API void bsp98_hpput(int pid, const void *src, void *dst, int offset, int nbytes)
{
	bsp_hpput(pid_arg(pid), src, dst, size_arg("bsp_hpput", "offset", offset),
		  size_arg("bsp_hpput", "nbytes", nbytes));
}

PEMS_API void bsp98_get(int pid, const void *src, int offset, void *dst, int nbytes)
{
	bsp_get(pid_arg(pid), src, size_arg("bsp_get", "offset", offset), dst,
		size_arg("bsp_get", "nbytes", nbytes));
}

PEMS_API void bsp98_hpget(int pid, const void *src, int offset, void *dst, int nbytes)
{
	bsp_hpget(pid_arg(pid), src, size_arg("bsp_hpget", "offset", offset), dst,
		  size_arg("bsp_hpget", "nbytes", nbytes));
}

PEMS_API void bsp98_set_tagsize(int *tag_nbytes)
{
	size_t t = size_arg("bsp_set_tagsize", "the tag size", *tag_nbytes);

	bsp_set_tagsize(&t);
	*tag_nbytes = int_result("bsp_set_tagsize", "the previous tag size", t);
}

PEMS_API void bsp98_send(int pid, const void *tag, const void *payload, int payload_nbytes)
{
	bsp_send(pid_arg(pid), tag, payload, size_arg("bsp_send", "payload_nbytes", payload_nbytes));
}

PEMS_API void bsp98_qsize(int *nmessages, int *accum_nbytes)
{
	unsigned n;
	size_t sum;

	bsp_qsize(&n, &sum);
	if (nmessages)
		*nmessages = int_result("bsp_qsize", "the message count", n);
	if (accum_nbytes)
		*accum_nbytes = int_result("bsp_qsize", "the sum of the payloads", sum);
}

PEMS_API void bsp98_get_tag(int *status, void *tag)
{
	size_t s;

	bsp_get_tag(&s, tag);
	*status = s == (size_t)-1 ? -1 : int_result("bsp_get_tag", "the payload", s);
}

PEMS_API void bsp98_move(void *payload, int reception_nbytes)
{
	bsp_move(payload, size_arg("bsp_move", "reception_nbytes", reception_nbytes));
}

PEMS_API int bsp98_hpmove(void **tag_ptr, void **payload_ptr)
{
	size_t n = bsp_hpmove(tag_ptr, payload_ptr);

	return n == SIZE_MAX ? -1 : int_result("bsp_hpmove", "the payload", n);
}
