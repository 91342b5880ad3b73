/* Finite-difference gradient check of the CPU model on a tiny config: for sampled entries
 * of every parameter tensor, the central difference of L = sum_t w_t * logp_t must match
 * the backward pass (per entry within tolerance, and per tensor by cosine similarity). Once
 * with the default numerics (OpenBLAS), once in the deterministic mode (det_gemm and
 * det_attention.h, a backward of its own). */
#include <math.h>
#include <stdlib.h>

#include "core/rng.h"
#include "model/model.h"
#include "../test_assert.h"

enum { B = 2, T = 7, SAMPLES = 12 };

static double loss_of(Model* m, const int* in, const int* tg, const float* w, float* lp) {
    model_forward(m, in, tg, B, T, lp);
    double L = 0.0;
    for (int i = 0; i < B * T; i++) L += (double)w[i] * lp[i];
    return L;
}

static void gradcheck(int det) {
    printf("-- %s numerics\n", det ? "deterministic" : "default");
    ModelShape cfg = {.n_layer = 2, .n_head = 2, .d_model = 8, .n_ctx = 8, .vocab = GPT_VOCAB, .deterministic = det};
    Model* m = model_create(&cfg, model_backend_find("cpu"), B, 5);
    RngStream rng = rng_stream(11, 0, 0, RNG_TEST);
    /* Larger weights than the GPT-2 init so every path carries a visible gradient. */
    for (size_t i = 0; i < m->num_params; i++) m->params_memory[i] += 0.3f * rng_normal(&rng);
    int in[B * T], tg[B * T];
    float w[B * T], lp[B * T];
    for (int i = 0; i < B * T; i++) {
        in[i] = (int)rng_below(&rng, 258);
        tg[i] = (int)rng_below(&rng, 258);
        w[i] = rng_normal(&rng);
    }
    tg[B * T - 1] = TOK_PAD; /* a padded target contributes nothing */

    model_zero_grad(m);
    loss_of(m, in, tg, w, lp);
    model_backward(m, w);

    const float h = 2e-3f;
    float* p = m->params_memory;
    float* g = m->grads_memory;
    size_t offset = 0;
    for (int t = 0; t < GPT_NUM_TENSORS; t++) {
        size_t n = m->tensor_sizes[t];
        double dot = 0, nfd = 0, nan_ = 0, worst = 0;
        for (int s = 0; s < SAMPLES; s++) {
            size_t i = offset + (size_t)rng_below(&rng, n);
            float keep = p[i];
            p[i] = keep + h;
            double up = loss_of(m, in, tg, w, lp);
            p[i] = keep - h;
            double down = loss_of(m, in, tg, w, lp);
            p[i] = keep;
            double fd = (up - down) / (2.0 * h), an = g[i];
            double err = fabs(fd - an) / (2e-3 + 2e-2 * fmax(fabs(fd), fabs(an)));
            worst = fmax(worst, err);
            EXPECT(err <= 1.0, "%s[%zu]: finite difference %.6g vs backward %.6g", GPT_TENSOR_NAMES[t], i - offset, fd, an);
            dot += fd * an;
            nfd += fd * fd;
            nan_ += an * an;
        }
        double cosine = (nfd > 0 && nan_ > 0) ? dot / sqrt(nfd * nan_) : (nfd == nan_ ? 1.0 : 0.0);
        printf("%-9s cosine %.6f  worst scaled error %.3f\n", GPT_TENSOR_NAMES[t], cosine, worst);
        EXPECT(cosine > 0.999, "%s: cosine similarity %.6f of finite-difference and backward gradients", GPT_TENSOR_NAMES[t], cosine);
        offset += n;
    }
    model_free(m);
}

int main(void) {
    gradcheck(0);
    gradcheck(1);
    return test_finish("model gradcheck");
}
