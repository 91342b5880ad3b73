/* How a node's outer step (weight_sync.h) gets the mean of the swarm's contributions.
 * Over net.transport = allgather it is the exact synchronous method: an MPI_Allreduce of the
 * contributions over the whole swarm (DiLoCo) or over the node's random group of the outer
 * step (NoLoCo, a communicator split per step), every node of a group averaging the same
 * numbers in the same reduction, so they leave it with the same bits. */
#ifndef SAPO_SWARM_SYNC_EXCHANGE_H
#define SAPO_SWARM_SYNC_EXCHANGE_H

#include <mpi.h>
#include <stdint.h>

#include "swarm/weight_sync.h"

/* What one outer step did, for the round's record. */
typedef struct {
    int peers;            /* other nodes whose contributions entered the mean */
    double age;           /* rounds since the stalest of them was computed (0: synchronous) */
    double bytes_sent;    /* contribution bytes sent to the peers (one contribution each) */
    double bytes_received;
} SyncStats;

/* The outer step of node `rank` of n_nodes over comm (collective over every node): its
 * contribution from theta (n floats), the mean over the swarm or its group, the update;
 * theta ends as the new outer weights. */
void sync_step_allreduce(WeightSync* ws, MPI_Comm comm, uint64_t seed, int rank, int n_nodes, float* theta,
                         SyncStats* st);

#endif
