/* Hugging Face directories (model/hf_dir.h) without Python: config.json's defaults per class
 * and each refusal as one line naming the file; a random llama-family model exported and
 * loaded back into another is bit-identical, and its config.json reads back as its shape;
 * missing, misshapen and unexpected tensors are named and leave the model untouched; a failed
 * export leaves no config.json. (tests/reference/test_hf_export.py checks against transformers.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/files.h"
#include "io/safetensors.h"
#include "model/model.h"
#include "model/hf_dir.h"
#include "model/llama.h"
#include "../test_assert.h"

static char ROOT[256];

static const char* dir_of(const char* name) {
    static char buf[4][512];
    static int k = 0;
    char* p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s", ROOT, name);
    mkdir(p, 0755);
    return p;
}

static void write_text(const char* dir, const char* file, const char* text) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE* f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

#define SHAPE                                                                     \
    "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, " \
    "\"intermediate_size\": 96, \"vocab_size\": 300, \"max_position_embeddings\": 128"

/* config.json `{"architectures": [ARCH], SHAPE, extra}` must read, filling cfg. */
static int read_cfg(const char* arch, const char* extra, ModelShape* cfg, char* err, size_t errlen) {
    static int n = 0;
    char name[32], text[1024];
    snprintf(name, sizeof name, "cfg%d", n++);
    const char* d = dir_of(name);
    snprintf(text, sizeof text, "{\"architectures\": [\"%s\"], " SHAPE "%s%s}", arch, *extra ? ", " : "", extra);
    write_text(d, "config.json", text);
    return hf_config_read(d, cfg, err, errlen);
}

static void expect_refused(const char* arch, const char* extra, const char* fragment) {
    ModelShape c;
    char err[512] = "";
    EXPECT(read_cfg(arch, extra, &c, err, sizeof err) != 0, "accepted %s {%s}", arch, extra);
    EXPECT_MSG(err, "config.json: ");
    EXPECT_MSG(err, fragment);
    EXPECT(!strchr(err, '\n'), "one line: %s", err);
}

