/* For tests/reference/test_hf_export.py: reads a Hugging Face directory into a llama-family
 * model (hf_config_read, model_create_cap, hf_load_weights) and writes it back out with
 * hf_export, optionally also as a sapo checkpoint (for `sapo export`).
 *   tool_hf_roundtrip SRC_DIR OUT_DIR [TOKENIZER_DIR|-] [CKPT|-] [IDS LOGITS]
 * OUT_DIR "-": no export. IDS (comma-separated token ids): the loaded model's logits of that
 * one sequence go to the file LOGITS as raw f32 (T, V), so the test can tell that each HF
 * tensor landed where the forward reads it. Errors: one line on stderr, exit 2.
 *   tool_hf_roundtrip --byte-gpt-ckpt CKPT
 * writes a tiny byte_gpt checkpoint instead (what `sapo export` must refuse). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/checkpoint.h"
#include "model/model.h"
#include "model/hf_dir.h"

int main(int argc, char** argv) {
    char err[512];
    if (argc == 3 && !strcmp(argv[1], "--byte-gpt-ckpt")) {
        ModelShape g = {.n_layer = 1, .n_head = 2, .d_model = 8, .n_ctx = 8, .vocab = GPT_VOCAB};
        Model* m = model_create(&g, model_backend_find("cpu"), 1, 1);
        int rc = checkpoint_save(m, argv[2], 0, err, sizeof err);
        if (rc) fprintf(stderr, "tool_hf_roundtrip: %s\n", err);
        model_free(m);
        return rc ? 2 : 0;
    }
    if (argc < 3 || argc == 6 || argc > 7) {
        fprintf(stderr, "usage: tool_hf_roundtrip SRC_DIR OUT_DIR|- [TOKENIZER_DIR|-] [CKPT|-] [IDS LOGITS]\n");
        return 2;
    }
    const char* src = argv[1];
    const char* out = strcmp(argv[2], "-") ? argv[2] : NULL;
    const char* tok = argc > 3 && strcmp(argv[3], "-") ? argv[3] : NULL;
    const char* ckpt = argc > 4 && strcmp(argv[4], "-") ? argv[4] : NULL;
    int ids[4096], T = 0;
    for (const char* p = argc > 5 ? argv[5] : ""; *p && T < 4096; T++) {
        char* end;
        ids[T] = (int)strtol(p, &end, 10);
        p = *end == ',' ? end + 1 : end;
    }
    ModelShape cfg;
    if (hf_config_read(src, &cfg, err, sizeof err)) {
        fprintf(stderr, "tool_hf_roundtrip: %s\n", err);
        return 2;
    }
    /* the smallest capacity that fits the one forward */
    int n = T ? T : 1;
    ModelCapacity cap = {
        .max_tokens = n, .max_att = (long)cfg.n_head * n * n, .max_prefixes = 1, .max_rows = 1, .row_ctx = 1};
    Model* m = model_create_cap(&cfg, model_backend_find("cpu"), &cap, 1);
    int rc = hf_load_weights(m, src, err, sizeof err);
    if (!rc && T) {
        int* targets = calloc((size_t)T, sizeof(int));
        float* lp = malloc((size_t)T * sizeof(float));
        float* logits = malloc((size_t)T * cfg.vocab * sizeof(float));
        model_forward(m, ids, targets, 1, T, lp);
        m->backend->get_logits(m, logits);
        FILE* f = fopen(argv[6], "wb");
        size_t put = f ? fwrite(logits, sizeof(float), (size_t)T * cfg.vocab, f) : 0;
        if (!f || (fclose(f) | (put != (size_t)T * cfg.vocab))) {
            snprintf(err, sizeof err, "cannot write %s", argv[6]);
            rc = -1;
        }
        free(targets);
        free(lp);
        free(logits);
    }
    if (!rc && ckpt) rc = checkpoint_save(m, ckpt, 0, err, sizeof err);
    if (!rc && out) rc = hf_export(m, out, tok, err, sizeof err);
    if (rc) fprintf(stderr, "tool_hf_roundtrip: %s\n", err);
    model_free(m);
    return rc ? 2 : 0;
}
