/*
 * bsp.c - the BSPlib surface: argument checks, registration, DRMA and
 * BSMP on top of the runtime.  Misuse aborts with a message that starts
 * with the function's name (BSPlib convention).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pems_rt.h"
#include "bsp.h"

static void (*spmd_fn)(void);
static int saved_argc;
static char **saved_argv;

extern int main(int, char **);

/* The VP calling, or abort naming @fn when outside the SPMD section. */
static struct pems_vp *self_or_abort(const char *fn)
{
	struct pems_vp *vp = pems_self();

	if (!vp || vp->past_end)
		bsp_abort("%s: called outside the SPMD section (before bsp_begin or after bsp_end)", fn);
	return vp;
}

static void check_pid(const char *fn, bsp_pid_t pid)
{
	unsigned v = pems_rt_procs();

	if (pid >= v)
		bsp_abort("%s: pid %u is out of range; there are %u VPs (0..%u)", fn, pid, v, v - 1);
}

PEMS_API void bsp_abort(const char *format, ...)
{
	va_list ap;
	size_t n = strlen(format);

	fflush(stdout);
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	if (!n || format[n - 1] != '\n')
		fputc('\n', stderr);
	pems_die(1);
}

/* ---- lifecycle ---- */

static void begin(bsp_pid_t maxprocs, bool native);

PEMS_API void bsp_init(void (*spmd)(void), int argc, char **argv)
{
	spmd_fn = spmd;
	saved_argc = argc;
	saved_argv = argv;
	/* Under mpirun only rank 0 runs the sequential part of main (BSPlib:
	 * bsp_init lets the other processes start at the SPMD function);
	 * the others join rank 0's bsp_begin right away and end with it. */
	if (pems_rank() > 0)	/* starts MPI under mpirun; 0 if it fails */
		begin(0, false);
}

/* argv for VPs that run main() because bsp_init was not called */
static void read_cmdline(void)
{
	static char buf[65536];
	static char *args[256];
	FILE *f = fopen("/proc/self/cmdline", "r");
	size_t n, i;
	int c = 0;

	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (i = 0; i < n && c < 255; i += strlen(buf + i) + 1)
		args[c++] = buf + i;
	args[c] = NULL;
	saved_argc = c;
	saved_argv = args;
}

static void vp_main(void *arg)
{
	(void)arg;
	if (spmd_fn) {
		spmd_fn();
	} else {
		int rc = main(saved_argc, saved_argv);

		/* VP 0 ran the whole of main, including what follows bsp_end */
		if (pems_self() && pems_self()->lid == 0)
			pems_rt_set_exit(rc);
	}
}

/*
 * The virtual machine's size: PEMS_PROCS (or pems_configure's procs)
 * when set, else PEMS_DEFAULT_PROCS.  VPs are virtual, so the machine
 * has as many as a program asks for: this is only what bsp_nprocs()
 * reports before bsp_begin and what bsp_begin(0) grants.
 */
static unsigned machine_size(void)
{
	unsigned procs = pems_current_config()->procs;

	return procs ? procs : PEMS_DEFAULT_PROCS;
}

/* VPs granted for bsp_begin(@maxprocs): exactly @maxprocs, or fewer when
 * PEMS_PROCS sets a smaller machine (BSPlib: at most maxprocs). */
static unsigned granted(bsp_pid_t maxprocs)
{
	unsigned procs = pems_current_config()->procs;

	if (!maxprocs || (int)maxprocs < 0)	/* 0, or a negative int (1998 dialect) */
		return machine_size();
	return procs && procs < maxprocs ? procs : maxprocs;
}

/*
 * Start the SPMD section from the initial thread.  @native: the caller
 * goes on as the first VP of this rank (pems_rt_begin), like process 0
 * of a process-based BSPlib: the code before bsp_begin has run once in
 * it, and in the bsp_init form main goes on after the SPMD function.
 * The other VPs start at the SPMD function, or at main without bsp_init
 * (so that code runs once in each VP, as in its own process).  Not
 * native: when checkpointing (a resume restores VPs on slice stacks
 * only: checkpoint.c) and for the ranks bsp_init sends straight in;
 * then every VP starts afresh and the process exits at the end.
 */