static void test_config(void) {
    ModelShape c;
    char err[512] = "";
    EXPECT(read_cfg("LlamaForCausalLM", "", &c, err, sizeof err) == 0, "llama: %s", err);
    EXPECT(c.family == MODEL_FAMILY_LLAMA && c.d_model == 64 && c.n_layer == 2 && c.n_head == 4 && c.d_ff == 96 &&
               c.vocab == 300 && c.n_ctx == 128,
           "llama shape");
    EXPECT(c.n_kv_head == 4 && c.head_dim == 16, "llama defaults: kv heads = heads, head_dim = hidden / heads");
    EXPECT(c.rope_theta == 10000.0f && c.norm_eps == 1e-6f && !c.tied && !c.qkv_bias && !c.o_bias && !c.deterministic,
           "llama defaults: theta 10000, eps 1e-6, untied, no biases");
    EXPECT(read_cfg(
               "LlamaForCausalLM",
               "\"num_key_value_heads\": 2, \"head_dim\": 24, \"attention_bias\": true, \"rope_theta\": 500000.0, "
               "\"rms_norm_eps\": 1e-05, \"tie_word_embeddings\": true, \"hidden_act\": \"silu\", \"mlp_bias\": false, "
               "\"rope_scaling\": {\"rope_type\": \"default\"}, \"torch_dtype\": \"bfloat16\"",
               &c, err, sizeof err) == 0,
           "llama full: %s", err);
    EXPECT(c.n_kv_head == 2 && c.head_dim == 24 && c.qkv_bias && c.o_bias && c.tied && c.rope_theta == 500000.0f &&
               c.norm_eps == 1e-5f,
           "llama keys read");
    EXPECT(read_cfg("Qwen2ForCausalLM", "\"num_key_value_heads\": 2, \"attention_bias\": false, \"sliding_window\": 64",
                    &c, err, sizeof err) == 0,
           "qwen2: %s", err);
    EXPECT(c.qkv_bias == 1 && c.o_bias == 0 && c.n_kv_head == 2 && !c.tied, "qwen2: q/k/v biases always, no o bias");
    EXPECT(
        read_cfg("Qwen2ForCausalLM", "\"num_key_value_heads\": null, \"head_dim\": null", &c, err, sizeof err) == 0 &&
            c.n_kv_head == 4 && c.head_dim == 16,
        "qwen2: null kv heads and head_dim take the per-head defaults: %s", err);
    /* Qwen2Config's default for an absent num_key_value_heads is 32, which 4 heads cannot use */
    expect_refused("Qwen2ForCausalLM", "", "num_attention_heads 4 is not a multiple of num_key_value_heads 32");

    expect_refused("GPT2LMHeadModel", "",
                   "architecture 'GPT2LMHeadModel' is not supported (expected LlamaForCausalLM or Qwen2ForCausalLM)");
    expect_refused("LlamaForCausalLM", "\"mlp_bias\": true", "mlp_bias true is not supported");
    expect_refused("LlamaForCausalLM", "\"hidden_act\": \"gelu\"",
                   "hidden_act 'gelu' is not supported (expected silu)");
    expect_refused("LlamaForCausalLM", "\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}",
                   "rope_scaling of type 'llama3' is not supported");
    expect_refused("LlamaForCausalLM", "\"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}", "type 'linear'");
    expect_refused("Qwen2ForCausalLM", "\"num_key_value_heads\": 2, \"use_sliding_window\": true",
                   "use_sliding_window true is not supported");
    expect_refused("LlamaForCausalLM", "\"partial_rotary_factor\": 0.5", "partial_rotary_factor");
    expect_refused("LlamaForCausalLM", "\"num_key_value_heads\": 3", "not a multiple of num_key_value_heads 3");
    expect_refused("LlamaForCausalLM", "\"num_key_value_heads\": 0", "num_key_value_heads must be a positive integer");
    expect_refused("LlamaForCausalLM", "\"head_dim\": 16.5", "head_dim must be a positive integer");
    expect_refused("LlamaForCausalLM", "\"rope_theta\": -1", "rope_theta must be a positive number");
    expect_refused("LlamaForCausalLM", "\"rms_norm_eps\": 0", "rms_norm_eps must be a positive number");
    expect_refused("LlamaForCausalLM", "\"tie_word_embeddings\": \"yes\"", "tie_word_embeddings must be true or false");

    const char* d = dir_of("cfg_bad");
    write_text(d, "config.json", "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 64}");
    EXPECT(hf_config_read(d, &c, err, sizeof err) != 0, "missing keys");
    EXPECT_MSG(err, "config.json: num_hidden_layers is missing");
    write_text(d, "config.json", "{\"architectures\": [\"LlamaForCausalLM\"], " SHAPE ", \"hidden_size\": 0}");
    EXPECT(hf_config_read(d, &c, err, sizeof err) != 0,
           "hidden_size 0 (a key given twice: the last value, as in Python)");
    EXPECT_MSG(err, "config.json: hidden_size must be a positive integer");
    write_text(d, "config.json", "{\"hidden_size\": 64,");
    EXPECT(hf_config_read(d, &c, err, sizeof err) != 0, "bad JSON");
    EXPECT_MSG(err, "config.json: not valid JSON");
    write_text(d, "config.json", "{\"model_type\": \"llama\"}");
    EXPECT(hf_config_read(d, &c, err, sizeof err) != 0, "no architectures");
    EXPECT_MSG(err, "no architectures list");
    EXPECT(hf_config_read(dir_of("empty"), &c, err, sizeof err) != 0, "no config.json");
    EXPECT_MSG(err, "empty/config.json: cannot read");
}

static const ModelShape TINY = {.n_layer = 2,
                               .n_head = 4,
                               .d_model = 32,
                               .n_ctx = 16,
                               .vocab = 50,
                               .family = MODEL_FAMILY_LLAMA,
                               .n_kv_head = 2,
                               .head_dim = 8,
                               .d_ff = 40,
                               .rope_theta = 10000.0f,
                               .norm_eps = 1e-6f,
                               .qkv_bias = 1,
                               .o_bias = 0,
                               .tied = 0};

