/* The emulated network's decisions (src/swarm/net/netem.c) checked as the pure functions of
 * (seed, s, d, r) they are, with fixed seeds: partial loss rates inside tight binomial bounds
 * over many (s, d, r); fanout gives exactly `net.fanout` distinct peers, never the sender,
 * each peer about equally often; constant, uniform (range, mean, variance) and lognormal
 * (mean, and the mean and spread of the log) delays; `net.regions` + `net.cross_region` add
 * exactly the cross-region delay to pairs in different regions and nothing to the others;
 * churn's offline share and mean spell length; a few delivery rounds worked out by hand from
 * netem.h's definition of virtual time; and that every answer is a function of its
 * arguments and the seed alone. The bounds are 6 standard deviations: a correct netem passes
 * (the seeds are fixed, so the outcome never changes), a broken one (loss never applied,
 * fanout ignored, uniform read as constant, regions ignored) fails by far more. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"
#include "swarm/net/netem.h"
#include "swarm/net/weight_groups.h"
#include "swarm/node_settings.h"
#include "../test_assert.h"

/* A Netem of n nodes from the defaults plus the given overrides (NULL-terminated). */
static Netem* make(int n, ...) {
    Config* cfg = config_new();
    char err[512];
    va_list ap;
    va_start(ap, n);
    for (const char* a; (a = va_arg(ap, const char*));)
        if (config_set_override(cfg, a, err, sizeof err)) {
            printf("FAIL override %s: %s\n", a, err);
            exit(1);
        }
    va_end(ap);
    if (config_validate(cfg, err, sizeof err)) {
        printf("FAIL config: %s\n", err);
        exit(1);
    }
    RunSettings rs = run_settings_read(cfg, n);
    Netem* ne = run_settings_netem(&rs);
    run_settings_free(&rs);
    config_free(cfg);
    return ne;
}

/* |x - mean| within k standard deviations */
static int within(double x, double mean, double sd, double k) { return fabs(x - mean) <= k * sd; }

static void check_drop(void) {
    const int n = 16, R = 200;
    const char* rates[] = {"net.drop=0.05", "net.drop=0.3", "net.drop=0.5", "net.drop=0.9"};
    const double p[] = {0.05, 0.3, 0.5, 0.9};
    for (int k = 0; k < 4; k++) {
        Netem* ne = make(n, "swarm.rounds=200", rates[k], NULL);
        long dropped = 0, total = 0, sends = 0, undelivered = 0;
        long per_sender[16] = {0};
        for (int s = 0; s < n; s++)
            for (int d = 0; d < n; d++)
                for (int r = 0; r < R; r++) {
                    if (s == d) continue;
                    int x = netem_dropped(ne, s, d, r);
                    dropped += x;
                    per_sender[s] += x;
                    total++;
                    sends += netem_sends(ne, s, d, r);
                    if (x) undelivered += netem_delivery_round(ne, s, d, r) < 0;
                }
        double sd = sqrt(total * p[k] * (1 - p[k]));
        EXPECT(within((double)dropped, total * p[k], sd, 6), "%s: %ld of %ld messages lost (expected %.0f +- %.0f)",
               rates[k], dropped, total, total * p[k], 6 * sd);
        EXPECT(sends == total - dropped, "%s: netem_sends says %ld sent, %ld not lost", rates[k], sends, total - dropped);
        EXPECT(undelivered == dropped, "%s: %ld lost messages still have a delivery round", rates[k], dropped - undelivered);
        /* the loss is spread over every sender, not concentrated on a few */
        double per = (double)(n - 1) * R, sds = sqrt(per * p[k] * (1 - p[k]));
        for (int s = 0; s < n; s++)
            EXPECT(within((double)per_sender[s], per * p[k], sds, 6), "%s: sender %d lost %ld of %.0f", rates[k], s,
                   per_sender[s], per);
        netem_free(ne);
    }
    Netem* none = make(n, "swarm.rounds=200", NULL);
    Netem* all = make(n, "swarm.rounds=200", "net.drop=1", NULL);
    long lost_none = 0, lost_all = 0;
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++)
            for (int r = 0; r < R; r++)
                if (s != d) {
                    lost_none += netem_dropped(none, s, d, r);
                    lost_all += !netem_dropped(all, s, d, r);
                }
    EXPECT(lost_none == 0 && lost_all == 0, "drop 0 lost %ld, drop 1 delivered %ld", lost_none, lost_all);
    netem_free(none);
    netem_free(all);
}

