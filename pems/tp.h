/*
 * tp.h - the transport between ranks (transport.c, over the MPI plugin).
 */
#ifndef PEMS_TP_H
#define PEMS_TP_H

#include "rt.h"

struct pems_tp;
bool pems_tp_launched(void);
int pems_tp_world(unsigned *rank, unsigned *size);
void pems_tp_abort(int status);
unsigned pems_owner(const struct pems_rt *rt, unsigned pid);
int pems_tp_start(struct pems_rt *rt);
int pems_tp_check_uniform(struct pems_rt *rt, unsigned v, unsigned k, size_t chunk);
void pems_tp_stop(struct pems_rt *rt);
void pems_tp_send_chunk(struct pems_worker *w, unsigned dst, const char *data, size_t len);
void pems_tp_end_superstep(struct pems_rt *rt);
void pems_tp_resume(struct pems_rt *rt);
void pems_tp_sum_u64(struct pems_rt *rt, uint64_t *v, size_t n);
void pems_tp_allgather(struct pems_rt *rt, const void *in, void *out, size_t bytes);
void pems_tp_allgatherv(struct pems_rt *rt, const void *in, size_t bytes, void *out);
void pems_tp_bcast(struct pems_rt *rt, void *buf, size_t bytes, unsigned root_rank);
char *pems_tp_alltoallv(struct pems_rt *rt, const char *send, const size_t *scount,
			size_t *rcount);

#endif