static Model* tiny_model(const ModelShape* c, uint64_t seed) {
    ModelCapacity cap = {.max_tokens = 4, .max_att = 64, .max_prefixes = 1, .max_rows = 1, .row_ctx = 4};
    Model* m = model_create_cap(c, model_backend_find("cpu"), &cap, seed);
    /* make every bias and norm weight non-trivial, so a swapped index shows */
    for (size_t i = 0; i < m->num_params; i++) m->params_memory[i] += 0.001f * (float)(i % 97);
    m->backend->upload(m);
    return m;
}

/* Rewrites DIR/model.safetensors from `from`'s tensors, minus `drop`, with `reshape`'s shape
 * replaced by [7] (7 floats), plus an extra tensor `extra`. */
static void rewrite(const char* from, const char* dir, const char* drop, const char* reshape, const char* extra) {
    char err[512], path[600];
    snprintf(path, sizeof path, "%s/model.safetensors", from);
    SafetensorsFile* f = safetensors_open(path, err, sizeof err);
    if (!f) {
        printf("FAIL: %s\n", err);
        test_failures++;
        return;
    }
    SafetensorsTensor* t = calloc((size_t)f->n_entries + 1, sizeof *t);
    float** data = calloc((size_t)f->n_entries + 1, sizeof *data);
    static const int64_t seven[1] = {7};
    static const float zeros[7];
    int n = 0;
    for (int i = 0; i < f->n_entries; i++) {
        const SafetensorsEntry* e = &f->entries[i];
        if (drop && !strcmp(e->name, drop)) continue;
        data[i] = malloc(e->numel * sizeof(float) + 1);
        safetensors_read_f32(f, e, data[i], err, sizeof err);
        t[n] = (SafetensorsTensor){e->name, e->ndim, e->shape, data[i]};
        if (reshape && !strcmp(e->name, reshape)) t[n] = (SafetensorsTensor){e->name, 1, seven, zeros};
        n++;
    }
    if (extra) t[n++] = (SafetensorsTensor){extra, 1, seven, zeros};
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    EXPECT(safetensors_write_f32(path, t, n, 1, err, sizeof err) == 0, "rewrite: %s", err);
    for (int i = 0; i < f->n_entries; i++) free(data[i]);
    free(data);
    free(t);
    safetensors_close(f);
}

static void expect_load_fails(Model* m, const char* dir, const char* fragment) {
    char err[512] = "";
    float* before = malloc(m->num_params * sizeof(float));
    memcpy(before, m->params_memory, m->num_params * sizeof(float));
    EXPECT(hf_load_weights(m, dir, err, sizeof err) != 0, "loaded a bad directory (%s)", fragment);
    EXPECT_MSG(err, fragment);
    EXPECT(!strchr(err, '\n'), "one line: %s", err);
    EXPECT(!memcmp(before, m->params_memory, m->num_params * sizeof(float)), "the model is untouched (%s)", fragment);
    free(before);
}