static void check_fanout(void) {
    const int n = 10, R = 1000;
    const char* fans[] = {"net.fanout=1", "net.fanout=3", "net.fanout=8"};
    const int f[] = {1, 3, 8};
    for (int k = 0; k < 3; k++) {
        Netem* ne = make(n, "swarm.rounds=1000", fans[k], NULL);
        long picked[10][10] = {{0}};
        int wrong = 0, self = 0, sends_unpicked = 0;
        for (int s = 0; s < n; s++)
            for (int r = 0; r < R; r++) {
                int m = 0;
                for (int d = 0; d < n; d++) {
                    int t = netem_targets(ne, s, d, r);
                    m += t;
                    picked[s][d] += t;
                    if (d == s) self += t;
                    if (!t) sends_unpicked += netem_sends(ne, s, d, r) || netem_delivery_round(ne, s, d, r) >= 0;
                }
                wrong += m != f[k];
            }
        EXPECT(wrong == 0, "%s: %d of %d (sender, round) pick another number of peers", fans[k], wrong, n * R);
        EXPECT(self == 0, "%s: a node picked itself %d times", fans[k], self);
        EXPECT(sends_unpicked == 0, "%s: %d messages to peers not picked are still sent", fans[k], sends_unpicked);
        double p = (double)f[k] / (n - 1), sd = sqrt(R * p * (1 - p));
        for (int s = 0; s < n; s++)
            for (int d = 0; d < n; d++)
                if (s != d)
                    EXPECT(within((double)picked[s][d], R * p, sd, 6), "%s: %d picked %d in %ld of %d rounds (expected %.0f)",
                           fans[k], s, d, picked[s][d], R, R * p);
        netem_free(ne);
    }
    /* 0 and anything >= n - 1 mean every peer */
    const char* everyone[] = {"net.fanout=0", "net.fanout=9", "net.fanout=50"};
    for (int k = 0; k < 3; k++) {
        Netem* ne = make(n, "swarm.rounds=50", everyone[k], NULL);
        int missing = 0;
        for (int s = 0; s < n; s++)
            for (int d = 0; d < n; d++)
                for (int r = 0; r < 50; r++) missing += netem_targets(ne, s, d, r) != (s != d);
        EXPECT(missing == 0, "%s: %d (s, d, r) differ from 'every peer'", everyone[k], missing);
        netem_free(ne);
    }
}

/* Delays of every (s, d, r), s != d: moments of all of them, or of one region relation only
 * (same = 1: same region, 0: different, -1: all). */
typedef struct {
    long n;
    double sum, sum2, min, max, log_sum, log_sum2;
} Moments;

static Moments delays(const Netem* ne, int R, int same) {
    Moments m = {0, 0, 0, INFINITY, -INFINITY, 0, 0};
    for (int s = 0; s < ne->n_nodes; s++)
        for (int d = 0; d < ne->n_nodes; d++)
            for (int r = 0; r < R; r++) {
                if (s == d) continue;
                int same_region = ne->net.regions <= 1 || s % ne->net.regions == d % ne->net.regions;
                if (same >= 0 && same_region != same) continue;
                double x = netem_delay(ne, s, d, r);
                m.n++;
                m.sum += x;
                m.sum2 += x * x;
                m.min = x < m.min ? x : m.min;
                m.max = x > m.max ? x : m.max;
                if (x > 0) {
                    m.log_sum += log(x);
                    m.log_sum2 += log(x) * log(x);
                }
            }
    return m;
}

static double mean(const Moments* m) { return m->sum / m->n; }
static double var(const Moments* m) { return m->sum2 / m->n - mean(m) * mean(m); }

