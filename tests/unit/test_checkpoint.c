/* Checkpoints: the round trip is bit-identical; a model resumed from a checkpoint continues
 * bit-identically to one that never stopped; every bad file gives its own clear message
 * and leaves the model untouched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/rng.h"
#include "model/checkpoint.h"
#include "model/model.h"
#include "../test_assert.h"

enum { B = 2, T = 9 };
static ModelShape CFG = {.n_layer = 2, .n_head = 2, .d_model = 16, .n_ctx = 16, .vocab = GPT_VOCAB};
static int IN[B * T], TG[B * T];

static void train_steps(Model* m, int n) {
    AdamWConfig hp = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
    float lp[B * T], d[B * T];
    for (int s = 0; s < n; s++) {
        model_zero_grad(m);
        model_forward(m, IN, TG, B, T, lp);
        for (int i = 0; i < B * T; i++) d[i] = -1.0f / (B * T);
        model_backward(m, d);
        model_step(m, &hp, 1.0f);
    }
}

static void write_bytes(const char* path, const void* data, size_t n) {
    FILE* f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

static unsigned char* read_bytes(const char* path, size_t* n) {
    FILE* f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char* buf = malloc(*n);
    if (fread(buf, 1, *n, f) != *n) *n = 0;
    fclose(f);
    return buf;
}

/* Loading `path` must fail with a message containing `fragment`, leaving m unchanged. */
static void expect_load_error(Model* m, const char* path, const char* fragment) {
    float* before = malloc(m->num_params * sizeof(float));
    memcpy(before, m->params_memory, m->num_params * sizeof(float));
    char err[512] = "";
    int rc = checkpoint_load(m, path, 1, err, sizeof err);
    EXPECT(rc == -1, "loading %s should fail (%s)", path, fragment);
    EXPECT_MSG(err, fragment);
    EXPECT_MSG(err, path);
    EXPECT(!memcmp(before, m->params_memory, m->num_params * sizeof(float)), "a failed load changed the model (%s)", fragment);
    printf("bad checkpoint -> %s\n", err);
    free(before);
}

int main(void) {
    RngStream rng = rng_stream(8, 0, 0, RNG_TEST);
    for (int i = 0; i < B * T; i++) {
        IN[i] = (int)rng_below(&rng, 256);
        TG[i] = (int)rng_below(&rng, 256);
    }
    char dir[] = "/tmp/sapo_ckpt_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/model.ckpt", dir);
    snprintf(bad, sizeof bad, "%s/bad.ckpt", dir);
    const ModelBackend* cpu = model_backend_find("cpu");

    /* Uninterrupted: 6 steps. Interrupted: 3 steps, save, load into a fresh model, 3 more. */
    Model* straight = model_create(&CFG, cpu, B, 1);
    train_steps(straight, 6);
    Model* first = model_create(&CFG, cpu, B, 1);
    train_steps(first, 3);
    char err[512] = "";
    EXPECT(checkpoint_save(first, path, 1, err, sizeof err) == 0, "save failed: %s", err);
    Model* resumed = model_create(&CFG, cpu, B, 999); /* different init: everything must come from the file */
    EXPECT(checkpoint_load(resumed, path, 1, err, sizeof err) == 0, "load failed: %s", err);
    size_t bytes = first->num_params * sizeof(float);
    EXPECT(!memcmp(first->params_memory, resumed->params_memory, bytes), "parameters differ after the round trip");
    EXPECT(!memcmp(first->m_memory, resumed->m_memory, bytes), "first moments differ after the round trip");
    EXPECT(!memcmp(first->v_memory, resumed->v_memory, bytes), "second moments differ after the round trip");
    EXPECT(resumed->step == 3, "step %ld after load, expected 3", resumed->step);
    train_steps(resumed, 3);
    EXPECT(!memcmp(straight->params_memory, resumed->params_memory, bytes), "resumed training is not bit-identical");
    EXPECT(!memcmp(straight->v_memory, resumed->v_memory, bytes), "resumed optimizer state is not bit-identical");

    /* Weights only: moments zeroed, step 0. */
    Model* fresh = model_create(&CFG, cpu, B, 3);
    EXPECT(checkpoint_save(first, bad, 0, err, sizeof err) == 0, "weights-only save failed: %s", err);
    EXPECT(checkpoint_load(fresh, bad, 1, err, sizeof err) == 0, "weights-only load failed: %s", err);
    EXPECT(fresh->step == 0 && fresh->m_memory[0] == 0.0f, "weights-only load kept optimizer state");
    CheckpointInfo info;
    EXPECT(checkpoint_read_info(path, &info, err, sizeof err) == 0 && info.has_optimizer && info.step == 3 &&
               info.cfg.d_model == 16, "header info wrong");

    /* Bad files. */
    size_t n;
    unsigned char* good = read_bytes(path, &n);
    write_bytes(bad, good, n - 100);
    expect_load_error(fresh, bad, "truncated: payload has");
    write_bytes(bad, good, 60);
    expect_load_error(fresh, bad, "truncated header");
    unsigned char* copy = malloc(n);
    memcpy(copy, good, n);
    copy[0] = 'X';
    write_bytes(bad, copy, n);
    expect_load_error(fresh, bad, "bad magic");
    memcpy(copy, good, n);
    copy[8] = 7;
    write_bytes(bad, copy, n);
    expect_load_error(fresh, bad, "unsupported version 7");
    memcpy(copy, good, n);
    copy[n / 2] ^= 0x40;
    write_bytes(bad, copy, n);
    expect_load_error(fresh, bad, "checksum mismatch");
    memcpy(copy, good, n);
    copy[20] = 17; /* d_model 17 is not a multiple of n_head 2 */
    write_bytes(bad, copy, n);
    expect_load_error(fresh, bad, "corrupted header");
    write_bytes(bad, "", 0);
    expect_load_error(fresh, bad, "bad magic");
    expect_load_error(fresh, "/nonexistent/dir/model.ckpt", "cannot open");
    ModelShape other = CFG;
    other.n_layer = 3;
    Model* wrong = model_create(&other, cpu, B, 1);
    expect_load_error(wrong, path, "shape mismatch: file has n_layer=2");

    free(copy);
    free(good);
    model_free(straight);
    model_free(first);
    model_free(resumed);
    model_free(fresh);
    model_free(wrong);
    unlink(path);
    unlink(bad);
    rmdir(dir);
    return test_finish("checkpoint");
}
