/*
 * ctx.h - context swapping and the context budget (context.c).
 */
#ifndef PEMS_CTX_H
#define PEMS_CTX_H

#include "rt.h"

int pems_ctx_setup(struct pems_rt *rt);
void pems_ctx_teardown(struct pems_rt *rt);
int pems_ctx_swap_out(struct pems_worker *w, struct pems_vp *vp);
bool pems_ctx_swap_in(struct pems_worker *w, struct pems_vp *vp, bool run);
bool pems_ctx_reserve(struct pems_worker *w, struct pems_vp *vp, size_t want);
bool pems_ctx_hold(struct pems_rt *rt, size_t bytes);
void pems_ctx_seen(struct pems_rt *rt, size_t used);
void pems_ctx_unhold(struct pems_rt *rt, size_t bytes);
size_t pems_ctx_size(const struct pems_rt *rt, const struct pems_vp *vp);
void pems_ctx_trim(struct pems_rt *rt, struct pems_vp *vp);
void pems_worker_reap(struct pems_worker *w, unsigned min);
void pems_ctx_wait(struct pems_worker *w, struct pems_vp *vp);
bool pems_ctx_read_bytes(struct pems_rt *rt, struct pems_vp *vp, const char *addr,
			 void *dst, size_t n);

#endif
