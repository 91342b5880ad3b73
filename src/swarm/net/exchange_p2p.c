/* Point-to-point transport with netem (see exchange_p2p.h). On the wire a message is an
 * 8-byte time (little-endian double) followed by the encoded SwarmMessage; the MPI tag is the
 * send round. The time is when the sender's link began the round's copies: the send time
 * (MPI_Wtime) with the wall clock, read only there; with net.bandwidth > 0 the later of that
 * and the end of the link's earlier copies, on the virtual clock too (netem_link_done). */
#include "swarm/net/exchange_p2p.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/clock.h"

#define TIME_PREFIX 8

typedef struct {
    int round;
    uint8_t* buf;       /* time prefix + message */
    size_t len;
    int n_req;
    MPI_Request* reqs;
    int* targets;
    int* delivery;      /* virtual clock: the round each target uses it in */
    int last_delivery;  /* the latest of those (wall clock: the send round) */
} SentMessage;

typedef struct {
    int sender, round;
    int taken;          /* the receiver's round that took it off the network */
    int use_round;      /* virtual clock with bandwidth: the round it is used in, -1 never */
    double due;         /* wall clock: when the emulated delay has passed */
    uint8_t* buf;
    size_t len;
} HeldMessage;

typedef struct {
    int sender, round;
} Due;

struct P2P {
    MPI_Comm comm;
    const Netem* ne;
    int rank, n;
    SentMessage* sent;
    int n_sent, cap_sent;
    /* virtual clock: what arrives in each round, precomputed from netem */
    Due** due;
    int* n_due;
    int* n_offline; /* messages arriving in each round while this node is offline (never sent) */
    int bandwidth;      /* net.bandwidth > 0: the virtual clock's due lists are netem's lower bounds */
    double own_link;    /* bandwidth: when this node's link has sent everything posted so far */
    double* link_free;  /* own_link, or the one of the channel this one shares its link with */
    int ch, every;      /* the netem channel; messages go out in rounds r with (r + 1) % every == 0 */
    /* wall clock, and the virtual clock's received messages that the bandwidth makes later */
    HeldMessage* held;
    int n_held, cap_held;
    long received;      /* messages this process has received (all sent in rounds >= first_round) */
    int first_round;    /* the first round this process runs: 0, or the checkpoint's on resume */
};

P2P* p2p_create(MPI_Comm comm, const Netem* ne, int rank) { return p2p_create_channel(comm, ne, rank, 0, 1, NULL); }

/* Whether the channel sends in round r. */
static int sends_in(const P2P* p, int r) { return (r + 1) % p->every == 0; }

P2P* p2p_create_channel(MPI_Comm comm, const Netem* ne, int rank, int ch, int every, P2P* link_of) {
    P2P* p = callocCheck(1, sizeof *p);
    p->ch = ch;
    p->every = every > 0 ? every : 1;
    p->link_free = link_of ? link_of->link_free : &p->own_link;
    p->comm = comm;
    p->ne = ne;
    p->rank = rank;
    mpiCheck(MPI_Comm_size(comm, &p->n));
    int* tag_ub = NULL;
    int flag = 0;
    mpiCheck(MPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &flag));
    if (flag && *tag_ub < ne->rounds) sapo_die("MPI_TAG_UB %d is below the %d rounds the p2p transport tags", *tag_ub, ne->rounds);
    p->bandwidth = ne->net.bandwidth > 0.0;
    int R = ne->rounds;
    p->due = callocCheck(R > 0 ? R : 1, sizeof(Due*));
    p->n_due = callocCheck(R > 0 ? R : 1, sizeof(int));
    p->n_offline = callocCheck(R > 0 ? R : 1, sizeof(int));
    int* cap = callocCheck(R > 0 ? R : 1, sizeof(int));
    for (int s = 0; s < p->n && !ne->net.wall_clock; s++) {
        if (s == rank) continue;
        for (int r = 0; r < R; r++) {
            if (!sends_in(p, r)) continue;
            int at = netem_arrival_round_ch(ne, ch, s, rank, r);
            if (at < 0) continue;
            /* with bandwidth `at` is a lower bound: the receiver takes the message off the
             * network then and learns from its time and size when it is used (p2p_receive) */
            if (!p->bandwidth && netem_offline(ne, rank, at)) {
                p->n_offline[at]++;
                continue;
            }
            if (p->n_due[at] == cap[at]) {
                cap[at] = cap[at] ? 2 * cap[at] : 4;
                p->due[at] = realloc(p->due[at], sizeof(Due) * cap[at]);
                if (!p->due[at]) sapo_die("out of memory scheduling messages");
            }
            p->due[at][p->n_due[at]++] = (Due){s, r};
        }
    }
    free(cap);
    return p;
}

