/* The outer step of weight synchronisation (src/swarm/weight_sync.c) with nodes on the CUDA
 * backend, as round_sync (src/swarm/node.c) takes it: the weights come to the host
 * (download), the outer step runs there, they go back (upload). Two "nodes" from one initial
 * model whose inner phases moved them apart take a DiLoCo step with eta 1, mu 0 (weight averaging) and then a Nesterov step: on
 * the GPU backend the outer weights equal, bit for bit, those of the same steps on the CPU
 * backend (the arithmetic is the host's either way); after the upload the device computes
 * with them (log-probs of a batch within 1e-4 of the CPU's with the same weights), both nodes
 * hold the same weights, and the Adam moments survived the round trip unchanged.
 * Built twice: as gpu/test_gpu_weight_sync against the real backend (exit 77, skipped,
 * without a GPU), and as unit/test_gpu_weight_sync_emu against the CPU emulation (kernels/emu). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rng.h"
#include "model/model.h"
#include "swarm/weight_sync.h"
#include "../test_assert.h"

#include "gpu_backend.h"

enum { B = 2, T = 24 };

/* Node k: the swarm's initial weights (DiLoCo's one outer copy), Adam moments of its own. */
static Model* node_model(const ModelShape* cfg, const ModelBackend* be, int k) {
    Model* m = model_create(cfg, be, B, 7);
    for (size_t i = 0; i < m->num_params; i++) {
        m->m_memory[i] = 1e-3f * (float)k;
        m->v_memory[i] = 1e-6f * (float)(k + 1);
    }
    m->backend->upload(m);
    return m;
}

/* round_sync's path for two nodes: download both, contributions, their mean, the step, upload. */
static void outer_step(Model* m[2], WeightSync* ws[2]) {
    size_t n = m[0]->num_params;
    float* mean = malloc(sizeof(float) * n);
    for (int k = 0; k < 2; k++) {
        m[k]->backend->download(m[k]);
        weight_sync_contribution(ws[k], m[k]->params_memory);
    }
    for (size_t i = 0; i < n; i++) mean[i] = (ws[0]->buf[i] + ws[1]->buf[i]) / 2.0f;
    for (int k = 0; k < 2; k++) {
        weight_sync_apply(ws[k], mean, m[k]->params_memory);
        m[k]->backend->upload(m[k]);
    }
    free(mean);
}

int main(void) {
    const ModelBackend* be = gpu_backend_of(0);
    if (!be || !model_backend_runs(be)) {
        printf("SKIP: no CUDA backend or no GPU\n");
        return 77;
    }
    ModelShape cfg = {.n_layer = 1, .n_head = 2, .d_model = 32, .n_ctx = 32, .vocab = GPT_VOCAB};
    const ModelBackend* cpu_be = model_backend_find("cpu");
    Model *g[2], *c[2];
    WeightSync *wg[2], *wc[2];
    SyncSettings avg = {.method = SYNC_DILOCO, .every = 1, .outer_lr = 1.0f, .outer_momentum = 0.0f};
    for (int k = 0; k < 2; k++) {
        g[k] = node_model(&cfg, be, k);
        c[k] = node_model(&cfg, cpu_be, k);
        wg[k] = weight_sync_create(&avg, g[k]->params_memory, g[k]->num_params);
        wc[k] = weight_sync_create(&avg, c[k]->params_memory, c[k]->num_params);
    }
    size_t n = g[0]->num_params;
    /* an inner phase: each node's weights move by its own amount (on the host, then uploaded) */
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < n; i++) {
            float d = 0.01f * (float)(k + 1) * sinf((float)i);
            g[k]->params_memory[i] += d;
            c[k]->params_memory[i] += d;
        }
    for (int k = 0; k < 2; k++) g[k]->backend->upload(g[k]);
    outer_step(g, wg);
    outer_step(c, wc);
    /* then a Nesterov step with momentum */
    for (int k = 0; k < 2; k++) wg[k]->set.outer_lr = wc[k]->set.outer_lr = 0.7f;
    for (int k = 0; k < 2; k++) wg[k]->set.outer_momentum = wc[k]->set.outer_momentum = 0.9f;
    outer_step(g, wg);
    outer_step(c, wc);

    for (int k = 0; k < 2; k++) {
        g[k]->backend->download(g[k]);
        EXPECT(!memcmp(g[k]->params_memory, c[k]->params_memory, sizeof(float) * n),
               "node %d: the GPU node's outer weights differ from the CPU node's", k);
        EXPECT(!memcmp(wg[k]->phi, wc[k]->phi, sizeof(float) * n), "node %d: phi differs", k);
        int moments = 1;
        for (size_t i = 0; i < n; i++)
            moments &= g[k]->m_memory[i] == 1e-3f * (float)k && g[k]->v_memory[i] == 1e-6f * (float)(k + 1);
        EXPECT(moments, "node %d: the Adam moments changed in the round trip", k);
    }
    EXPECT(!memcmp(g[0]->params_memory, g[1]->params_memory, sizeof(float) * n),
           "the two nodes differ after averaging the same pseudo-gradients");
    EXPECT(model_weights_digest(g[0]) == model_weights_digest(c[0]), "weights_digest differs between backends");

    /* the device computes with the uploaded weights */
    int inputs[B * T], targets[B * T];
    RngStream r = rng_stream(5, 0, 0, RNG_TEST);
    for (int i = 0; i < B * T; i++) inputs[i] = i % T == 0 ? TOK_BOS : (int)rng_below(&r, 256);
    for (int i = 0; i < B * T; i++) targets[i] = i % T == T - 1 ? TOK_EOS : inputs[i + 1];
    float lg[B * T], lc[B * T];
    model_forward(g[0], inputs, targets, B, T, lg);
    model_forward(c[0], inputs, targets, B, T, lc);
    double worst = 0.0;
    for (int i = 0; i < B * T; i++) worst = fmax(worst, fabs((double)lg[i] - lc[i]));
    printf("log-probs with the synced weights: max |gpu - cpu| = %.3g\n", worst);
    EXPECT(worst < 1e-4, "the device does not compute with the synced weights: %g", worst);
    for (int k = 0; k < 2; k++) {
        weight_sync_free(wg[k]);
        weight_sync_free(wc[k]);
        model_free(g[k]);
        model_free(c[k]);
    }
    return test_finish("gpu weight sync (" BACKEND_LABEL ")");
}