static void begin(bsp_pid_t maxprocs, bool native)
{
	int rc;

	if (pems_rt_running())
		bsp_abort("bsp_begin: called twice");
	if (!spmd_fn)
		read_cmdline();
	/* each VP its own globals, from the image main started with when it
	 * runs main afresh, else from the globals as they are now */
	pems_globals_begin(pems_current_config()->shared_globals ? PEMS_GLOBALS_OFF :
			   spmd_fn ? PEMS_GLOBALS_FORK : PEMS_GLOBALS_IMAGE);
	if (native && !pems_current_config()->ckpt_dir) {
		pems_rt_begin(vp_main, NULL, granted(maxprocs));
		return;
	}
	rc = pems_rt_run(NULL, vp_main, NULL, granted(maxprocs));
	fflush(stdout);
	/* the SPMD section and VP 0's code after bsp_end have run: what
	 * called bsp_begin on this thread must not run a second time */
	exit(rc < 0 ? 1 : rc);
}

PEMS_API void bsp_begin(bsp_pid_t maxprocs)
{
	struct pems_vp *vp = pems_self();

	if (vp) {
		if (vp->sync_count || vp->state != VP_RUNNING)
			bsp_abort("bsp_begin: called twice");
		return;	/* each VP passes through its own bsp_begin */
	}
	begin(maxprocs, true);
}

PEMS_API void bsp_end(void)
{
	struct pems_vp *vp = self_or_abort("bsp_end");

	if (vp->lid == 0 && pems_rt_rank() == 0)
		pems_vp_end_keep();	/* VP 0 runs on after the last superstep */
	else
		pems_vp_end();
}

PEMS_API bsp_pid_t bsp_nprocs(void)
{
	return pems_rt_running() ? pems_rt_procs() : machine_size();
}

PEMS_API bsp_pid_t bsp_pid(void)
{
	return self_or_abort("bsp_pid")->pid;
}

PEMS_API double bsp_time(void)
{
	self_or_abort("bsp_time");
	return pems_rt_time();
}

/* ---- registration ---- */

PEMS_API void bsp_push_reg(const void *ident, bsp_size_t size)
{
	struct pems_vp *vp = self_or_abort("bsp_push_reg");

	if (pems_reg_push(vp, pems_globals_addr(vp, ident), size, pems_rt_superstep()))
		bsp_abort("bsp_push_reg: out of memory");
}

PEMS_API void bsp_pop_reg(const void *ident)
{
	struct pems_vp *vp = self_or_abort("bsp_pop_reg");

	if (pems_reg_pop(vp, pems_globals_addr(vp, ident), pems_rt_superstep()))
		bsp_abort("bsp_pop_reg: address %p is not registered on VP %u", ident, vp->pid);
}

/* ---- sync ---- */

PEMS_API void bsp_sync(void)
{
	struct pems_vp *vp = self_or_abort("bsp_sync");

	if (vp->q_buf) {
		pems_heap_free(&vp->heap, vp->q_buf);
		vp->q_buf = NULL;
	}
	vp->q_count = 0;
	vp->q_pos = vp->q_len = 0;
	vp->tagsize = vp->tagsize_next;
	pems_reg_compact(vp, pems_rt_superstep());
	vp->sync_count++;
	pems_vp_sync();
}

/* ---- DRMA ---- */

/* The registration of @addr on the calling VP.  Bounds are BSPlib's:
 * against the size the *destination* registered, so they are checked
 * where that is known -- at delivery (puts) and at the barrier (gets);
 * here only what no registration could allow. */
static struct pems_reg *reg_or_abort(const char *fn, struct pems_vp *vp, const void *addr,
				     bsp_size_t offset, bsp_size_t nbytes)
{
	struct pems_reg *r = pems_reg_find_addr(vp, pems_globals_addr(vp, addr), pems_rt_superstep());

	if (!r)
		bsp_abort("%s: address %p is not registered on VP %u (register it with bsp_push_reg and bsp_sync first)",
			  fn, addr, vp->pid);
	if (offset + nbytes < offset)
		bsp_abort("%s: offset %zu + %zu bytes overflows", fn, offset, nbytes);
	return r;
}

PEMS_API void bsp_put(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset,
		      bsp_size_t nbytes)
{
	struct pems_vp *vp = self_or_abort("bsp_put");
	struct pems_reg *r;
	struct pems_rec rec;

	check_pid("bsp_put", pid);
	r = reg_or_abort("bsp_put", vp, dst, offset, nbytes);
	if (!nbytes)
		return;
	rec = (struct pems_rec){ .type = REC_PUT, .src = vp->pid, .len = nbytes,
				 .a = r->id, .b = offset };
	pems_msg_append(pems_self_worker(), pid, &rec, src, nbytes, NULL, 0);
	vp->sent_bytes += nbytes;
}

PEMS_API void bsp_hpput(bsp_pid_t pid, const void *src, void *dst, bsp_size_t offset,
			bsp_size_t nbytes)
{
	bsp_put(pid, src, dst, offset, nbytes);
}

