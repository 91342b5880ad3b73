/* The outer optimiser of weight synchronisation (sync.method = diloco | noloco): its state
 * (the outer weights phi and the outer momentum), the update equations as plain loops over
 * float arrays (docs/SYNC.md writes them out with the papers' symbols) and the state's
 * checkpoint block. The random groups NoLoCo averages over are swarm/net/weight_groups.h's;
 * how the pseudo-gradients of the swarm are averaged is sync_exchange.h's job; nothing here
 * talks to MPI. */
#ifndef SAPO_SWARM_WEIGHT_SYNC_H
#define SAPO_SWARM_WEIGHT_SYNC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/config_enums.h" /* SyncMethod */

/* The [sync] keys (swarm_settings_read reads them). */
typedef struct {
    SyncMethod method;
    int every;            /* H: rounds between outer steps */
    float outer_lr;       /* DiLoCo's eta, NoLoCo's beta */
    float outer_momentum; /* DiLoCo's Nesterov mu, NoLoCo's alpha */
    int group;            /* NoLoCo: nodes per group */
    float pull;           /* NoLoCo: gamma */
} SyncSettings;

typedef struct {
    SyncSettings set;
    size_t n;     /* parameters */
    float* phi;   /* the outer weights: the node's weights when its inner phase began */
    float* mom;   /* the outer momentum: DiLoCo's v, NoLoCo's delta */
    float* buf;   /* (payload) the node's pseudo-gradient, then (NoLoCo) its phi: what it contributes,
                   * and where the exchange leaves the mean of the contributions */
    long steps;   /* outer steps taken */
} WeightSync;

/* The outer state of a node whose weights are `params` (n floats), or NULL with sync.method = none. */
WeightSync* weight_sync_create(const SyncSettings* set, const float* params, size_t n);
void weight_sync_free(WeightSync* ws);
/* Whether round `round` (0-based) ends with an outer step: every H-th round. */
int weight_sync_due(const SyncSettings* set, int round);
/* Floats a node contributes to an outer step: its pseudo-gradient, and NoLoCo its phi too. */
size_t weight_sync_payload(const SyncSettings* set, size_t n);
/* Bytes the outer state holds for n parameters (the memory estimate). */
double weight_sync_memory_bytes(const SyncSettings* set, double n);

/* Fills ws->buf with the node's contribution: Delta = phi - theta (and phi after it, NoLoCo). */
void weight_sync_contribution(WeightSync* ws, const float* theta);
/* The outer step, given the mean over the averaged nodes of their contributions (`mean`,
 * weight_sync_payload floats): updates phi and the momentum and writes phi into theta. */
void weight_sync_apply(WeightSync* ws, const float* mean, float* theta);

/* The update equations alone (docs/SYNC.md), in place over n floats:
 * DiLoCo: v <- mu v + D;  phi <- phi - eta (D + mu v)                       (D: the mean pseudo-gradient)
 * NoLoCo: delta <- alpha delta - beta D - gamma (phi - P);  phi <- phi + delta  (P: the group's mean phi) */
void diloco_outer_update(float* phi, float* v, const float* D, size_t n, float eta, float mu);
void noloco_outer_update(float* phi, float* delta, const float* D, const float* P, size_t n, float beta, float alpha,
                         float gamma);

/* Checkpoint block: steps, n, phi, momentum. 0, or -1 on an I/O error, a short or misshapen block. */
int weight_sync_save(const WeightSync* ws, FILE* f);
int weight_sync_load(WeightSync* ws, FILE* f);

#endif
