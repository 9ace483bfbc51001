/*
 * globals.c - per-VP private copies of the program's writable globals.
 *
 * A BSPlib program written for processes keeps per-process state in
 * globals and statics (static bsp_pid_t s, p; a global array registered
 * with bsp_push_reg).  In a bsp_begin/bsp_init run every VP gets its own
 * copy of them, as if it were its own process:
 *
 *  (1) "the program's globals" are the executable's .data and .bss
 *      output sections, read from its section headers (/proc/self/exe).
 *      The runtime's own globals are not among them: the Makefile moves
 *      the .data/.bss of every libpems object to sections of their own
 *      (pems_rwdata, pems_rwbss), which the linker keeps apart.  Globals
 *      of shared libraries (libc's, libpems.so's) stay shared;
 *  (2) a VP's copy is a block of G bytes in its heap (so it is spilled,
 *      checkpointed and counted in mu with the context) and is installed
 *      at the globals' own addresses only while the VP computes: run()
 *      copies it in before switching to the VP and back out after
 *      (2 * G bytes per switch).  Pointers to globals therefore keep
 *      their value everywhere in the program;
 *  (3) one copy can be installed at a time, so VPs of a rank compute one
 *      at a time (a mutex around the switch); the k workers still
 *      overlap swap-in, delivery and write-back with that computing VP;
 *  (4) while a VP is not computing, its globals are in its copy: what
 *      the runtime delivers to or reads from a global address of a VP
 *      (puts, get replies, gets served, collective results) goes to the
 *      copy: bsp/ translates such addresses with pems_globals_addr when
 *      it records them;
 *  (5) a copy starts as the pristine image (the globals as main found
 *      them, saved before main) for VPs that run main from its start,
 *      and as the globals at bsp_begin for the VP that called it and
 *      for VPs that start at the bsp_init function (as a fork at
 *      bsp_begin would give them).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt.h"


#define MAX_RANGES 4

static struct {
	char *lo[MAX_RANGES];
	size_t len[MAX_RANGES];
	unsigned n;
	size_t total;		/* G */
	char *pristine;		/* the image before main */
	char *at_begin;		/* the image at bsp_begin */
	bool mixed;		/* the library's globals lie among them (1) */
	enum pems_globals_mode next;	/* for the run bsp_begin starts */
} g;

static int bias_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr;
	return 1;	/* the first object is the program */
}

/* The program's .data and .bss, from its section headers (1). */
static void find_ranges(void)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL;
	char *names = NULL;
	uintptr_t bias = 0;
	unsigned i;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_shentsize != sizeof(ElfW(Shdr)) || eh.e_shstrndx >= eh.e_shnum)
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
		   (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	names = malloc(sh[eh.e_shstrndx].sh_size + 1);
	if (!names || pread(fd, names, sh[eh.e_shstrndx].sh_size, (off_t)sh[eh.e_shstrndx].sh_offset) !=
		      (ssize_t)sh[eh.e_shstrndx].sh_size)
		goto out;
	names[sh[eh.e_shstrndx].sh_size] = 0;
	dl_iterate_phdr(bias_cb, &bias);
	for (i = 0; i < eh.e_shnum && g.n < MAX_RANGES; i++) {
		const char *nm = sh[i].sh_name < sh[eh.e_shstrndx].sh_size ? names + sh[i].sh_name : "";

		if ((strcmp(nm, ".data") && strcmp(nm, ".bss")) || !sh[i].sh_size ||
		    !(sh[i].sh_flags & SHF_WRITE) || !(sh[i].sh_flags & SHF_ALLOC))
			continue;
		g.lo[g.n] = (char *)(bias + sh[i].sh_addr);
		g.len[g.n] = sh[i].sh_size;
		g.total += sh[i].sh_size;
		g.n++;
	}
out:
	free(names);
	free(sh);
	close(fd);
}

#if defined(__SANITIZE_ADDRESS__)
/* The sections hold AddressSanitizer's redzones between the globals:
 * copy them whole with accesses it does not check (its memcpy would
 * report them), and without letting the loop become a memcpy call. */
__attribute__((no_sanitize_address, optimize("no-tree-loop-distribute-patterns")))
static void copy(char *dst, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		dst[i] = src[i];
}
#else
#define copy memcpy
#endif

