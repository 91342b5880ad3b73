/* A swarm's settings before any node exists (node_config.c): the checks that would stop a run
 * later (swarm_config_check, node_init_verify) and what a node will hold (node_model_capacity,
 * node_memory_estimate). Each takes the typed settings a command read once (node_settings.h). */
#ifndef SAPO_SWARM_NODE_CONFIG_H
#define SAPO_SWARM_NODE_CONFIG_H

#include <stddef.h>

#include "model/gpt.h"
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
/* Bytes a node is expected to hold at its peak: its model(s), the trainer's and the round's
 * buffers, and a fixed allowance for the process itself (MPI, libraries). */
double node_memory_estimate(const SwarmSettings* sw, const NodeSettings* ns);

#endif
