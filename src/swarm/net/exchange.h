/* The exchanges that move encoded messages between nodes, and the Inbox they fill; a node
 * reaches them through the transport table (transport.h). `allgather` is the paper's
 * synchronous exchange: every node gets every other node's message of this round. */
#ifndef SAPO_SWARM_EXCHANGE_H
#define SAPO_SWARM_EXCHANGE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Messages a node received in one exchange (its own excluded). */
typedef struct {
    int n;
    int* senders;
    uint8_t** bufs;  /* each a view into `storage` */
    size_t* lens;
    uint8_t* storage; /* one block holding every buffer (all-gather), or NULL */
    int owns_buffers; /* 1: each bufs[i] is its own allocation (p2p) */
    double t_wait;    /* seconds blocked waiting for peers */
    /* Per message, the receiver's round its age counts from (external_age_min / _max), or
     * NULL: the message's own send round, where every node's rounds are one clock (all-gather,
     * p2p's virtual clock). p2p's wall clock: the round this node took it off the network,
     * since a faster sender's round can be ahead of the receiver's. */
    int* age_from;
} Inbox;

/* MPI_Allgather of the sizes, then MPI_Allgatherv of the bytes. */
void exchange_allgather(MPI_Comm comm, const uint8_t* mine, size_t len, Inbox* inbox);

/* The same exchange over NCCL (swarm/net/nccl_allgather.h, implemented beside it; only built
 * with SAPO_HAVE_NCCL): the same Inbox, byte for byte. */
struct NcclExchange;
void exchange_allgather_nccl(struct NcclExchange* x, MPI_Comm comm, const uint8_t* mine, size_t len, Inbox* inbox);
void inbox_free(Inbox* inbox);

#endif
