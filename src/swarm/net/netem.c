/* The emulated network as pure functions (see netem.h). Each decision draws from its own
 * Philox stream keyed by (seed, kind | sender | receiver, round, RNG_NETEM). */
#include "swarm/net/netem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/rng.h"
#include "swarm/net/weight_groups.h" /* weight_sync_group: NoLoCo's groups */

enum { KIND_DROP = 1, KIND_DELAY = 2, KIND_FANOUT = 3, KIND_CHURN = 4 };

/* Channel ch (netem.h) draws its loss and delay from streams of its own: kind + 16 ch. */
static RngStream stream(const Netem* ne, int kind, int s, int d, int round) {
    uint32_t who = ((uint32_t)kind << 24) | ((uint32_t)(s & 0xFFF) << 12) | (uint32_t)(d & 0xFFF);
    return rng_stream(ne->seed, who, (uint32_t)round, RNG_NETEM);
}

Netem* netem_create(uint64_t seed, int rounds, const NetSettings* net, int n_nodes, const double* slowdown) {
    Netem* ne = callocCheck(1, sizeof *ne);
    ne->seed = seed;
    ne->n_nodes = n_nodes;
    ne->rounds = rounds;
    ne->net = *net;
    ne->slowdown = mallocCheck(sizeof(double) * n_nodes);
    memcpy(ne->slowdown, slowdown, sizeof(double) * n_nodes);
    /* Churn: a two-state Markov chain per node, started from its stationary distribution.
     * Offline spells last offline_len rounds on average (leave with p = 1/len); the chance
     * to drop out is set so that the long-run offline share is net.offline. */
    int R = ne->rounds > 0 ? ne->rounds : 1;
    ne->offline_table = callocCheck((size_t)n_nodes * R, 1);
    if (ne->net.offline > 0.0) {
        double leave = 1.0 / ne->net.offline_len;
        double enter = ne->net.offline * leave / (1.0 - ne->net.offline);
        for (int k = 0; k < n_nodes; k++) {
            int off = 0;
            for (int r = 0; r < R; r++) {
                RngStream rng = stream(ne, KIND_CHURN, k, 0, r);
                double u = rng_double(&rng);
                off = r == 0 ? u < ne->net.offline : off ? !(u < leave) : u < enter;
                ne->offline_table[(size_t)k * R + r] = (unsigned char)off;
            }
        }
    }
    return ne;
}

void netem_free(Netem* ne) {
    if (!ne) return;
    free(ne->slowdown);
    free(ne->offline_table);
    free(ne);
}

int netem_offline(const Netem* ne, int node, int round) {
    if (round < 0 || round >= ne->rounds) return 0;
    return ne->offline_table[(size_t)node * ne->rounds + round];
}

int netem_targets(const Netem* ne, int s, int d, int round) {
    if (s == d) return 0;
    if (ne->net.fanout <= 0 || ne->net.fanout >= ne->n_nodes - 1) return 1;
    /* s's peers this round: the first `fanout` of a seeded shuffle of the others */
    RngStream rng = stream(ne, KIND_FANOUT, s, 0, round);
    int n = ne->n_nodes;
    int* order = mallocCheck(sizeof(int) * n);
    int m = 0;
    for (int k = 0; k < n; k++)
        if (k != s) order[m++] = k;
    int picked = 0;
    for (int i = 0; i < ne->net.fanout; i++) {
        int j = i + (int)rng_below(&rng, (uint64_t)(m - i));
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
        if (order[i] == d) picked = 1;
    }
    free(order);
    return picked;
}

void netem_set_weight_groups(Netem* ne, int group, int every) {
    ne->weight_group = group;
    ne->weight_every = every > 0 ? every : 1;
}

int netem_targets_ch(const Netem* ne, int ch, int s, int d, int round) {
    if (ch != NETEM_CH_WEIGHTS || ne->weight_group <= 0) return netem_targets(ne, s, d, round);
    if (s == d) return 0;
    int* members = mallocCheck(sizeof(int) * ne->n_nodes);
    int g = weight_sync_group(ne->seed, ne->n_nodes, ne->weight_group, (round + 1) / ne->weight_every - 1, s, members);
    int in = 0;
    for (int i = 0; i < g; i++) in |= members[i] == d;
    free(members);
    return in;
}