static void gather(char *dst)
{
	unsigned i;

	for (i = 0; i < g.n; dst += g.len[i], i++)
		copy(dst, g.lo[i], g.len[i]);
}

static void scatter(const char *src)
{
	unsigned i;

	for (i = 0; i < g.n; src += g.len[i], i++)
		copy(g.lo[i], src, g.len[i]);
}

/* Before main (and before the program's own constructors): the pristine
 * image (5).  Priority 101: the first that may be used. */
__attribute__((constructor(101))) static void globals_init(void)
{
	unsigned i;

	find_ranges();
	/* a library object built without the Makefile's renaming would be
	 * copied with the program: then copying is not safe, share */
	for (i = 0; i < g.n; i++)
		if ((char *)&g >= g.lo[i] && (char *)&g < g.lo[i] + g.len[i])
			g.mixed = true;
	if (g.mixed)
		g.total = 0;
	if (g.total)
		g.pristine = malloc(g.total);
	if (g.pristine)
		gather(g.pristine);
	else
		g.total = 0;
}

size_t pems_globals_size(void)
{
	return g.total;
}

/* bsp_begin: the next run gives its VPs copies (@mode); save the
 * globals as they are now (5). */
void pems_globals_begin(enum pems_globals_mode mode)
{
	g.next = mode;
	if (g.mixed && mode != PEMS_GLOBALS_OFF && !pems_current_config()->quiet)
		fprintf(stderr, "pems: warning: the program's globals cannot be told from the library's (libpems built without the Makefile's section renaming); its VPs share them\n");
	if (!g.total || mode == PEMS_GLOBALS_OFF)
		return;
	if (!g.at_begin)
		g.at_begin = malloc(g.total);
	if (!g.at_begin)
		pems_fatal("cannot save the program's globals (%zu bytes): out of memory", g.total);
	gather(g.at_begin);
}

/* The mode of the run starting now (pems_rt_run): once. */
enum pems_globals_mode pems_globals_take(void)
{
	enum pems_globals_mode m = g.total ? g.next : PEMS_GLOBALS_OFF;

	g.next = PEMS_GLOBALS_OFF;
	return m;
}

/* Where the runtime must read or write @addr of @vp while it is not
 * computing: its copy for a global address (4), else @addr. */
void *pems_globals_addr(struct pems_vp *vp, const void *addr)
{
	const char *a = addr;
	size_t off = 0;
	unsigned i;

	if (!vp || !vp->globals)
		return (void *)addr;
	for (i = 0; i < g.n; off += g.len[i], i++)
		if (a >= g.lo[i] && a < g.lo[i] + g.len[i])
			return vp->globals + off + (size_t)(a - g.lo[i]);
	return (void *)addr;
}

/* Give @vp its copy (2, 5) if it has none yet; false if the heap is full. */
static bool give_copy(struct pems_rt *rt, struct pems_vp *vp)
{
	const char *from = vp->native || rt->globals == PEMS_GLOBALS_FORK ? g.at_begin : g.pristine;

	vp->globals = pems_heap_alloc(&vp->heap, g.total);
	if (!vp->globals)
		return false;
	memcpy(vp->globals, from ? from : g.pristine, g.total);	/* heap to heap */
	return true;
}

/* Install @vp's copy (2) before it computes, giving it one at its first
 * run (in its run slot, so counted like any allocation); @lock: take
 * the rank's globals lock (3), held until pems_globals_out. */
void pems_globals_in(struct pems_rt *rt, struct pems_vp *vp, bool lock)
{
	if (!rt->globals || !g.total)
		return;
	if (!vp->globals && !give_copy(rt, vp))
		pems_fatal("VP %u cannot hold a copy of the program's globals (%zu bytes) in mu = %zu bytes; raise mu or set PEMS_GLOBALS=shared",
			   vp->pid, g.total, rt->mu);
	if (lock)
		pthread_mutex_lock(&rt->globals_lock);
	scatter(vp->globals);
}

/* After @vp computed: save its globals into its copy, let the next in. */
void pems_globals_out(struct pems_rt *rt, struct pems_vp *vp)
{
	if (!rt->globals || !vp->globals)
		return;
	gather(vp->globals);
	pthread_mutex_unlock(&rt->globals_lock);
}
