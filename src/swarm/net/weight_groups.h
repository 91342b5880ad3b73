/* NoLoCo's random groups (sync.method = noloco): which nodes average together at an outer
 * step. The outer optimiser (swarm/weight_sync.h) and its exchange (swarm/sync_exchange.h)
 * average over them, and netem (swarm/net/netem.h) sends a node's weight messages to its
 * group's other members. A pure function of (swarm.seed, the step). */
#ifndef SAPO_SWARM_NET_WEIGHT_GROUPS_H
#define SAPO_SWARM_NET_WEIGHT_GROUPS_H

#include <stdint.h>

/* NoLoCo's groups of outer step `step`: a seeded permutation of the n_nodes nodes (swarm.seed,
 * the step) cut into consecutive groups of `group`, the last one taking the remainder. Writes
 * node `rank`'s group into members (ascending) and returns its size. */
int weight_sync_group(uint64_t seed, int n_nodes, int group, long step, int rank, int* members);

#endif