int netem_dropped(const Netem* ne, int s, int d, int round) { return netem_dropped_ch(ne, 0, s, d, round); }

int netem_dropped_ch(const Netem* ne, int ch, int s, int d, int round) {
    if (ne->net.drop <= 0.0) return 0;
    if (ne->net.drop >= 1.0) return 1;
    RngStream rng = stream(ne, KIND_DROP + 16 * ch, s, d, round);
    return rng_double(&rng) < ne->net.drop;
}

double netem_delay(const Netem* ne, int s, int d, int round) { return netem_delay_ch(ne, 0, s, d, round); }

double netem_delay_ch(const Netem* ne, int ch, int s, int d, int round) {
    double base = ne->net.latency;
    if (ne->net.regions > 1 && s % ne->net.regions != d % ne->net.regions) base += ne->net.cross_region;
    if (ne->net.latency <= 0.0 || ne->net.dist == LATENCY_CONSTANT) return base;
    RngStream rng = stream(ne, KIND_DELAY + 16 * ch, s, d, round);
    double extra = base - ne->net.latency;
    if (ne->net.dist == LATENCY_UNIFORM) return extra + 2.0 * ne->net.latency * rng_double(&rng);
    /* lognormal with mean `latency`: mu = log(mean) - sigma^2 / 2 */
    double mu = log(ne->net.latency) - 0.5 * ne->net.sigma * ne->net.sigma;
    return extra + exp(mu + ne->net.sigma * rng_normal(&rng));
}

int netem_sends(const Netem* ne, int s, int d, int round) { return netem_sends_ch(ne, 0, s, d, round); }

int netem_sends_ch(const Netem* ne, int ch, int s, int d, int round) {
    return !netem_offline(ne, s, round) && netem_targets_ch(ne, ch, s, d, round) && !netem_dropped_ch(ne, ch, s, d, round);
}

int netem_round_at(const Netem* ne, int d, double t) {
    /* the first receiver round r' with (r' + 1) x slowdown_d >= t */
    double x = t / ne->slowdown[d] - 1.0;
    long r = (long)ceil(x - 1e-9);
    if (r < 0) r = 0;
    return r < ne->rounds ? (int)r : -1;
}

int netem_arrival_round(const Netem* ne, int s, int d, int round) { return netem_arrival_round_ch(ne, 0, s, d, round); }

int netem_arrival_round_ch(const Netem* ne, int ch, int s, int d, int round) {
    if (!netem_sends_ch(ne, ch, s, d, round)) return -1;
    return netem_round_at(ne, d, (round + 1) * ne->slowdown[s] + netem_delay_ch(ne, ch, s, d, round));
}

double netem_link_done(const Netem* ne, int ch, int s, int d, int round, double start, size_t bytes) {
    if (ne->net.bandwidth <= 0.0) return start;
    int ahead = 0; /* copies that leave before d's: the picked peers below d */
    for (int k = 0; k < d; k++) ahead += netem_targets_ch(ne, ch, s, k, round);
    return start + (double)(ahead + 1) * ((double)bytes / ne->net.bandwidth);
}

double netem_link_busy(const Netem* ne, int ch, int s, int round, size_t bytes) {
    if (ne->net.bandwidth <= 0.0) return 0.0;
    int copies = 0;
    for (int k = 0; k < ne->n_nodes; k++) copies += netem_targets_ch(ne, ch, s, k, round);
    return (double)copies * ((double)bytes / ne->net.bandwidth);
}

int netem_delivery_round(const Netem* ne, int s, int d, int round) { return netem_delivery_round_ch(ne, 0, s, d, round); }

int netem_delivery_round_ch(const Netem* ne, int ch, int s, int d, int round) {
    int at = netem_arrival_round_ch(ne, ch, s, d, round);
    return at < 0 || netem_offline(ne, d, at) ? -1 : at;
}
