/* A swarm's settings before any node exists (node_config.c): the checks that would stop a run
 * later (swarm_config_check, node_init_verify) and what a node will hold (node_model_capacity,
 * node_memory_estimate). Each takes the typed settings a command read once (node_settings.h). */
#ifndef SAPO_SWARM_NODE_CONFIG_H
#define SAPO_SWARM_NODE_CONFIG_H

#include <stddef.h>

#include "model/model.h"
#include "swarm/node_settings.h"

/* Checks, on every node's settings, what would stop a run later (I + J = groups, the init
 * checkpoint's shape, tasks and preset, the backend, no [node.K] beyond the swarm). Returns 0
 * or -1 with one line in err. */
int swarm_config_check(const RunSettings* rs, char* err, size_t errlen);
/* Reads node `rank`'s model.init (ns->init) through (header, shape, payload length and
 * checksum: checkpoint_verify), which swarm_config_check checks by its header only; each rank
 * checks its own before any run directory exists. 0 (also without one), or -1 with
 * "node K: model.init: checkpoint PATH: ..." in err. */
int node_init_verify(const NodeSettings* ns, int rank, char* err, size_t errlen);

/* The model capacity of a node: micro-batches of model.micro_tokens for its I + J groups,
 * generation of its I prompts x L rows (evaluation in chunks of up to 16 prompts). */
ModelCapacity node_model_capacity(const SwarmSettings* sw, const NodeSettings* ns);
/* What a rank of a swarm of n_nodes holds at its peak, in bytes, term by term; a function of
 * the settings only (docs/PERFORMANCE.md compares it with the measured peak). Untouched
 * capacity costs nothing (Linux maps a page when it is first written), so each term counts
 * what the worst-case round writes: full micro-batches, every completion max_new_tokens long. */
typedef struct {
    double policy;        /* model_memory_bytes: weights, gradients, Adam m and v, the activations
                           * of a micro-batch, attention weights, generation's KV caches and scratch */
    double reference;     /* with grpo.kl > 0: the reference model, less its never written gradients,
                           * moments and generation caches */
    double round;         /* prompts, completions, texts and messages of a round; the trainer's per-token buffers */
    double peers;         /* Open MPI's private state per peer, the inbox and the pool (I groups per sender) */
    double sync;          /* sync.method: the outer weights, momentum and contribution (weight_sync.h) */
    double process;       /* libc, OpenBLAS, HDF5, Open MPI and the task tables before any node buffer */
    double private_total; /* the sum of the above: the rank's private (anonymous) memory */
    double shared;        /* Open MPI's shared-memory segment of this rank (n_nodes > 1), in /dev/shm */
} NodeMemoryTerms;
NodeMemoryTerms node_memory_terms(const SwarmSettings* sw, const NodeSettings* ns, int n_nodes);
/* What a rank costs its host: node_memory_terms' private_total + shared. */
double node_memory_estimate(const SwarmSettings* sw, const NodeSettings* ns, int n_nodes);

#endif