static void check_latency(void) {
    const int n = 16, R = 200;
    /* constant: exactly the mean, every message */
    Netem* c = make(n, "swarm.rounds=200", "net.latency=1.25", NULL);
    Moments mc = delays(c, R, -1);
    EXPECT(mc.min == 1.25 && mc.max == 1.25, "constant latency 1.25: delays in [%g, %g]", mc.min, mc.max);
    netem_free(c);

    /* uniform on [0, 2 x mean]: range, mean, variance (2m)^2 / 12, and the share below the mean */
    double m = 2.0;
    Netem* u = make(n, "swarm.rounds=200", "net.latency=2", "net.latency_dist=uniform", NULL);
    Moments mu = delays(u, R, -1);
    double sd_mean = 2 * m / sqrt(12.0) / sqrt((double)mu.n);
    double v = 4 * m * m / 12, sd_var = v * sqrt(0.8 / mu.n); /* uniform: kurtosis 9/5 */
    EXPECT(mu.min >= 0 && mu.max < 2 * m, "uniform latency 2: delays in [%g, %g], outside [0, 4)", mu.min, mu.max);
    EXPECT(mu.min < 0.01 * m && mu.max > 1.99 * m, "uniform latency 2: %ld delays only cover [%g, %g]", mu.n, mu.min,
           mu.max);
    EXPECT(within(mean(&mu), m, sd_mean, 6), "uniform latency 2: mean %g", mean(&mu));
    EXPECT(within(var(&mu), v, sd_var, 6), "uniform latency 2: variance %g (expected %g)", var(&mu), v);
    long below = 0;
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++)
            for (int r = 0; r < R; r++) below += s != d && netem_delay(u, s, d, r) < m;
    EXPECT(within((double)below, mu.n * 0.5, sqrt(mu.n * 0.25), 6), "uniform latency 2: %ld of %ld below the mean", below,
           mu.n);
    netem_free(u);

    /* lognormal with mean m and shape sigma: E = m, log ~ N(log m - sigma^2 / 2, sigma^2) */
    double sigma = 0.5, lm = 1.5;
    Netem* l = make(n, "swarm.rounds=200", "net.latency=1.5", "net.latency_dist=lognormal", "net.latency_sigma=0.5", NULL);
    Moments ml = delays(l, R, -1);
    double sd_l = lm * sqrt(exp(sigma * sigma) - 1) / sqrt((double)ml.n);
    double log_mean = ml.log_sum / ml.n, log_sd = sqrt(ml.log_sum2 / ml.n - log_mean * log_mean);
    EXPECT(ml.min > 0, "lognormal: a delay of %g", ml.min);
    EXPECT(within(mean(&ml), lm, sd_l, 6), "lognormal latency 1.5: mean %g", mean(&ml));
    EXPECT(within(log_mean, log(lm) - sigma * sigma / 2, sigma / sqrt((double)ml.n), 6), "lognormal: mean of the log %g",
           log_mean);
    EXPECT(fabs(log_sd - sigma) < 0.02 * sigma, "lognormal: sd of the log %g (expected %g)", log_sd, sigma);
    netem_free(l);

    /* the delay of (s, d, r) is the same on every call and in every Netem of the same config */
    Netem* a = make(n, "swarm.rounds=200", "net.latency=2", "net.latency_dist=uniform", NULL);
    Netem* b = make(n, "swarm.rounds=200", "net.latency=2", "net.latency_dist=uniform", NULL);
    int differ = 0;
    for (int r = 0; r < R; r++) differ += netem_delay(a, 3, 5, r) != netem_delay(b, 3, 5, r);
    EXPECT(differ == 0, "two Netems of one config disagree on %d delays", differ);
    /* and differs between (s, d) pairs and rounds */
    EXPECT(netem_delay(a, 3, 5, 7) != netem_delay(a, 5, 3, 7) && netem_delay(a, 3, 5, 7) != netem_delay(a, 3, 5, 8),
           "uniform delays repeat across pairs or rounds");
    netem_free(a);
    netem_free(b);
}

