/* The outer optimiser of weight synchronisation (see weight_sync.h; docs/SYNC.md). */
#include "swarm/weight_sync.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"

WeightSync* weight_sync_create(const SyncSettings* set, const float* params, size_t n) {
    if (set->method == SYNC_NONE) return NULL;
    WeightSync* ws = callocCheck(1, sizeof *ws);
    ws->set = *set;
    ws->n = n;
    ws->phi = mallocCheck(sizeof(float) * (n ? n : 1));
    memcpy(ws->phi, params, sizeof(float) * n);
    ws->mom = callocCheck(n ? n : 1, sizeof(float));
    ws->buf = mallocCheck(sizeof(float) * (weight_sync_payload(set, n) ? weight_sync_payload(set, n) : 1));
    return ws;
}

void weight_sync_free(WeightSync* ws) {
    if (!ws) return;
    free(ws->phi);
    free(ws->mom);
    free(ws->buf);
    free(ws);
}

int weight_sync_due(const SyncSettings* set, int round) {
    return set->method != SYNC_NONE && (round + 1) % set->every == 0;
}

size_t weight_sync_payload(const SyncSettings* set, size_t n) {
    return set->method == SYNC_NOLOCO ? 2 * n : set->method == SYNC_DILOCO ? n : 0;
}

double weight_sync_memory_bytes(const SyncSettings* set, double n) {
    if (set->method == SYNC_NONE) return 0.0;
    /* phi, the momentum, and the contribution (averaged in place) */
    return 4.0 * (2.0 * n + (double)weight_sync_payload(set, 1) * n);
}

void weight_sync_contribution(WeightSync* ws, const float* theta) {
    for (size_t i = 0; i < ws->n; i++) ws->buf[i] = ws->phi[i] - theta[i];
    if (ws->set.method == SYNC_NOLOCO) memcpy(ws->buf + ws->n, ws->phi, sizeof(float) * ws->n);
}

void diloco_outer_update(float* phi, float* v, const float* D, size_t n, float eta, float mu) {
    for (size_t i = 0; i < n; i++) {
        v[i] = mu * v[i] + D[i];
        phi[i] = phi[i] - eta * (D[i] + mu * v[i]);
    }
}

void noloco_outer_update(float* phi, float* delta, const float* D, const float* P, size_t n, float beta, float alpha,
                         float gamma) {
    for (size_t i = 0; i < n; i++) {
        delta[i] = alpha * delta[i] - beta * D[i] - gamma * (phi[i] - P[i]);
        phi[i] = phi[i] + delta[i];
    }
}

void weight_sync_apply(WeightSync* ws, const float* mean, float* theta) {
    const SyncSettings* s = &ws->set;
    if (s->method == SYNC_DILOCO)
        diloco_outer_update(ws->phi, ws->mom, mean, ws->n, s->outer_lr, s->outer_momentum);
    else
        noloco_outer_update(ws->phi, ws->mom, mean, mean + ws->n, ws->n, s->outer_lr, s->outer_momentum, s->pull);
    memcpy(theta, ws->phi, sizeof(float) * ws->n);
    ws->steps++;
}

int weight_sync_save(const WeightSync* ws, FILE* f) {
    int64_t head[2] = {ws->steps, (int64_t)ws->n};
    return fwrite("SYNC", 1, 4, f) == 4 && fwrite(head, sizeof head, 1, f) == 1 &&
                   fwrite(ws->phi, sizeof(float), ws->n, f) == ws->n && fwrite(ws->mom, sizeof(float), ws->n, f) == ws->n
               ? 0
               : -1;
}

int weight_sync_load(WeightSync* ws, FILE* f) {
    char magic[4];
    int64_t head[2];
    if (fread(magic, 1, 4, f) != 4 || memcmp(magic, "SYNC", 4) || fread(head, sizeof head, 1, f) != 1 ||
        head[1] != (int64_t)ws->n || head[0] < 0)
        return -1;
    ws->steps = (long)head[0];
    return fread(ws->phi, sizeof(float), ws->n, f) == ws->n && fread(ws->mom, sizeof(float), ws->n, f) == ws->n ? 0
                                                                                                                  : -1;
}
