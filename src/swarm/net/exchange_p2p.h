/* The point-to-point transport: each round a node posts MPI_Isend of its encoded message
 * to every peer netem says it reaches, then collects what is due.
 * - clock = virtual: it waits for exactly the messages netem schedules for this round
 *   (MPI_Probe + MPI_Recv on (sender, send round)), nothing else, so runs are reproducible;
 * - clock = wall: it takes whatever has arrived (MPI_Iprobe) and whose emulated delay has
 *   passed, never waiting for a late peer.
 * Sent buffers stay alive until their sends complete; messages still in flight can be
 * saved in a checkpoint and posted again on resume. */
#ifndef SAPO_SWARM_NET_EXCHANGE_P2P_H
#define SAPO_SWARM_NET_EXCHANGE_P2P_H

#include <mpi.h>
#include <stdio.h>

#include "swarm/net/exchange.h"
#include "swarm/net/netem.h"

typedef struct P2P P2P;

typedef struct {
    int sent, dropped;      /* messages posted / withheld by netem (lost, offline peer, fanout excluded not counted) */
    double bytes_sent;      /* encoded message bytes, without the transport's 8-byte time prefix */
} P2PSendStats;

P2P* p2p_create(MPI_Comm comm, const Netem* ne, int rank);
/* Another kind of message on a communicator of its own: netem channel ch (netem.h), sent only
 * in rounds r with (r + 1) % every == 0; link_of (not NULL) shares that transport's link, so
 * with net.bandwidth its copies queue behind the other kind's (link_of must outlive it). */
P2P* p2p_create_channel(MPI_Comm comm, const Netem* ne, int rank, int ch, int every, P2P* link_of);
void p2p_free(P2P* p);
/* Posts this round's sends (the buffer is copied). */
P2PSendStats p2p_send(P2P* p, int round, const uint8_t* buf, size_t len);
/* Collects the messages this node uses in `round` into inbox (senders, buffers);
 * inbox->t_wait is the time blocked; *late receives how many were sent in earlier rounds,
 * *offline how many reached this node in a round it is offline (churn) and were discarded:
 * the wall clock counts those it takes off the network then, the virtual clock those netem
 * has arrive then (never sent: their senders count them as dropped). */
void p2p_receive(P2P* p, int round, Inbox* inbox, int* late, int* offline);
/* When every node stops after round end_round - 1 (the last round, or earlier when the
 * run stops on an error): receives and discards everything sent to this node before
 * end_round that it has not received, and completes every send, so MPI can finalize. */
void p2p_drain(P2P* p, int end_round);

/* Checkpoint support: writes the messages sent in rounds < round that are used in a round
 * >= round (their bytes and targets); p2p_load_in_flight, in a run resumed after `round`
 * rounds, reads them back, posts them again and counts only messages of rounds >= round as
 * still to come (wall clock: the others were sent and taken by the processes before).
 * Return 0, or -1 on an I/O or format error. */
int p2p_save_in_flight(P2P* p, int round, FILE* f);
int p2p_load_in_flight(P2P* p, int round, FILE* f);

#endif