static void sent_free(SentMessage* m) {
    free(m->buf);
    free(m->reqs);
    free(m->targets);
    free(m->delivery);
}

/* Frees sent messages whose sends completed and that no later round still needs. */
static void reap_sent(P2P* p, int current_round) {
    int keep = 0;
    for (int i = 0; i < p->n_sent; i++) {
        SentMessage* m = &p->sent[i];
        int done = 0;
        mpiCheck(MPI_Testall(m->n_req, m->reqs, &done, MPI_STATUSES_IGNORE));
        if (done && m->last_delivery < current_round) {
            sent_free(m);
        } else {
            p->sent[keep++] = *m;
        }
    }
    p->n_sent = keep;
}

static SentMessage* new_sent(P2P* p) {
    if (p->n_sent == p->cap_sent) {
        p->cap_sent = p->cap_sent ? 2 * p->cap_sent : 8;
        p->sent = realloc(p->sent, sizeof(SentMessage) * p->cap_sent);
        if (!p->sent) sapo_die("out of memory tracking sends");
    }
    SentMessage* m = &p->sent[p->n_sent++];
    memset(m, 0, sizeof *m);
    return m;
}

static void post(P2P* p, SentMessage* m) {
    m->reqs = mallocCheck(sizeof(MPI_Request) * (m->n_req > 0 ? m->n_req : 1));
    for (int i = 0; i < m->n_req; i++)
        mpiCheck(MPI_Isend(m->buf, (int)m->len, MPI_BYTE, m->targets[i], m->round, p->comm, &m->reqs[i]));
}

P2PSendStats p2p_send(P2P* p, int round, const uint8_t* buf, size_t len) {
    P2PSendStats st = {0};
    reap_sent(p, round);
    if (netem_offline(p->ne, p->rank, round)) return st;
    SentMessage* m = new_sent(p);
    m->round = round;
    m->len = len + TIME_PREFIX;
    m->buf = mallocCheck(m->len);
    double now = MPI_Wtime();
    if (p->bandwidth) { /* the link starts this round's copies once it has sent the earlier ones */
        double t = p->ne->net.wall_clock ? now : (round + 1) * p->ne->slowdown[p->rank];
        now = t > *p->link_free ? t : *p->link_free;
        *p->link_free = now + netem_link_busy(p->ne, p->ch, p->rank, round, len);
    }
    memcpy(m->buf, &now, TIME_PREFIX);
    memcpy(m->buf + TIME_PREFIX, buf, len);
    m->targets = mallocCheck(sizeof(int) * p->n);
    m->delivery = mallocCheck(sizeof(int) * p->n);
    m->last_delivery = round;
    for (int d = 0; d < p->n; d++) {
        if (d == p->rank || !netem_targets_ch(p->ne, p->ch, p->rank, d, round)) continue;
        int at = p->ne->net.wall_clock ? (netem_sends_ch(p->ne, p->ch, p->rank, d, round) ? round : -1)
                 : p->bandwidth        ? netem_arrival_round_ch(p->ne, p->ch, p->rank, d, round)
                                       : netem_delivery_round_ch(p->ne, p->ch, p->rank, d, round);
        if (at < 0) {
            st.dropped++;
            continue;
        }
        m->targets[m->n_req] = d;
        m->delivery[m->n_req] = at;
        if (at > m->last_delivery) m->last_delivery = at;
        m->n_req++;
    }
    post(p, m);
    st.sent = m->n_req;
    st.bytes_sent = (double)m->n_req * (double)len; /* the encoded message, as bytes_received counts it */
    return st;
}

