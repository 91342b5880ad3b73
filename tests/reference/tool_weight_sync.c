/* Drives the outer optimiser (src/swarm/weight_sync.c) for test_weight_sync_vs_numpy.py, K
 * nodes in one process, with no MPI: the mean of a group's contributions is their sum in
 * ascending node order over the group's size, as the numpy reference computes it.
 *   tool_weight_sync METHOD K N STEPS GROUP ETA MU GAMMA SEED IN OUT
 * IN: float32 (STEPS + 1, K, N): each node's initial weights, then per outer step what its
 * inner phase adds to its weights. OUT: int32 (STEPS, K, K + 1): per step and node its
 * group's size and members (ascending, -1 padded), then float32 (STEPS, K, N) the outer
 * weights phi after each step and float32 (STEPS, K, N) the outer momentum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "swarm/net/weight_groups.h"
#include "swarm/weight_sync.h"

static void* read_all(const char* path, size_t bytes) {
    FILE* f = fopen(path, "rb");
    void* p = malloc(bytes);
    if (!f || !p || fread(p, 1, bytes, f) != bytes) {
        fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, path);
        exit(1);
    }
    fclose(f);
    return p;
}

int main(int argc, char** argv) {
    if (argc != 12) {
        fprintf(stderr, "usage: tool_weight_sync diloco|noloco K N STEPS GROUP ETA MU GAMMA SEED IN OUT\n");
        return 2;
    }
    SyncSettings set = {.method = strcmp(argv[1], "noloco") ? SYNC_DILOCO : SYNC_NOLOCO,
                        .every = 1,
                        .group = atoi(argv[5]),
                        .outer_lr = strtof(argv[6], NULL),
                        .outer_momentum = strtof(argv[7], NULL),
                        .pull = strtof(argv[8], NULL)};
    int K = atoi(argv[2]), steps = atoi(argv[4]);
    size_t n = (size_t)atol(argv[3]);
    uint64_t seed = strtoull(argv[9], NULL, 10);
    float* in = read_all(argv[10], sizeof(float) * (size_t)(steps + 1) * K * n);
    FILE* out = fopen(argv[11], "wb");
    if (!out) return 1;
    size_t payload = weight_sync_payload(&set, n);
    WeightSync** ws = malloc(sizeof(WeightSync*) * K);
    float** theta = malloc(sizeof(float*) * K);
    float** contrib = malloc(sizeof(float*) * K);
    for (int k = 0; k < K; k++) {
        ws[k] = weight_sync_create(&set, in + (size_t)k * n, n);
        theta[k] = malloc(sizeof(float) * n);
        contrib[k] = malloc(sizeof(float) * payload);
    }
    float* mean = malloc(sizeof(float) * payload);
    int* members = malloc(sizeof(int) * K);
    int32_t* groups = malloc(sizeof(int32_t) * (size_t)steps * K * (K + 1));
    float* phis = malloc(sizeof(float) * (size_t)steps * K * n);
    float* moms = malloc(sizeof(float) * (size_t)steps * K * n);
    for (int s = 0; s < steps; s++) {
        for (int k = 0; k < K; k++) { /* the inner phase: theta = phi + what it adds */
            const float* add = in + ((size_t)(s + 1) * K + k) * n;
            for (size_t i = 0; i < n; i++) theta[k][i] = ws[k]->phi[i] + add[i];
            weight_sync_contribution(ws[k], theta[k]);
            memcpy(contrib[k], ws[k]->buf, sizeof(float) * payload);
        }
        for (int k = 0; k < K; k++) {
            int g = set.method == SYNC_NOLOCO ? weight_sync_group(seed, K, set.group, (long)s, k, members) : K;
            if (set.method != SYNC_NOLOCO)
                for (int j = 0; j < K; j++) members[j] = j;
            int32_t* row = groups + ((size_t)s * K + k) * (K + 1);
            row[0] = g;
            for (int j = 0; j < K; j++) row[1 + j] = j < g ? members[j] : -1;
            for (size_t i = 0; i < payload; i++) {
                float sum = 0.0f;
                for (int j = 0; j < g; j++) sum += contrib[members[j]][i];
                mean[i] = sum / (float)g;
            }
            weight_sync_apply(ws[k], mean, theta[k]);
            memcpy(phis + ((size_t)s * K + k) * n, ws[k]->phi, sizeof(float) * n);
            memcpy(moms + ((size_t)s * K + k) * n, ws[k]->mom, sizeof(float) * n);
            if (memcmp(theta[k], ws[k]->phi, sizeof(float) * n)) {
                fprintf(stderr, "node %d: the weights are not the new outer weights after the step\n", k);
                return 1;
            }
        }
    }
    int ok = fwrite(groups, sizeof(int32_t), (size_t)steps * K * (K + 1), out) == (size_t)steps * K * (K + 1) &&
             fwrite(phis, sizeof(float), (size_t)steps * K * n, out) == (size_t)steps * K * n &&
             fwrite(moms, sizeof(float), (size_t)steps * K * n, out) == (size_t)steps * K * n;
    fclose(out);
    return ok ? 0 : 1;
}