static void test_weights(void) {
    char err[512] = "";
    Model* a = tiny_model(&TINY, 7);
    const char* out = dir_of("export/nested"); /* hf_export creates missing parents too */
    rmdir(out);
    EXPECT(hf_export(a, out, NULL, err, sizeof err) == 0, "export: %s", err);
    ModelShape back;
    EXPECT(hf_config_read(out, &back, err, sizeof err) == 0, "config.json reads back: %s", err);
    EXPECT(!memcmp(&back, &TINY, sizeof back), "config.json reads back as the same shape");

    Model* b = tiny_model(&TINY, 8);
    EXPECT(hf_load_weights(b, out, err, sizeof err) == 0, "load: %s", err);
    EXPECT(!memcmp(a->params_memory, b->params_memory, a->num_params * sizeof(float)), "bit-identical round trip");

    /* fused layouts split as transformers names them: q_proj is the first QD rows of qkvw */
    char path[600];
    snprintf(path, sizeof path, "%s/model.safetensors", out);
    SafetensorsFile* f = safetensors_open(path, err, sizeof err);
    EXPECT(f && f->n_entries == 3 + 2 * 12, "27 tensors (untied, q/k/v biases)");
    if (f) {
        LlamaParams p;
        llama_point_params(&p, a->params_memory, a->tensor_sizes);
        const SafetensorsEntry* e = safetensors_find(f, "model.layers.1.self_attn.k_proj.weight");
        float k[16 * 32];
        EXPECT(e && e->shape[0] == 16 && e->shape[1] == 32, "k_proj [16, 32]");
        if (e && safetensors_read_f32(f, e, k, err, sizeof err) == 0) {
            const float* want = p.qkvw + (size_t)1 * (32 + 2 * 16) * 32 + 32 * 32;
            EXPECT(!memcmp(k, want, sizeof k), "layer 1 k_proj = rows [32, 48) of its qkvw");
        }
        e = safetensors_find(f, "model.layers.0.mlp.up_proj.weight");
        float up[40 * 32];
        if (e && safetensors_read_f32(f, e, up, err, sizeof err) == 0)
            EXPECT(!memcmp(up, p.gateupw + 40 * 32, sizeof up), "layer 0 up_proj = rows [40, 80) of gateupw");
        EXPECT(safetensors_find(f, "model.layers.0.self_attn.o_proj.bias") == NULL, "no o_proj bias");
        safetensors_close(f);
    }

    const char* bad = dir_of("bad");
    write_text(bad, "config.json", "{}");
    rewrite(out, bad, "model.layers.1.mlp.up_proj.weight", NULL, NULL);
    expect_load_fails(b, bad, "bad/model.safetensors: no tensor model.layers.1.mlp.up_proj.weight");
    rewrite(out, bad, NULL, "model.layers.0.mlp.up_proj.weight", NULL);
    expect_load_fails(
        b, bad, "bad/model.safetensors: tensor model.layers.0.mlp.up_proj.weight has shape [7], expected [40, 32]");
    rewrite(out, bad, NULL, NULL, "model.layers.0.self_attn.o_proj.bias");
    expect_load_fails(b, bad, "tensor model.layers.0.self_attn.o_proj.bias has no place in the model");
    rewrite(out, bad, "lm_head.weight", NULL, NULL);
    expect_load_fails(b, bad, "no tensor lm_head.weight");
    expect_load_fails(b, dir_of("nothing"), "holds neither model.safetensors nor model.safetensors.index.json");
    /* an old-style rotary buffer is ignored */
    rewrite(out, bad, NULL, NULL, "model.layers.0.self_attn.rotary_emb.inv_freq");
    EXPECT(hf_load_weights(b, bad, err, sizeof err) == 0, "inv_freq ignored: %s", err);

    /* a tied model ignores lm_head.weight in the file */
    ModelShape tied = TINY;
    tied.tied = 1;
    Model* t = tiny_model(&tied, 9);
    EXPECT(hf_load_weights(t, out, err, sizeof err) == 0, "tied model, file with lm_head: %s", err);
    LlamaParams pa, pt;
    llama_point_params(&pa, a->params_memory, a->tensor_sizes);
    llama_point_params(&pt, t->params_memory, t->tensor_sizes);
    EXPECT(!memcmp(pa.embed, pt.embed, a->tensor_sizes[LT_EMBED] * sizeof(float)), "tied: embedding loaded");
    const char* tout = dir_of("tied");
    EXPECT(hf_export(t, tout, NULL, err, sizeof err) == 0, "tied export: %s", err);
    snprintf(path, sizeof path, "%s/model.safetensors", tout);
    f = safetensors_open(path, err, sizeof err);
    EXPECT(f && f->n_entries == 26 && !safetensors_find(f, "lm_head.weight"), "tied: no lm_head.weight written");
    safetensors_close(f);
    model_free(t);

    /* hf_tensor_count is what hf_tensor_views fills, for each combination of biases and tying */
    for (int k = 0; k < 8; k++) {
        ModelShape v = TINY;
        v.qkv_bias = k & 1;
        v.o_bias = (k >> 1) & 1;
        v.tied = (k >> 2) & 1;
        Model* mv = tiny_model(&v, 11);
        LlamaParams pv;
        llama_point_params(&pv, mv->params_memory, mv->tensor_sizes);
        HfTensor* views = malloc((size_t)hf_tensor_count(&v) * sizeof *views);
        int nv = hf_tensor_views(&v, &pv, views);
        EXPECT(nv == hf_tensor_count(&v), "variant %d: %d views, count %d", k, nv, hf_tensor_count(&v));
        size_t floats = 0;
        for (int i = 0; i < nv; i++) floats += (size_t)views[i].shape[0] * (views[i].ndim == 2 ? views[i].shape[1] : 1);
        EXPECT(floats == mv->num_params, "variant %d: the views cover every parameter once (%zu of %zu)", k, floats,
               mv->num_params);
        free(views);
        model_free(mv);
    }

    /* an o_proj bias without q/k/v biases has no HF class */
    ModelShape ob = TINY;
    ob.qkv_bias = 0;
    ob.o_bias = 1;
    Model* o = tiny_model(&ob, 10);
    EXPECT(hf_export(o, dir_of("ob"), NULL, err, sizeof err) != 0, "o bias alone refused");
    EXPECT_MSG(err, "has no Hugging Face form");
    model_free(o);

    /* a failed export leaves no config.json behind, not even an old one */
    const char* tokless = dir_of("no_tokenizer");
    EXPECT(hf_export(a, out, tokless, err, sizeof err) != 0, "tokenizer dir without tokenizer.json refused");
    EXPECT_MSG(err, "no_tokenizer/tokenizer.json: cannot read");
    write_text(tokless, "tokenizer.json", "{}");
    write_text(tokless, "config.json", "{\"bos_token_id\": 5, \"eos_token_id\": [6, 7], \"hidden_size\": 3}");
    snprintf(path, sizeof path, "%s/generation_config.json", tokless);
    mkdir(path, 0755); /* a directory where a file should be: the copy fails midway */
    EXPECT(hf_export(a, out, tokless, err, sizeof err) != 0, "failed copy");
    snprintf(path, sizeof path, "%s/config.json", out);
    EXPECT(access(path, F_OK) != 0, "no config.json after a failed export");
    snprintf(path, sizeof path, "%s/generation_config.json", tokless);
    rmdir(path);
    EXPECT(hf_export(a, out, tokless, err, sizeof err) == 0, "export with tokenizer: %s", err);
    snprintf(path, sizeof path, "%s/tokenizer.json", out);
    EXPECT(access(path, F_OK) == 0, "tokenizer.json copied");
    snprintf(path, sizeof path, "%s/config.json", out);
    FILE* cf = fopen(path, "r");
    char text[4096] = "";
    if (cf) {
        size_t got = fread(text, 1, sizeof text - 1, cf);
        text[got] = '\0';
        fclose(cf);
    }
    EXPECT(strstr(text, "\"bos_token_id\": 5,") && strstr(text, "\"eos_token_id\": [6,7],"), "token ids carried: %s",
           text);
    EXPECT(strstr(text, "\"architectures\": [\"Qwen2ForCausalLM\"]") && strstr(text, "\"rms_norm_eps\": 1e-06"),
           "qwen2 config: %s", text);
    model_free(a);
    model_free(b);
}

int main(void) {
    snprintf(ROOT, sizeof ROOT, "/tmp/sapo_test_hf_dir_XXXXXX");
    if (!mkdtemp(ROOT)) {
        perror("mkdtemp");
        return 1;
    }
    test_config();
    test_weights();
    if (remove_tree(ROOT) != 0) printf("note: could not remove %s\n", ROOT);
    return test_finish("test_hf_dir");
}