/* Appends one received message (its bytes without the time prefix) to the inbox; age_from
 * >= 0 (wall clock) is the receiver round its age counts from (Inbox.age_from). */
static void inbox_push(Inbox* in, int sender, uint8_t* buf, size_t len, int age_from, int* cap) {
    if (in->n == *cap) {
        *cap = *cap ? 2 * *cap : 8;
        in->senders = realloc(in->senders, sizeof(int) * *cap);
        in->bufs = realloc(in->bufs, sizeof(uint8_t*) * *cap);
        in->lens = realloc(in->lens, sizeof(size_t) * *cap);
        if (age_from >= 0) in->age_from = realloc(in->age_from, sizeof(int) * *cap);
        if (!in->senders || !in->bufs || !in->lens || (age_from >= 0 && !in->age_from))
            sapo_die("out of memory receiving messages");
    }
    if (age_from >= 0) in->age_from[in->n] = age_from;
    in->senders[in->n] = sender;
    in->bufs[in->n] = buf;
    in->lens[in->n] = len;
    in->n++;
}

/* Receives one message from (source, tag) into a new buffer; returns its length. */
static uint8_t* receive_one(P2P* p, int source, int tag, size_t* len, int* got_source, int* got_tag) {
    MPI_Status st;
    mpiCheck(MPI_Probe(source, tag, p->comm, &st));
    int count = 0;
    mpiCheck(MPI_Get_count(&st, MPI_BYTE, &count));
    uint8_t* buf = mallocCheck(count > 0 ? (size_t)count : 1);
    mpiCheck(MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, p->comm, MPI_STATUS_IGNORE));
    *len = (size_t)count;
    if (got_source) *got_source = st.MPI_SOURCE;
    if (got_tag) *got_tag = st.MPI_TAG;
    return buf;
}

/* Drops the time prefix in place (the inbox owns one allocation per message here). */
static void strip_prefix(uint8_t** buf, size_t* len) {
    if (*len >= TIME_PREFIX) {
        memmove(*buf, *buf + TIME_PREFIX, *len - TIME_PREFIX);
        *len -= TIME_PREFIX;
    } else {
        *len = 0; /* too short to carry a message: the decoder rejects it */
    }
}

static void hold(P2P* p, HeldMessage h) {
    if (p->n_held == p->cap_held) {
        p->cap_held = p->cap_held ? 2 * p->cap_held : 8;
        p->held = realloc(p->held, sizeof(HeldMessage) * p->cap_held);
        if (!p->held) sapo_die("out of memory holding messages");
    }
    p->held[p->n_held++] = h;
}

/* The time the message (sender, send round) of `len` encoded bytes arrives here: when its
 * copy to this node has left the sender's link (the wire's time, the round's start on the
 * link) plus netem's delay. */
static double arrival_time(const P2P* p, int sender, int round, double start, size_t len) {
    return netem_link_done(p->ne, p->ch, sender, p->rank, round, start, len) +
           netem_delay_ch(p->ne, p->ch, sender, p->rank, round);
}

/* Virtual clock with bandwidth: what was held for `round` goes to the inbox (or, offline, is
 * discarded and counted); what is used later stays held; what is never used is freed. */
static void release_held_virtual(P2P* p, int round, Inbox* inbox, int* late, int* offline_lost, int* cap) {
    int keep = 0, offline = netem_offline(p->ne, p->rank, round);
    for (int i = 0; i < p->n_held; i++) {
        HeldMessage* h = &p->held[i];
        if (h->use_round > round) {
            p->held[keep++] = *h;
        } else if (h->use_round < round || offline) {
            free(h->buf); /* after the last round, or reaching an offline node */
            *offline_lost += h->use_round == round;
        } else {
            inbox_push(inbox, h->sender, h->buf, h->len, -1, cap);
            *late += h->round < round;
        }
    }
    p->n_held = keep;
}