static void check_regions(void) {
    const int n = 12, R = 100;
    /* constant latency 1, 3 regions (node k in region k mod 3), 5 more across regions */
    Netem* c = make(n, "swarm.rounds=100", "net.latency=1", "net.regions=3", "net.cross_region=5", NULL);
    int bad = 0;
    long cross = 0;
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++)
            for (int r = 0; r < R; r++) {
                if (s == d) continue;
                int other = s % 3 != d % 3;
                cross += other;
                bad += netem_delay(c, s, d, r) != (other ? 6.0 : 1.0);
            }
    EXPECT(bad == 0, "regions 3, latency 1, cross 5: %d delays differ from 1 (same region) / 6 (across)", bad);
    EXPECT(cross == (long)R * n * (n - 4), "%ld cross-region messages", cross);
    netem_free(c);

    /* no latency at all: the cross-region delay alone */
    Netem* z = make(n, "swarm.rounds=100", "net.regions=2", "net.cross_region=2", NULL);
    bad = 0;
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++)
            if (s != d) bad += netem_delay(z, s, d, 4) != (s % 2 != d % 2 ? 2.0 : 0.0);
    EXPECT(bad == 0, "regions 2, cross 2, no latency: %d delays differ", bad);
    /* ... which the virtual clock turns into exactly 2 rounds */
    EXPECT(netem_delivery_round(z, 0, 1, 3) == 5 && netem_delivery_round(z, 0, 2, 3) == 3,
           "cross-region delivery %d (expected 5), same region %d (expected 3)", netem_delivery_round(z, 0, 1, 3),
           netem_delivery_round(z, 0, 2, 3));
    netem_free(z);

    /* uniform latency: the cross-region pairs are the same distribution shifted by exactly 3 */
    Netem* u = make(n, "swarm.rounds=100", "net.latency=2", "net.latency_dist=uniform", "net.regions=2",
                    "net.cross_region=3", NULL);
    Netem* u1 = make(n, "swarm.rounds=100", "net.latency=2", "net.latency_dist=uniform", NULL);
    bad = 0;
    for (int s = 0; s < n; s++)
        for (int d = 0; d < n; d++)
            for (int r = 0; r < R; r++)
                if (s != d) {
                    double shift = s % 2 != d % 2 ? 3.0 : 0.0;
                    bad += fabs(netem_delay(u, s, d, r) - shift - netem_delay(u1, s, d, r)) > 1e-12;
                }
    EXPECT(bad == 0, "regions 2, cross 3, uniform: %d delays are not the one-region delay plus the cross delay", bad);
    Moments same = delays(u, R, 1), other = delays(u, R, 0);
    EXPECT(same.min >= 0 && same.max < 4 && other.min >= 3 && other.max < 7,
           "uniform 2 + cross 3: same-region [%g, %g], cross-region [%g, %g]", same.min, same.max, other.min, other.max);
    netem_free(u);
    netem_free(u1);
    /* one region: net.cross_region does nothing */
    Netem* one = make(n, "swarm.rounds=100", "net.latency=1", "net.cross_region=5", NULL);
    Moments mo = delays(one, R, -1);
    EXPECT(mo.min == 1 && mo.max == 1, "one region with cross_region 5: delays in [%g, %g]", mo.min, mo.max);
    netem_free(one);
}

static void check_offline(void) {
    const int n = 16, R = 5000;
    double share = 0.2, len = 5;
    Netem* ne = make(n, "swarm.rounds=5000", "net.offline=0.2", "net.offline_len=5", NULL);
    long off = 0, spells = 0, spell_rounds = 0, silent_bad = 0;
    for (int k = 0; k < n; k++) {
        int run = 0;
        for (int r = 0; r < R; r++) {
            int o = netem_offline(ne, k, r);
            off += o;
            if (o) run++;
            if ((!o || r == R - 1) && run > 0) {
                if (!o) { /* a complete spell (one cut by the end is not counted) */
                    spells++;
                    spell_rounds += run;
                }
                run = 0;
            }
            if (o && r < 50) /* an offline node neither sends nor gets anything in that round */
                for (int d = 0; d < n; d++)
                    if (d != k)
                        silent_bad += netem_sends(ne, k, d, r) != 0 || netem_delivery_round(ne, d, k, r) == r;
        }
    }
    /* the chain stays in a state for 1 / (leave + enter) rounds: the share's variance grows by
     * (1 + lambda) / (1 - lambda), lambda = 1 - leave - enter */
    double leave = 1 / len, enter = share * leave / (1 - share), lambda = 1 - leave - enter;
    double total = (double)n * R, sd = sqrt(share * (1 - share) * (1 + lambda) / (1 - lambda) / total);
    EXPECT(within(off / total, share, sd, 6), "offline 0.2: share %g (expected 0.2 +- %g)", off / total, 6 * sd);
    double spell = (double)spell_rounds / spells, sd_spell = sqrt(1 - leave) / leave / sqrt((double)spells);
    EXPECT(within(spell, len, sd_spell, 6), "offline_len 5: %ld spells of %g rounds on average", spells, spell);
    EXPECT(silent_bad == 0, "%ld messages from or to offline nodes", silent_bad);
    netem_free(ne);
    Netem* never = make(n, "swarm.rounds=100", NULL);
    long any = 0;
    for (int k = 0; k < n; k++)
        for (int r = 0; r < 100; r++) any += netem_offline(never, k, r);
    EXPECT(any == 0, "offline 0: %ld offline rounds", any);
    netem_free(never);
}

