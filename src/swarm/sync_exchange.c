/* The outer step's mean over MPI_Allreduce (see sync_exchange.h). */
#include "swarm/sync_exchange.h"

#include <math.h>
#include <stdlib.h>

#include "core/check.h"
#include "swarm/node_fault.h"
#include "swarm/net/weight_groups.h"
#include "swarm/net/weight_message.h"

void sync_step_allreduce(WeightSync* ws, MPI_Comm comm, uint64_t seed, int rank, int n_nodes, float* theta,
                         SyncStats* st) {
    size_t count = weight_sync_payload(&ws->set, ws->n);
    if (count > (size_t)0x7fffffff) sapo_die("weight sync: %zu floats exceed one MPI_Allreduce", count);
    weight_sync_contribution(ws, theta);
    MPI_Comm group = comm;
    int k = n_nodes;
    if (ws->set.method == SYNC_NOLOCO) { /* the node's group of this step: the same draw on every node */
        int* members = mallocCheck(sizeof(int) * n_nodes);
        k = weight_sync_group(seed, n_nodes, ws->set.group, ws->steps, rank, members);
        mpiCheck(MPI_Comm_split(comm, members[0], rank, &group));
        free(members);
    }
    mpiCheck(MPI_Allreduce(MPI_IN_PLACE, ws->buf, (int)count, MPI_FLOAT, MPI_SUM, group));
    if (group != comm) mpiCheck(MPI_Comm_free(&group));
    for (size_t i = 0; i < count; i++) ws->buf[i] = ws->buf[i] / (float)k;
    weight_sync_apply(ws, ws->buf, theta);
    *st = (SyncStats){.peers = k - 1, .age = 0.0, .bytes_sent = 4.0 * (double)count * (k - 1),
                      .bytes_received = 4.0 * (double)count * (k - 1)};
}

/* ---- over p2p: weight messages through netem's weights channel ---- */

struct SyncP2P {
    MPI_Comm comm; /* a duplicate: its tags never meet the rollouts' */
    P2P* p2p;
    int n;
    uint8_t** pending; /* per sender: its freshest verified weight message not yet used, or NULL */
    size_t* pending_len;
};

SyncP2P* sync_p2p_create(MPI_Comm comm, const Netem* ne, int rank, const SyncSettings* set, P2P* link_of) {
    SyncP2P* sp = callocCheck(1, sizeof *sp);
    mpiCheck(MPI_Comm_dup(comm, &sp->comm));
    mpiCheck(MPI_Comm_size(comm, &sp->n));
    sp->p2p = p2p_create_channel(sp->comm, ne, rank, NETEM_CH_WEIGHTS, set->every, link_of);
    sp->pending = callocCheck(sp->n, sizeof(uint8_t*));
    sp->pending_len = callocCheck(sp->n, sizeof(size_t));
    return sp;
}

void sync_p2p_free(SyncP2P* sp) {
    if (!sp) return;
    p2p_free(sp->p2p);
    for (int k = 0; k < sp->n; k++) free(sp->pending[k]);
    free(sp->pending);
    free(sp->pending_len);
    mpiCheck(MPI_Comm_free(&sp->comm));
    free(sp);
}

void sync_p2p_finish(SyncP2P* sp, int end_round) { p2p_drain(sp->p2p, end_round); }

/* Keeps buf (owned) as sender's pending contribution when it decodes for this node, replacing
 * an older one; else frees it and counts it rejected. */
static void keep_pending(SyncP2P* sp, const WeightSync* ws, int sender, uint8_t* buf, size_t len, SyncStats* st) {
    char err[256];
    WeightMessage m;
    size_t count = weight_sync_payload(&ws->set, ws->n);
    if (weight_message_decode(buf, len, (int)ws->set.method, ws->n, count, &m, err, sizeof err) || m.sender != sender) {
        free(buf);
        st->rejected++;
        return;
    }
    free(sp->pending[sender]); /* the freshest wins: messages arrive in send order per sender */
    sp->pending[sender] = buf;
    sp->pending_len[sender] = len;
}

