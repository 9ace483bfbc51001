/*
 * msg.h - the message store (msg.c): outgoing streams, logs, delivery.
 */
#ifndef PEMS_MSG_H
#define PEMS_MSG_H

#include "rt.h"

int pems_msg_setup(struct pems_rt *rt);
void pems_msg_teardown(struct pems_rt *rt);
void pems_msg_flush(struct pems_worker *w);
void pems_msg_swap(struct pems_rt *rt);	/* at the barrier: out -> in */
void pems_msg_next_log(struct pems_rt *rt);
void pems_msg_deliver(struct pems_worker *w, struct pems_vp *vp, int slot);
void pems_msg_prefetch(struct pems_worker *w, struct pems_vp *vp, int slot);
int pems_msg_worker_init(struct pems_worker *w);
size_t pems_msg_bounce_size(unsigned k, unsigned nranks, size_t chunk);
unsigned pems_msg_ra(unsigned nranks);
void pems_msg_buf_restore(struct pems_rt *rt, struct pems_chunk *c);
size_t pems_msg_chunk_size(size_t budget, unsigned k, unsigned vlocal);
/* the comm thread: a chunk from another rank lands in stream @s */
void pems_msg_land(struct pems_worker *w, struct pems_stream *s, const char *data, size_t len);

#endif