void p2p_receive(P2P* p, int round, Inbox* inbox, int* late, int* offline_lost) {
    memset(inbox, 0, sizeof *inbox);
    inbox->owns_buffers = 1;
    *late = 0;
    *offline_lost = !p->ne->net.wall_clock && round < p->ne->rounds ? p->n_offline[round] : 0;
    int cap = 0;
    double t0 = clock_now();
    if (!p->ne->net.wall_clock) {
        for (int i = 0; round < p->ne->rounds && i < p->n_due[round]; i++) {
            Due d = p->due[round][i];
            size_t len;
            uint8_t* buf = receive_one(p, d.sender, d.round, &len, NULL, NULL);
            double start = 0.0;
            if (len >= TIME_PREFIX) memcpy(&start, buf, TIME_PREFIX);
            strip_prefix(&buf, &len);
            if (p->bandwidth) {
                int use = netem_round_at(p->ne, p->rank, arrival_time(p, d.sender, d.round, start, len));
                hold(p, (HeldMessage){d.sender, d.round, round, use, 0.0, buf, len});
                continue;
            }
            inbox_push(inbox, d.sender, buf, len, -1, &cap);
            *late += d.round < round;
        }
        if (p->bandwidth) release_held_virtual(p, round, inbox, late, offline_lost, &cap);
        inbox->t_wait = clock_now() - t0;
        return;
    }
    /* wall clock: take what has arrived, hold it until its emulated delay has passed */
    for (;;) {
        int flag = 0;
        MPI_Status st;
        mpiCheck(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, p->comm, &flag, &st));
        if (!flag) break;
        size_t len;
        int src, tag;
        uint8_t* buf = receive_one(p, st.MPI_SOURCE, st.MPI_TAG, &len, &src, &tag);
        p->received++;
        double sent_at = 0.0;
        if (len >= TIME_PREFIX) memcpy(&sent_at, buf, TIME_PREFIX);
        strip_prefix(&buf, &len);
        hold(p, (HeldMessage){src, tag, round, -1, arrival_time(p, src, tag, sent_at, len), buf, len});
    }
    double now = MPI_Wtime();
    int offline = netem_offline(p->ne, p->rank, round), keep = 0;
    for (int i = 0; i < p->n_held; i++) {
        HeldMessage* h = &p->held[i];
        if (h->due > now) {
            p->held[keep++] = *h;
        } else if (offline) {
            free(h->buf); /* an offline node receives nothing */
            ++*offline_lost;
        } else {
            inbox_push(inbox, h->sender, h->buf, h->len, h->taken, &cap);
            *late += h->round < round;
        }
    }
    p->n_held = keep;
    inbox->t_wait = 0.0; /* the wall clock never waits for a peer */
}

/* Wall clock: the messages addressed to this node in rounds [first_round, end_round). The
 * processes of a resumed run sent none before first_round (and received none of those). */
static long wall_expected(const P2P* p, int end_round) {
    long n = 0;
    for (int s = 0; s < p->n; s++)
        for (int r = p->first_round; r < end_round && s != p->rank; r++)
            n += sends_in(p, r) && netem_sends_ch(p->ne, p->ch, s, p->rank, r);
    return n;
}

void p2p_drain(P2P* p, int end_round) {
    if (p->ne->net.wall_clock) {
        for (long expected = wall_expected(p, end_round); p->received < expected; p->received++) {
            size_t len;
            free(receive_one(p, MPI_ANY_SOURCE, MPI_ANY_TAG, &len, NULL, NULL));
        }
    } else {
        /* virtual clock: what was sent before end_round but is due at or after it (none when
         * the run went to its last round: netem schedules nothing beyond it) */
        for (int at = end_round; at < p->ne->rounds; at++)
            for (int i = 0; i < p->n_due[at]; i++) {
                Due d = p->due[at][i];
                size_t len;
                if (d.round < end_round) free(receive_one(p, d.sender, d.round, &len, NULL, NULL));
            }
    }
    for (int i = 0; i < p->n_sent; i++) mpiCheck(MPI_Waitall(p->sent[i].n_req, p->sent[i].reqs, MPI_STATUSES_IGNORE));
}