static void check_delivery(void) {
    /* netem.h: node k finishes round r at (r + 1) x slowdown_k; a message arrives after its
     * delay and is used in the receiver's first round that ends at or after that. */
    Netem* z = make(3, "swarm.rounds=6", NULL);
    EXPECT(netem_delivery_round(z, 0, 1, 2) == 2, "latency 0: delivered in %d, not the same round",
           netem_delivery_round(z, 0, 1, 2));
    netem_free(z);
    Netem* k2 = make(3, "swarm.rounds=6", "net.latency=2", NULL);
    EXPECT(netem_delivery_round(k2, 0, 1, 1) == 3 && netem_delivery_round(k2, 2, 0, 3) == 5, "latency 2: %d %d",
           netem_delivery_round(k2, 0, 1, 1), netem_delivery_round(k2, 2, 0, 3));
    EXPECT(netem_delivery_round(k2, 0, 1, 4) == -1, "latency 2: round 4's message is due after the last round");
    netem_free(k2);
    Netem* half = make(3, "swarm.rounds=6", "net.latency=0.5", NULL);
    EXPECT(netem_delivery_round(half, 1, 2, 0) == 1, "latency 0.5: %d", netem_delivery_round(half, 1, 2, 0));
    netem_free(half);
    /* node 1 twice as slow: its round r' ends at 2 (r' + 1); node 0's round r at r + 1 */
    Netem* slow = make(3, "swarm.rounds=6", "node.1.net.slowdown=2", NULL);
    const int want01[] = {0, 0, 1, 1, 2, 2}; /* 0 -> 1: first r' with 2 (r' + 1) >= r + 1 */
    const int want10[] = {1, 3, 5, -1, -1, -1}; /* 1 -> 0: first r' with r' + 1 >= 2 (r + 1) */
    for (int r = 0; r < 6; r++) {
        EXPECT(netem_delivery_round(slow, 0, 1, r) == want01[r], "slow receiver, round %d: %d (expected %d)", r,
               netem_delivery_round(slow, 0, 1, r), want01[r]);
        EXPECT(netem_delivery_round(slow, 1, 0, r) == want10[r], "slow sender, round %d: %d (expected %d)", r,
               netem_delivery_round(slow, 1, 0, r), want10[r]);
    }
    netem_free(slow);
}