PEMS_API void bsp_get(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
		      bsp_size_t nbytes)
{
	struct pems_vp *vp = self_or_abort("bsp_get");
	struct pems_reg *r;
	struct pems_get g;

	check_pid("bsp_get", pid);
	r = reg_or_abort("bsp_get", vp, src, offset, nbytes);
	if (!nbytes)
		return;
	/* the reply lands before this VP computes again: a global @dst in
	 * its copy */
	g = (struct pems_get){ .target = pid, .requester = vp->pid, .slot = r->id,
			       .offset = offset, .nbytes = nbytes,
			       .dst = pems_globals_addr(vp, dst) };
	pems_get_record(pems_self_worker(), &g);
}

PEMS_API void bsp_hpget(bsp_pid_t pid, const void *src, bsp_size_t offset, void *dst,
			bsp_size_t nbytes)
{
	bsp_get(pid, src, offset, dst, nbytes);
}

/* ---- BSMP ---- */

PEMS_API void bsp_set_tagsize(bsp_size_t *tag_bytes)
{
	struct pems_vp *vp = self_or_abort("bsp_set_tagsize");
	bsp_size_t want = *tag_bytes;

	*tag_bytes = vp->tagsize_next;
	vp->tagsize_next = want;
}

PEMS_API void bsp_send(bsp_pid_t pid, const void *tag, const void *payload,
		       bsp_size_t payload_bytes)
{
	struct pems_vp *vp = self_or_abort("bsp_send");
	struct pems_rec rec;
	size_t entry;

	check_pid("bsp_send", pid);
	if (payload_bytes && !payload)
		bsp_abort("bsp_send: payload is NULL but payload_bytes is %zu", payload_bytes);
	rec = (struct pems_rec){ .type = REC_SEND, .src = vp->pid,
				 .len = vp->tagsize + payload_bytes, .a = vp->tagsize };
	pems_msg_append(pems_self_worker(), pid, &rec, tag, vp->tagsize, payload, payload_bytes);
	entry = (16 + vp->tagsize + payload_bytes + 15) & ~(size_t)15;
	pems_msg_count(pid, true, entry);
	vp->sent_bytes += vp->tagsize + payload_bytes;
}

static uint64_t *q_head(struct pems_vp *vp)
{
	return vp->q_pos < vp->q_len ? (uint64_t *)(vp->q_buf + vp->q_pos) : NULL;
}

static void q_pop(struct pems_vp *vp)
{
	uint64_t *h = q_head(vp);

	vp->q_pos += (16 + h[0] + h[1] + 15) & ~(size_t)15;
	vp->q_count--;
}

PEMS_API void bsp_qsize(bsp_nprocs_t *packets, bsp_size_t *accum_bytes)
{
	struct pems_vp *vp = self_or_abort("bsp_qsize");
	size_t pos, sum = 0;

	for (pos = vp->q_pos; pos < vp->q_len;) {
		uint64_t *h = (uint64_t *)(vp->q_buf + pos);

		sum += h[1];
		pos += (16 + h[0] + h[1] + 15) & ~(size_t)15;
	}
	if (packets)
		*packets = vp->q_count;
	if (accum_bytes)
		*accum_bytes = sum;
}

PEMS_API void bsp_get_tag(bsp_size_t *status, void *tag)
{
	struct pems_vp *vp = self_or_abort("bsp_get_tag");
	uint64_t *h = q_head(vp);

	if (!h) {
		*status = (bsp_size_t)-1;
		return;
	}
	*status = h[1];
	if (h[0] && tag)
		memcpy(tag, h + 2, h[0]);
}

PEMS_API void bsp_move(void *payload, bsp_size_t reception_bytes)
{
	struct pems_vp *vp = self_or_abort("bsp_move");
	uint64_t *h = q_head(vp);
	size_t n;

	if (!h)
		bsp_abort("bsp_move: the message queue of VP %u is empty", vp->pid);
	n = h[1] < reception_bytes ? h[1] : reception_bytes;
	if (n && !payload)
		bsp_abort("bsp_move: payload is NULL but reception_bytes is %zu", reception_bytes);
	memcpy(payload, (char *)(h + 2) + h[0], n);
	q_pop(vp);
}

PEMS_API bsp_size_t bsp_hpmove(void **tag_ptr, void **payload_ptr)
{
	struct pems_vp *vp = self_or_abort("bsp_hpmove");
	uint64_t *h = q_head(vp);
	size_t n;

	if (!tag_ptr || !payload_ptr)
		bsp_abort("bsp_hpmove: tag_ptr and payload_ptr must not be NULL");
	if (!h)
		return SIZE_MAX;
	*tag_ptr = h + 2;
	*payload_ptr = (char *)(h + 2) + h[0];
	n = h[1];
	q_pop(vp);
	return n;
}
