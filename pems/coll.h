/*
 * coll.h - collectives and gets at the barrier (coll.c).
 */
#ifndef PEMS_COLL_H
#define PEMS_COLL_H

#include "rt.h"

void pems_coll_barrier(struct pems_rt *rt);
void pems_coll_free(struct pems_rt *rt);
void pems_coll_deliver(struct pems_rt *rt, struct pems_vp *vp);
void pems_gets_serve(struct pems_rt *rt);
void pems_gets_deliver(struct pems_rt *rt, struct pems_vp *vp);

#endif