static void check_bandwidth(void) {
    /* net.bandwidth W: a copy of B bytes leaves the link B / W after it starts; the copies of
     * one round go out in peer order; the next round's wait for the link. */
    Netem* w = make(4, "swarm.rounds=20", "net.bandwidth=400", NULL);
    EXPECT(netem_link_done(w, 0, 0, 1, 0, 1.0, 1000) == 1.0 + 2.5, "one copy of 1000 B at 400 B/round: %g",
           netem_link_done(w, 0, 0, 1, 0, 1.0, 1000));
    EXPECT(netem_link_done(w, 0, 0, 3, 0, 1.0, 1000) == 1.0 + 3 * 2.5, "the third copy leaves after two: %g",
           netem_link_done(w, 0, 0, 3, 0, 1.0, 1000));
    EXPECT(netem_link_done(w, 0, 2, 3, 0, 1.0, 1000) == 1.0 + 3 * 2.5 && netem_link_done(w, 0, 2, 0, 0, 1.0, 1000) == 3.5,
           "the sender is not its own peer: %g %g", netem_link_done(w, 0, 2, 3, 0, 1.0, 1000),
           netem_link_done(w, 0, 2, 0, 0, 1.0, 1000));
    EXPECT(netem_link_busy(w, 0, 1, 0, 1000) == 3 * 2.5, "three copies: %g", netem_link_busy(w, 0, 1, 0, 1000));
    /* arrival ceil(B / W) rounds later: sent at the end of round r (time r + 1), in round r + ceil(B / W) */
    for (int B = 100; B <= 3000; B += 100) {
        int want = 4 + (B + 399) / 400;
        int got = netem_round_at(w, 1, netem_link_done(w, 0, 0, 1, 4, 5.0, (size_t)B));
        EXPECT(got == (want < 20 ? want : -1), "%d B at 400 B/round sent in round 4: used in round %d, not %d", B,
               got, want);
    }
    netem_free(w);
    Netem* fan = make(5, "swarm.rounds=20", "net.bandwidth=100", "net.fanout=2", NULL);
    for (int r = 0; r < 5; r++) {
        EXPECT(netem_link_busy(fan, 0, 0, r, 100) == 2.0, "fanout 2: two copies on the link, round %d", r);
        int k = 0;
        for (int d = 1; d < 5; d++)
            if (netem_targets(fan, 0, d, r)) {
                k++;
                EXPECT(netem_link_done(fan, 0, 0, d, r, 0.0, 100) == k, "fanout: peer %d is copy %d", d, k);
            }
    }
    netem_free(fan);
    Netem* none = make(4, "swarm.rounds=20", NULL);
    EXPECT(netem_link_done(none, 0, 0, 3, 0, 7.0, 1 << 20) == 7.0 && netem_link_busy(none, 0, 0, 0, 1 << 20) == 0.0,
           "net.bandwidth = 0 is unlimited");
    netem_free(none);
}

static void check_weight_groups(void) {
    /* NoLoCo over p2p: on the weights channel a node's peers are the other members of its
     * group of the outer step (weight_sync_group), every round of the step's H; the rollouts'
     * channel keeps its fan-out peers */
    Netem* ne = make(5, "swarm.rounds=12", "net.fanout=1", NULL);
    netem_set_weight_groups(ne, 2, 3);
    int members[5], ok = 1, rollouts_alike = 1;
    for (int r = 0; r < 12; r++)
        for (int s = 0; s < 5; s++) {
            int g = weight_sync_group(ne->seed, 5, 2, (r + 1) / 3 - 1, s, members), count = 0;
            for (int d = 0; d < 5; d++) {
                int in = 0;
                for (int i = 0; i < g; i++) in |= members[i] == d;
                int t = netem_targets_ch(ne, NETEM_CH_WEIGHTS, s, d, r);
                ok &= t == (in && d != s) && t == netem_targets_ch(ne, NETEM_CH_WEIGHTS, d, s, r);
                count += t;
                rollouts_alike &= netem_targets_ch(ne, NETEM_CH_ROLLOUTS, s, d, r) == netem_targets(ne, s, d, r);
            }
            ok &= count == g - 1;
        }
    EXPECT(ok, "the weights channel's peers are not the node's NoLoCo group");
    EXPECT(rollouts_alike, "the groups changed the rollouts' peers");
    netem_free(ne);
}

static void check_seed(void) {
    Netem* a = make(8, "swarm.rounds=100", "net.drop=0.5", "swarm.seed=1", NULL);
    Netem* b = make(8, "swarm.rounds=100", "net.drop=0.5", "swarm.seed=1", NULL);
    Netem* c = make(8, "swarm.rounds=100", "net.drop=0.5", "swarm.seed=2", NULL);
    int same_ab = 0, same_ac = 0, total = 0;
    for (int s = 0; s < 8; s++)
        for (int d = 0; d < 8; d++)
            for (int r = 0; r < 100; r++)
                if (s != d) {
                    total++;
                    same_ab += netem_dropped(a, s, d, r) == netem_dropped(b, s, d, r);
                    same_ac += netem_dropped(a, s, d, r) == netem_dropped(c, s, d, r);
                }
    EXPECT(same_ab == total, "the same seed gave %d different decisions", total - same_ab);
    EXPECT(same_ac < 0.6 * total, "another seed agreed on %d of %d decisions", same_ac, total);
    netem_free(a);
    netem_free(b);
    netem_free(c);
}

int main(void) {
    check_drop();
    check_fanout();
    check_latency();
    check_regions();
    check_offline();
    check_delivery();
    check_bandwidth();
    check_weight_groups();
    check_seed();
    return test_finish("netem");
}