void sync_step_p2p(SyncP2P* sp, WeightSync* ws, uint64_t seed, int fault, int rank, int n_nodes, int round,
                   float* theta, SyncStats* st) {
    *st = (SyncStats){.age = NAN};
    int step = weight_sync_due(&ws->set, round);
    size_t count = weight_sync_payload(&ws->set, ws->n);
    if (step) {
        weight_sync_contribution(ws, theta);
        size_t len;
        uint8_t* msg = weight_message_encode(rank, round, ws->steps, (int)ws->set.method, ws->n, ws->buf, count, &len);
        node_fault_corrupt_bytes((NodeFault)fault, seed, rank, round, msg, &len);
        P2PSendStats ss = p2p_send(sp->p2p, round, msg, len);
        free(msg);
        st->dropped = ss.dropped;
        st->bytes_sent = ss.bytes_sent;
    }
    Inbox in;
    int late = 0;
    p2p_receive(sp->p2p, round, &in, &late, &st->offline);
    for (int i = 0; i < in.n; i++) {
        st->bytes_received += (double)in.lens[i];
        keep_pending(sp, ws, in.senders[i], in.bufs[i], in.lens[i], st);
        in.bufs[i] = NULL; /* kept or freed */
    }
    inbox_free(&in);
    if (!step) return;
    /* the mean of the node's own contribution and those that arrived (NoLoCo: its group's),
     * summed in ascending node order */
    int* members = mallocCheck(sizeof(int) * n_nodes);
    int g = n_nodes;
    if (ws->set.method == SYNC_NOLOCO) g = weight_sync_group(seed, n_nodes, ws->set.group, ws->steps, rank, members);
    else
        for (int k = 0; k < n_nodes; k++) members[k] = k;
    WeightMessage* used = mallocCheck(sizeof(WeightMessage) * n_nodes);
    int* is_used = callocCheck(n_nodes, sizeof(int));
    int k_used = 1;
    double age = 0.0;
    char err[64];
    for (int j = 0; j < g; j++) {
        int s = members[j];
        if (s == rank || !sp->pending[s]) continue;
        weight_message_decode(sp->pending[s], sp->pending_len[s], (int)ws->set.method, ws->n, count, &used[s], err,
                              sizeof err); /* verified when it was kept */
        is_used[s] = 1;
        k_used++;
        if (round - used[s].round > age) age = round - used[s].round;
    }
    float* mean = mallocCheck(sizeof(float) * (count ? count : 1));
    for (size_t i = 0; i < count; i++) {
        float sum = 0.0f;
        for (int s = 0; s < n_nodes; s++) {
            if (s == rank) sum += ws->buf[i];
            else if (is_used[s]) sum += weight_message_value(&used[s], i);
        }
        mean[i] = sum / (float)k_used;
    }
    weight_sync_apply(ws, mean, theta);
    free(mean);
    for (int s = 0; s < n_nodes; s++) { /* a contribution serves one outer step; the others' are stale now */
        free(sp->pending[s]);
        sp->pending[s] = NULL;
    }
    free(used);
    free(is_used);
    free(members);
    st->peers = k_used - 1;
    st->age = age;
}

int sync_p2p_save(SyncP2P* sp, int round, FILE* f) {
    if (p2p_save_in_flight(sp->p2p, round, f)) return -1;
    int count = 0;
    for (int s = 0; s < sp->n; s++) count += sp->pending[s] != NULL;
    if (fwrite(&count, sizeof count, 1, f) != 1) return -1;
    for (int s = 0; s < sp->n; s++) {
        if (!sp->pending[s]) continue;
        int32_t who = s;
        uint64_t len = sp->pending_len[s];
        if (fwrite(&who, sizeof who, 1, f) != 1 || fwrite(&len, sizeof len, 1, f) != 1 ||
            fwrite(sp->pending[s], 1, sp->pending_len[s], f) != sp->pending_len[s])
            return -1;
    }
    return 0;
}

int sync_p2p_load(SyncP2P* sp, int round, FILE* f) {
    if (p2p_load_in_flight(sp->p2p, round, f)) return -1;
    int count = 0;
    if (fread(&count, sizeof count, 1, f) != 1 || count < 0 || count > sp->n) return -1;
    for (int i = 0; i < count; i++) {
        int32_t who;
        uint64_t len;
        if (fread(&who, sizeof who, 1, f) != 1 || fread(&len, sizeof len, 1, f) != 1 || who < 0 || who >= sp->n ||
            len > (1ull << 40))
            return -1;
        uint8_t* buf = mallocCheck(len ? (size_t)len : 1);
        if (fread(buf, 1, (size_t)len, f) != len) {
            free(buf);
            return -1;
        }
        free(sp->pending[who]);
        sp->pending[who] = buf;
        sp->pending_len[who] = (size_t)len;
    }
    return 0;
}
