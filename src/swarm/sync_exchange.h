/* How a node's outer step (weight_sync.h) gets the mean of the swarm's contributions.
 * Over net.transport = allgather it is the exact synchronous method: an MPI_Allreduce of the
 * contributions over the whole swarm (DiLoCo) or over the node's random group of the outer
 * step (NoLoCo, a communicator split per step), every node of a group averaging the same
 * numbers in the same reduction, so they leave it with the same bits.
 * Over net.transport = p2p each contribution is a weight message (weight_message.h) on netem's
 * weights channel, a p2p transport of its own (net/exchange_p2p.h) that shares the rollouts' link:
 * latency, loss, fan-out (NoLoCo: its group instead), churn, slowdown and bandwidth apply.
 * Every round the node keeps the
 * freshest verified contribution of each sender; at its outer step it averages its own with
 * those that have arrived (NoLoCo: those of its group), so the mean can be stale or partial. */
#ifndef SAPO_SWARM_SYNC_EXCHANGE_H
#define SAPO_SWARM_SYNC_EXCHANGE_H

#include <mpi.h>
#include <stdint.h>

#include "swarm/net/exchange_p2p.h"
#include "swarm/weight_sync.h"

/* What one outer step did, for the round's record. */
typedef struct {
    int peers;            /* other nodes whose contributions entered the mean */
    double age;           /* rounds since the stalest of them was computed (0: synchronous) */
    double bytes_sent;    /* contribution bytes sent to the peers (one contribution each) */
    double bytes_received;
    int dropped;          /* p2p: weight messages this node did not send (lost, offline peer) */
    int rejected;         /* p2p: received weight messages that failed to decode */
    int offline;          /* p2p: weight messages that reached this node while offline, discarded */
} SyncStats;

/* The outer step of node `rank` of n_nodes over comm (collective over every node): its
 * contribution from theta (n floats), the mean over the swarm or its group, the update;
 * theta ends as the new outer weights. */
void sync_step_allreduce(WeightSync* ws, MPI_Comm comm, uint64_t seed, int rank, int n_nodes, float* theta,
                         SyncStats* st);

typedef struct SyncP2P SyncP2P;

/* The weights' p2p transport of node `rank` (collective: it duplicates comm), sending in the
 * outer steps' rounds; link_of: the rollouts' transport, whose link it shares (or NULL). */
SyncP2P* sync_p2p_create(MPI_Comm comm, const Netem* ne, int rank, const SyncSettings* set, P2P* link_of);
void sync_p2p_free(SyncP2P* sp);
/* Round `round` of node `rank`: on an outer step's round it sends its contribution from theta
 * (corrupted as net.fault asks) and, after taking this round's weight messages, takes the
 * step; on other rounds it only takes the messages due. Fills st (zeroes where nothing happened). */
void sync_step_p2p(SyncP2P* sp, WeightSync* ws, uint64_t seed, int fault, int rank, int n_nodes, int round,
                   float* theta, SyncStats* st);
/* When every node stops after round end_round - 1 (p2p_drain). */
void sync_p2p_finish(SyncP2P* sp, int end_round);
/* Checkpoint block: the weight messages in flight and those received but not yet used. */
int sync_p2p_save(SyncP2P* sp, int round, FILE* f);
int sync_p2p_load(SyncP2P* sp, int round, FILE* f);

#endif
