/* How a node's encoded message reaches its peers: one table of transports, each a set of
 * functions over its own state (like nccl-tests' struct testColl), chosen in one place,
 * transport_select, from net.transport and the build:
 *   allgather-nccl  every node gets every message, over NCCL (built with NCCL, one GPU per rank)
 *   allgather-mpi   every node gets every message, over MPI_Allgatherv (the paper's exchange)
 *   p2p             MPI_Isend to the peers netem says a node reaches (exchange_p2p.h)
 * The all-gathers are synchronous and ignore netem; p2p applies it and has messages in
 * flight across rounds, which a checkpoint saves and a resume posts again. */
#ifndef SAPO_SWARM_NET_TRANSPORT_H
#define SAPO_SWARM_NET_TRANSPORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/config_enums.h" /* NetTransport */
#include "swarm/net/exchange.h"
#include "swarm/net/netem.h"

/* What one exchange did, for the round's record. */
typedef struct {
    int sent, dropped, late; /* messages posted / withheld by netem / received from earlier rounds */
    int offline;             /* messages that reached this node while it was offline (churn), discarded */
    double bytes_sent;       /* encoded message bytes sent, over all peers */
} ExchangeStats;

struct NcclExchange;
/* Opens the NCCL all-gather exchange over comm on this rank's GPU, or returns NULL on every
 * rank with the reason in why (collective over comm). Handed down by the caller, who knows
 * the rank's GPU (swarm/node_gpu.h: node_gpu_nccl_open); NULL where the build has no NCCL. */
typedef struct NcclExchange* (*TransportNcclOpen)(MPI_Comm comm, char* why, size_t whylen);

typedef struct {
    const char* name;
    /* Builds the transport's state over comm, or returns NULL when it declines (why says so).
     * Collective: every rank gets a state or every rank gets NULL. */
    void* (*create)(MPI_Comm comm, const Netem* ne, int rank, TransportNcclOpen nccl_open, char* why, size_t whylen);
    /* Sends this round's message (buf is copied or used before return) and fills inbox. */
    void (*exchange)(void* state, int round, const uint8_t* buf, size_t len, Inbox* inbox, ExchangeStats* st);
    /* When every node stops after round end_round - 1: completes what is in flight. May be NULL. */
    void (*finish)(void* state, int end_round);
    /* The checkpoint block of messages still in flight (exchange_p2p.h). May be NULL: none. */
    int (*save_in_flight)(void* state, int round, FILE* f);
    int (*load_in_flight)(void* state, int round, FILE* f);
    void (*free)(void* state);
} TransportOps;

typedef struct {
    const TransportOps* ops;
    void* state;
} Transport;

/* Chooses and builds the transport `transport` (net.transport) asks for (NCCL for the
 * all-gather when this build and the machine allow it, else MPI), and writes a line saying
 * which and why into info. Collective over comm. nccl_open: how NCCL starts on this rank's
 * GPU (NULL: not tried). */
Transport* transport_select(NetTransport transport, MPI_Comm comm, const Netem* ne, int rank,
                            TransportNcclOpen nccl_open, char* info, size_t infolen);
void transport_exchange(Transport* t, int round, const uint8_t* buf, size_t len, Inbox* inbox, ExchangeStats* st);
void transport_finish(Transport* t, int end_round);
/* 0 without writing or reading anything when the transport has nothing in flight to keep. */
int transport_save_in_flight(Transport* t, int round, FILE* f);
int transport_load_in_flight(Transport* t, int round, FILE* f);
void transport_free(Transport* t);
/* The p2p transport's state (exchange_p2p.h), or NULL for an all-gather. */
struct P2P* transport_p2p(Transport* t);

#endif