void p2p_free(P2P* p) {
    if (!p) return;
    for (int i = 0; i < p->n_sent; i++) sent_free(&p->sent[i]);
    free(p->sent);
    for (int i = 0; i < p->n_held; i++) free(p->held[i].buf);
    free(p->held);
    for (int r = 0; r < p->ne->rounds; r++) free(p->due[r]);
    free(p->due);
    free(p->n_due);
    free(p->n_offline);
    free(p);
}

int p2p_save_in_flight(P2P* p, int round, FILE* f) {
    int count = 0;
    for (int i = 0; i < p->n_sent; i++) {
        const SentMessage* m = &p->sent[i];
        if (m->round >= round) continue;
        for (int k = 0; k < m->n_req; k++) count += m->delivery[k] >= round ? 1 : 0;
    }
    if (fwrite(&count, sizeof count, 1, f) != 1) return -1;
    for (int i = 0; i < p->n_sent; i++) {
        const SentMessage* m = &p->sent[i];
        if (m->round >= round) continue;
        for (int k = 0; k < m->n_req; k++) {
            if (m->delivery[k] < round) continue;
            int32_t head[3] = {m->round, m->targets[k], m->delivery[k]};
            uint64_t len = m->len;
            if (fwrite(head, sizeof head, 1, f) != 1 || fwrite(&len, sizeof len, 1, f) != 1 ||
                fwrite(m->buf, 1, m->len, f) != m->len)
                return -1;
        }
    }
    if (!p->bandwidth) return 0;
    /* bandwidth: the link's state and the virtual clock's received messages still held */
    int held = p->ne->net.wall_clock ? 0 : p->n_held;
    if (fwrite(p->link_free, sizeof *p->link_free, 1, f) != 1 || fwrite(&held, sizeof held, 1, f) != 1) return -1;
    for (int i = 0; i < held; i++) {
        const HeldMessage* h = &p->held[i];
        int32_t head[3] = {h->sender, h->round, h->use_round};
        uint64_t len = h->len;
        if (fwrite(head, sizeof head, 1, f) != 1 || fwrite(&len, sizeof len, 1, f) != 1 ||
            fwrite(h->buf, 1, h->len, f) != h->len)
            return -1;
    }
    return 0;
}

int p2p_load_in_flight(P2P* p, int round, FILE* f) {
    p->first_round = round;
    int count = 0;
    if (fread(&count, sizeof count, 1, f) != 1 || count < 0) return -1;
    for (int i = 0; i < count; i++) {
        int32_t head[3];
        uint64_t len;
        if (fread(head, sizeof head, 1, f) != 1 || fread(&len, sizeof len, 1, f) != 1 || len > (1u << 30)) return -1;
        SentMessage* m = new_sent(p);
        m->round = head[0];
        m->len = (size_t)len;
        m->buf = mallocCheck(m->len ? m->len : 1);
        if (fread(m->buf, 1, m->len, f) != m->len) return -1;
        m->n_req = 1;
        m->targets = mallocCheck(sizeof(int));
        m->delivery = mallocCheck(sizeof(int));
        m->targets[0] = head[1];
        m->delivery[0] = head[2];
        m->last_delivery = head[2];
        post(p, m);
    }
    if (!p->bandwidth) return 0;
    int held = 0;
    if (fread(p->link_free, sizeof *p->link_free, 1, f) != 1 || fread(&held, sizeof held, 1, f) != 1 || held < 0)
        return -1;
    if (p->ne->net.wall_clock) *p->link_free = 0.0; /* another process's MPI_Wtime */
    for (int i = 0; i < held; i++) {
        int32_t head[3];
        uint64_t len;
        if (fread(head, sizeof head, 1, f) != 1 || fread(&len, sizeof len, 1, f) != 1 || len > (1u << 30)) return -1;
        uint8_t* buf = mallocCheck(len ? (size_t)len : 1);
        if (fread(buf, 1, (size_t)len, f) != len) {
            free(buf);
            return -1;
        }
        hold(p, (HeldMessage){head[0], head[1], round, head[2], 0.0, buf, (size_t)len});
    }
    return 0;
}
