/*
 * reg.c - DRMA registrations of a VP (bsp_push_reg / bsp_pop_reg).
 *
 * Each VP keeps its registrations in one table in push order; an entry
 * is usable from the superstep after its push (born) up to and
 * including the superstep of its pop (died), so that puts issued before
 * a pop are still delivered.  Ids are push sequence numbers, equal on
 * every VP: a put or get names the destination's registration by id
 * (msg.c, coll.c), found by bisection since ids increase along the table.
 */
#include <errno.h>
#include <stdlib.h>

#include "rt.h"

struct pems_reg *pems_reg_find_id(struct pems_vp *vp, uint64_t id)
{
	unsigned lo = 0, hi = vp->nregs;

	while (lo < hi) {	/* ids increase along the table */
		unsigned mid = (lo + hi) / 2;

		if (vp->regs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < vp->nregs && vp->regs[lo].id == id ? &vp->regs[lo] : NULL;
}

/* Latest registration of @addr usable in superstep @step: pushed in an
 * earlier superstep, not popped before @step. */
struct pems_reg *pems_reg_find_addr(struct pems_vp *vp, const void *addr, uint64_t step)
{
	unsigned i;

	for (i = vp->nregs; i-- > 0;) {
		struct pems_reg *r = &vp->regs[i];

		if (r->addr == addr && r->born < step &&
		    (r->died == PEMS_NONE || r->died >= step))
			return r;
	}
	return NULL;
}

int pems_reg_push(struct pems_vp *vp, const void *addr, size_t size, uint64_t step)
{
	struct pems_reg *r;

	if (vp->nregs == vp->capregs) {
		unsigned cap = vp->capregs ? vp->capregs * 2 : 16;

		r = realloc(vp->regs, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		vp->regs = r;
		vp->capregs = cap;
	}
	r = &vp->regs[vp->nregs++];
	r->id = vp->next_reg_id++;
	r->addr = (char *)addr;
	r->size = size;
	r->born = step;
	r->died = PEMS_NONE;
	return 0;
}

int pems_reg_pop(struct pems_vp *vp, const void *addr, uint64_t step)
{
	unsigned i;

	for (i = vp->nregs; i-- > 0;) {
		struct pems_reg *r = &vp->regs[i];

		if (r->addr == addr && r->died == PEMS_NONE) {
			r->died = step;
			return 0;
		}
	}
	return -ENOENT;
}

/* Forget registrations popped before the last superstep: their last
 * puts were delivered at the start of this one. */
void pems_reg_compact(struct pems_vp *vp, uint64_t step)
{
	unsigned i, j = 0;

	for (i = 0; i < vp->nregs; i++)
		if (vp->regs[i].died == PEMS_NONE || vp->regs[i].died + 1 >= step)
			vp->regs[j++] = vp->regs[i];
	vp->nregs = j;
}
