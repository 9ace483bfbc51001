/*
 * config.h - deriving a run's sizes from its configuration (config.c).
 */
#ifndef PEMS_CONFIG_H
#define PEMS_CONFIG_H

#include "rt.h"

/* Fill what @cfg leaves at 0 and check that M holds it (k workers at
 * full mu beside the overhead): 0, or -PEMS_E_BUDGET with a message. */
int pems_config_derive(struct pems_config *cfg, unsigned maxprocs,
		       struct pems_derived *d);
/* The configuration of pems_configure, else of the environment (read
 * once): 0, or pems_config_init's error (printed once). */
int pems_config_default(struct pems_config *out);
/* What pems_configure refuses: 0 or -EINVAL. */
int pems_config_check(const struct pems_config *cfg);
/* context.c (4): bytes of the rest pool @rest that held message chunks
 * and cached contexts may take, k workers, contexts of @ctx */
size_t pems_hold_limit(size_t rest, unsigned k, size_t ctx);

#endif
