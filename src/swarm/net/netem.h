/* The emulated network. Whether a message from node s to node d sent in round r is lost,
 * how long it travels, whether a node is offline in a round, and which peers a node sends
 * to, are pure functions of (run seed, s, d, r): every node computes the same answers, so
 * with the virtual clock a receiver knows exactly which messages are due in each round and
 * waits for just those, and the run is bit-identical on any machine and placement.
 *
 * Virtual time: node k finishes generating round r (sends, then samples its pool) at time
 * (r + 1) x slowdown_k. A message sent at time t with delay x arrives at t + x and is used
 * by the receiver's first round whose sampling time is not earlier. Delay 0, equal speeds:
 * the receiver uses it in the same round, as the synchronous all-gather would. */
#ifndef SAPO_SWARM_NET_NETEM_H
#define SAPO_SWARM_NET_NETEM_H

#include <stddef.h>
#include <stdint.h>

#include "core/config_enums.h" /* NetTransport, LatencyDist */

/* The [net] keys (swarm_settings_read reads them, node_settings.h). */
typedef struct {
    NetTransport transport;
    int wall_clock;          /* net.clock = wall */
    double latency, sigma, cross_region;
    LatencyDist dist;
    int regions;
    double drop;
    int fanout;              /* 0 = every peer */
    double offline, offline_len;
    double bandwidth;        /* bytes per round (virtual) or per second (wall) per sending node; 0 = unlimited */
} NetSettings;

typedef struct {
    uint64_t seed;
    int n_nodes, rounds;
    NetSettings net;
    double* slowdown;        /* per node */
    unsigned char* offline_table; /* (n_nodes, rounds): 1 where the node is offline */
    int weight_group, weight_every; /* NoLoCo over p2p: the weights channel's groups (netem_set_weight_groups) */
} Netem;

/* The network of n_nodes nodes over `rounds` rounds of the run seeded `seed`; slowdown[k] is
 * node k's net.slowdown (copied). */
Netem* netem_create(uint64_t seed, int rounds, const NetSettings* net, int n_nodes, const double* slowdown);
void netem_free(Netem* ne);

int netem_offline(const Netem* ne, int node, int round);
/* s picks d among its peers this round (always 1 without fanout). */
int netem_targets(const Netem* ne, int s, int d, int round);
int netem_dropped(const Netem* ne, int s, int d, int round);
/* Delay of the message s -> d of round r: rounds with the virtual clock, seconds with wall. */
double netem_delay(const Netem* ne, int s, int d, int round);
/* Whether s sends to d in round r at all: s online, d picked, not dropped. */
int netem_sends(const Netem* ne, int s, int d, int round);
/* Virtual clock: the receiver round the message s -> d of round r arrives in, whether or not
 * the receiver is online then; -1 when it is not sent or would arrive after the last round. */
int netem_arrival_round(const Netem* ne, int s, int d, int round);
/* Virtual clock: the receiver round that uses the message s -> d of round r, or -1 when it
 * is never used (not sent, the receiver offline in that round, or after the last round). */
int netem_delivery_round(const Netem* ne, int s, int d, int round);

/* Channels: the same decisions for another kind of message between the same nodes (channel
 * 0 is the rollouts', what the functions above answer; 1 the weights' of sync.method). Churn
 * and fan-out are the node's and its round's, shared by every channel; loss and delay are
 * drawn for each channel from streams of its own. */
enum { NETEM_CH_ROLLOUTS = 0, NETEM_CH_WEIGHTS = 1 };
/* NoLoCo: on the weights channel a node sends to the other members of its group of the outer
 * step (weight_sync_group, net/weight_groups.h; the step of round r is (r + 1) / every - 1), not to its fan-out
 * peers. group 0: the fan-out peers, as on every other channel. */
void netem_set_weight_groups(Netem* ne, int group, int every);
/* s picks d on channel ch this round: netem_targets, or the weights channel's group. */
int netem_targets_ch(const Netem* ne, int ch, int s, int d, int round);
int netem_dropped_ch(const Netem* ne, int ch, int s, int d, int round);
double netem_delay_ch(const Netem* ne, int ch, int s, int d, int round);
int netem_sends_ch(const Netem* ne, int ch, int s, int d, int round);
int netem_arrival_round_ch(const Netem* ne, int ch, int s, int d, int round);
int netem_delivery_round_ch(const Netem* ne, int ch, int s, int d, int round);

/* Bandwidth (net.bandwidth > 0). A sender's link carries one copy at a time: the copies of its
 * round-r message go out one after another, in peer order, each copy to a picked peer (a lost
 * one too: loss happens on the way; the peers of channel ch, netem_targets_ch) taking bytes / bandwidth, after whatever the link still
 * carries from earlier rounds. `start` is when the link began this round's copies (the later of
 * the send time and the end of the previous round's); the copy to d has left the link at the
 * returned time, and arrives netem_delay later. 0 extra time when the bandwidth is unlimited. */
double netem_link_done(const Netem* ne, int ch, int s, int d, int round, double start, size_t bytes);
/* The time the link needs for all of s's copies of round r on channel ch (`bytes` each). */
double netem_link_busy(const Netem* ne, int ch, int s, int round, size_t bytes);
/* Virtual clock: the first round of node d that ends at or after virtual time t. */
int netem_round_at(const Netem* ne, int d, double t);

#endif
