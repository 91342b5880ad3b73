/* Hugging Face directories of the Llama/Qwen2 family (see hf_dir.h). The names and shapes
 * are transformers' (LlamaForCausalLM, Qwen2ForCausalLM); the defaults of a missing key are
 * those of LlamaConfig and Qwen2Config in transformers 4.49, so a config.json means here
 * what it means there. */
#include "model/hf_dir.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "io/atomic_file.h"
#include "io/files.h"
#include "io/safetensors.h"
#include "model/llama.h"

/* ---- config.json --------------------------------------------------------------------- */

/* Key k of the config: NULL when absent or null (transformers treats both as "use the
 * default"). A key given twice means its last value, as Python's json reads it. */
static const cJSON* last_item(const cJSON* obj, const char* k) {
    const cJSON* v = NULL;
    const cJSON* it;
    cJSON_ArrayForEach(it, obj) {
        if (it->string && !strcmp(it->string, k)) v = it;
    }
    return v;
}
static const cJSON* cfg_item(const cJSON* root, const char* k) {
    const cJSON* v = last_item(root, k);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* A positive integer key; absent: def, or an error when def is 0 (required). */
static int cfg_int(const char* file, const cJSON* root, const char* k, int def, int* out, char* err, size_t errlen) {
    const cJSON* v = cfg_item(root, k);
    if (!v) {
        if (!def) return set_error(err, errlen, "%s: %s is missing", file, k);
        *out = def;
        return 0;
    }
    double d = cJSON_IsNumber(v) ? v->valuedouble : 0;
    if (!cJSON_IsNumber(v) || d != floor(d) || d < 1 || d > INT_MAX)
        return set_error(err, errlen, "%s: %s must be a positive integer", file, k);
    *out = (int)d;
    return 0;
}

/* A positive finite number key (absent: def). */
static int cfg_float(const char* file, const cJSON* root, const char* k, double def, float* out, char* err,
                     size_t errlen) {
    const cJSON* v = cfg_item(root, k);
    double d = v ? (cJSON_IsNumber(v) ? v->valuedouble : -1) : def;
    float f = (float)d;
    if (!(d > 0) || !isfinite(f) || f == 0) return set_error(err, errlen, "%s: %s must be a positive number", file, k);
    *out = f;
    return 0;
}

static int cfg_bool(const char* file, const cJSON* root, const char* k, int def, int* out, char* err, size_t errlen) {
    const cJSON* v = cfg_item(root, k);
    if (!v) {
        *out = def;
        return 0;
    }
    if (!cJSON_IsBool(v)) return set_error(err, errlen, "%s: %s must be true or false", file, k);
    *out = cJSON_IsTrue(v) ? 1 : 0;
    return 0;
}

static int config_parse(const char* file, const cJSON* root, ModelShape* c, char* err, size_t errlen) {
    if (!cJSON_IsObject(root)) return set_error(err, errlen, "%s: not a JSON object", file);
    const cJSON* arch = cfg_item(root, "architectures");
    const cJSON* a0 = cJSON_IsArray(arch) ? cJSON_GetArrayItem(arch, 0) : NULL;
    if (!cJSON_IsString(a0))
        return set_error(err, errlen, "%s: no architectures list (expected LlamaForCausalLM or Qwen2ForCausalLM)",
                         file);
    int qwen2 = !strcmp(a0->valuestring, "Qwen2ForCausalLM");
    if (!qwen2 && strcmp(a0->valuestring, "LlamaForCausalLM"))
        return set_error(err, errlen,
                         "%s: architecture '%.60s' is not supported (expected LlamaForCausalLM or Qwen2ForCausalLM)",
                         file, a0->valuestring);
    memset(c, 0, sizeof *c);
    c->family = MODEL_FAMILY_LLAMA;
    if (cfg_int(file, root, "hidden_size", 0, &c->d_model, err, errlen) ||
        cfg_int(file, root, "num_hidden_layers", 0, &c->n_layer, err, errlen) ||
        cfg_int(file, root, "num_attention_heads", 0, &c->n_head, err, errlen) ||
        cfg_int(file, root, "intermediate_size", 0, &c->d_ff, err, errlen) ||
        cfg_int(file, root, "vocab_size", 0, &c->vocab, err, errlen) ||
        cfg_int(file, root, "max_position_embeddings", 0, &c->n_ctx, err, errlen))
        return -1;
    /* num_key_value_heads: null means one per head in both classes; Qwen2Config's default
     * when the key is absent is 32 (LlamaConfig's is again one per head). */
    int kv_default = qwen2 && !last_item(root, "num_key_value_heads") ? 32 : c->n_head;
    int hd_default = c->d_model / c->n_head; /* hidden_size // num_attention_heads */
    if (cfg_int(file, root, "num_key_value_heads", kv_default, &c->n_kv_head, err, errlen)) return -1;
    if (!hd_default && !cfg_item(root, "head_dim"))
        return set_error(err, errlen, "%s: hidden_size %d is smaller than num_attention_heads %d", file, c->d_model,
                         c->n_head);
    if (cfg_int(file, root, "head_dim", hd_default ? hd_default : 1, &c->head_dim, err, errlen)) return -1;
    if (c->n_head % c->n_kv_head)
        return set_error(err, errlen, "%s: num_attention_heads %d is not a multiple of num_key_value_heads %d", file,
                         c->n_head, c->n_kv_head);
    if (cfg_float(file, root, "rope_theta", 10000.0, &c->rope_theta, err, errlen) ||
        cfg_float(file, root, "rms_norm_eps", 1e-6, &c->norm_eps, err, errlen) ||
        cfg_bool(file, root, "tie_word_embeddings", 0, &c->tied, err, errlen))
        return -1;
    if (qwen2) {
        /* Qwen2's q/k/v projections always carry biases, its o_proj and MLP never */
        c->qkv_bias = 1;
        c->o_bias = 0;
        int sliding = 0;
        if (cfg_bool(file, root, "use_sliding_window", 0, &sliding, err, errlen)) return -1;
        if (sliding) return set_error(err, errlen, "%s: use_sliding_window true is not supported", file);
    } else {
        int attention_bias = 0, mlp_bias = 0;
        if (cfg_bool(file, root, "attention_bias", 0, &attention_bias, err, errlen) ||
            cfg_bool(file, root, "mlp_bias", 0, &mlp_bias, err, errlen))
            return -1;
        if (mlp_bias) return set_error(err, errlen, "%s: mlp_bias true is not supported", file);
        c->qkv_bias = c->o_bias = attention_bias;
    }
    const cJSON* act = cfg_item(root, "hidden_act");
    if (act && (!cJSON_IsString(act) || strcmp(act->valuestring, "silu")))
        return set_error(err, errlen, "%s: hidden_act '%.40s' is not supported (expected silu)", file,
                         cJSON_IsString(act) ? act->valuestring : "?");
    const cJSON* rs = cfg_item(root, "rope_scaling");
    if (rs) {
        /* transformers copies a legacy "type" over "rope_type" */
        const cJSON* type = cJSON_IsObject(rs) ? cfg_item(rs, "type") : NULL;
        if (!type && cJSON_IsObject(rs)) type = cfg_item(rs, "rope_type");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "default"))
            return set_error(err, errlen, "%s: rope_scaling of type '%.40s' is not supported (only null or default)",
                             file, cJSON_IsString(type) ? type->valuestring : "?");
    }
    const cJSON* prf = cfg_item(root, "partial_rotary_factor");
    if (prf && !(cJSON_IsNumber(prf) && prf->valuedouble == 1.0))
        return set_error(err, errlen, "%s: partial_rotary_factor other than 1 is not supported", file);
    return 0;
}

int hf_config_read(const char* dir, ModelShape* cfg, char* err, size_t errlen) {
    char* file = path_join(dir, "config.json");
    char* text = file_read_all(file, 16u << 20, NULL);
    int rc;
    if (!text) {
        rc = set_error(err, errlen, "%s: cannot read: %s", file, strerror(errno));
    } else {
        cJSON* root = cJSON_Parse(text);
        ModelShape c;
        rc = root ? config_parse(file, root, &c, err, errlen) : set_error(err, errlen, "%s: not valid JSON", file);
        if (!rc) *cfg = c;
        cJSON_Delete(root);
        free(text);
    }
    free(file);
    return rc;
}

/* ---- the tensors, both ways ------------------------------------------------------------ */

int hf_tensor_views(const ModelShape* c, const LlamaParams* p, HfTensor* t) {
    int n = 0;
    long C = c->d_model, F = c->d_ff, V = c->vocab, QD = llama_qdim(c), KD = llama_kvdim(c);
    long QKV = llama_qkvdim(c);
#define ADD(data_, d0, d1, ...)                             \
    do {                                                    \
        snprintf(t[n].name, sizeof t[n].name, __VA_ARGS__); \
        t[n].ndim = (d1) ? 2 : 1;                           \
        t[n].shape[0] = (d0);                               \
        t[n].shape[1] = (d1);                               \
        t[n].data = (data_);                                \
        n++;                                                \
    } while (0)
    ADD(p->embed, V, C, "model.embed_tokens.weight");
    for (int l = 0; l < c->n_layer; l++) {
        const char* at = "model.layers";
        float* qkvw = p->qkvw + (size_t)l * QKV * C;
        ADD(qkvw, QD, C, "%s.%d.self_attn.q_proj.weight", at, l);
        ADD(qkvw + QD * C, KD, C, "%s.%d.self_attn.k_proj.weight", at, l);
        ADD(qkvw + (QD + KD) * C, KD, C, "%s.%d.self_attn.v_proj.weight", at, l);
        if (c->qkv_bias) {
            float* qkvb = p->qkvb + (size_t)l * QKV;
            ADD(qkvb, QD, 0, "%s.%d.self_attn.q_proj.bias", at, l);
            ADD(qkvb + QD, KD, 0, "%s.%d.self_attn.k_proj.bias", at, l);
            ADD(qkvb + QD + KD, KD, 0, "%s.%d.self_attn.v_proj.bias", at, l);
        }
        ADD(p->ow + (size_t)l * C * QD, C, QD, "%s.%d.self_attn.o_proj.weight", at, l);
        if (c->o_bias) ADD(p->ob + (size_t)l * C, C, 0, "%s.%d.self_attn.o_proj.bias", at, l);
        float* gu = p->gateupw + (size_t)l * 2 * F * C;
        ADD(gu, F, C, "%s.%d.mlp.gate_proj.weight", at, l);
        ADD(gu + F * C, F, C, "%s.%d.mlp.up_proj.weight", at, l);
        ADD(p->downw + (size_t)l * C * F, C, F, "%s.%d.mlp.down_proj.weight", at, l);
        ADD(p->ln1w + (size_t)l * C, C, 0, "%s.%d.input_layernorm.weight", at, l);
        ADD(p->ln2w + (size_t)l * C, C, 0, "%s.%d.post_attention_layernorm.weight", at, l);
    }
    ADD(p->normw, C, 0, "model.norm.weight");
    if (!c->tied) ADD(p->lmhead, V, C, "lm_head.weight");
#undef ADD
    return n;
}

int hf_tensor_count(const ModelShape* c) {
    /* per layer: q, k, v, o, gate, up, down and the two norms, plus the biases it has */
    int per_layer = 9 + (c->qkv_bias ? 3 : 0) + (c->o_bias ? 1 : 0);
    return 2 + c->n_layer * per_layer + (c->tied ? 0 : 1);
}

/* The model's tensor sizes must be the fused layout this file splits (llama.h). */
static int layout_check(const Model* m, char* err, size_t errlen) {
    const ModelShape* c = &m->cfg;
    if (c->family != MODEL_FAMILY_LLAMA || m->n_tensors != LLAMA_NUM_TENSORS)
        return set_error(err, errlen, "the model is not of the llama family");
    size_t L = (size_t)c->n_layer, C = (size_t)c->d_model, F = (size_t)c->d_ff, V = (size_t)c->vocab;
    size_t QD = (size_t)llama_qdim(c), QKV = (size_t)llama_qkvdim(c);
    size_t want[LLAMA_NUM_TENSORS] = {
        [LT_EMBED] = V * C,
        [LT_QKVW] = L * QKV * C,
        [LT_QKVB] = c->qkv_bias ? L * QKV : 0,
        [LT_OW] = L * C * QD,
        [LT_OB] = c->o_bias ? L * C : 0,
        [LT_LN1W] = L * C,
        [LT_LN2W] = L * C,
        [LT_GATEUPW] = L * 2 * F * C,
        [LT_DOWNW] = L * C * F,
        [LT_NORMW] = C,
        [LT_LMHEAD] = c->tied ? 0 : V * C,
    };
    for (int i = 0; i < LLAMA_NUM_TENSORS; i++)
        if (m->tensor_sizes[i] != want[i])
            return set_error(err, errlen, "the model's tensor %s has %zu floats, the llama layout %zu",
                             LLAMA_TENSOR_NAMES[i], m->tensor_sizes[i], want[i]);
    return 0;
}

/* Tensors a checkpoint may carry that the model does not need (old Llama files keep the
 * rotary frequencies as a buffer). */
static int ignorable(const ModelShape* c, const char* name) {
    size_t n = strlen(name), k = strlen(".rotary_emb.inv_freq");
    return (c->tied && !strcmp(name, "lm_head.weight")) || (n > k && !strcmp(name + n - k, ".rotary_emb.inv_freq"));
}

int hf_load_weights(Model* m, const char* dir, char* err, size_t errlen) {
    if (layout_check(m, err, errlen)) return -1;
    const ModelShape* c = &m->cfg;
    SafetensorsSet* s = safetensors_set_open(dir, err, errlen);
    if (!s) return -1;
    LlamaParams p;
    llama_point_params(&p, m->params_memory, m->tensor_sizes);
    HfTensor* t = mallocCheck((size_t)hf_tensor_count(c) * sizeof *t);
    int n = hf_tensor_views(c, &p, t);
    const SafetensorsEntry** ent = mallocCheck((size_t)n * sizeof *ent);
    const SafetensorsFile** file = mallocCheck((size_t)n * sizeof *file);
    char* used = callocCheck((size_t)s->n_tensors + 1, 1);
    int rc = 0;
    /* Pass 1: every tensor present, of a readable dtype and the right shape; nothing else. */
    for (int i = 0; i < n && !rc; i++) {
        ent[i] = safetensors_set_find(s, t[i].name, &file[i]);
        const SafetensorsEntry* e = ent[i];
        if (!e) {
            rc = set_error(err, errlen, "%s: no tensor %s", s->source, t[i].name);
            break;
        }
        for (int k = 0; k < s->n_tensors; k++)
            if (s->tensors[k] == e) used[k] = 1;
        int same = e->ndim == t[i].ndim;
        for (int d = 0; same && d < t[i].ndim; d++) same = e->shape[d] == t[i].shape[d];
        if (!same) {
            char got[128], want[64];
            rc = set_error(err, errlen, "%s: tensor %s has shape %s, expected %s", file[i]->path, t[i].name,
                           safetensors_shape_str(e->shape, e->ndim, got, sizeof got),
                           safetensors_shape_str(t[i].shape, t[i].ndim, want, sizeof want));
        } else if (strcmp(e->dtype, "F32") && strcmp(e->dtype, "BF16") && strcmp(e->dtype, "F16")) {
            rc = set_error(err, errlen, "%s: tensor %s has dtype %s; only F32, BF16 and F16 can be read", file[i]->path,
                           t[i].name, e->dtype);
        }
    }
    for (int k = 0; k < s->n_tensors && !rc; k++) {
        if (!used[k] && !ignorable(c, s->tensors[k]->name))
            rc = set_error(err, errlen, "%s: tensor %s has no place in the model config.json describes", s->source,
                           s->tensors[k]->name);
    }
    /* Pass 2: read. Only an I/O error can stop it now. */
    for (int i = 0; i < n && !rc; i++) rc = safetensors_read_f32(file[i], ent[i], t[i].data, err, errlen);
    free(used);
    free(file);
    free(ent);
    free(t);
    safetensors_set_close(s);
    if (!rc) m->backend->upload(m);
    return rc;
}

/* ---- export -------------------------------------------------------------------------- */

/* mkdir -p */
static int make_dirs(const char* dir, char* err, size_t errlen) {
    char* p = strdup(dir);
    if (!p) sapo_die("out of memory");
    int rc = 0;
    for (char* q = p + 1; !rc; q++) {
        int end = *q == '\0';
        if (*q == '/' || end) {
            *q = '\0';
            struct stat st;
            if (mkdir(p, 0755) != 0 && errno != EEXIST)
                rc = set_error(err, errlen, "cannot create %s: %s", p, strerror(errno));
            else if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
                rc = set_error(err, errlen, "cannot create %s: not a directory", p);
            if (end) break;
            *q = '/';
        }
    }
    free(p);
    return rc;
}

/* Copies src to dst atomically, in chunks. */
static int copy_file(const char* src, const char* dst, char* err, size_t errlen) {
    FILE* in = fopen(src, "rb");
    if (!in) return set_error(err, errlen, "%s: cannot open: %s", src, strerror(errno));
    FILE* out = atomic_file_begin(dst, err, errlen);
    if (!out) {
        fclose(in);
        return -1;
    }
    char* buf = mallocCheck(1 << 20);
    size_t got;
    while ((got = fread(buf, 1, 1 << 20, in)) > 0) fwrite(buf, 1, got, out);
    int bad = ferror(in);
    fclose(in);
    free(buf);
    if (bad) {
        atomic_file_abort(out, dst);
        return set_error(err, errlen, "%s: cannot read", src);
    }
    return atomic_file_commit(out, dst, err, errlen);
}

/* The shortest decimal that reads back as f, always with a '.' or an exponent (so Python
 * reads a float); a whole number as Python prints one (100000.0, not 1e+05). */
static void float_repr(float f, char* buf, size_t n) {
    if (f == floorf(f) && fabsf(f) < 1e15f) {
        snprintf(buf, n, "%.1f", (double)f);
        return;
    }
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, n, "%.*g", prec, (double)f);
        if (strtof(buf, NULL) == f) break;
    }
    if (!strpbrk(buf, ".eE")) strncat(buf, ".0", n - strlen(buf) - 1);
}

/* The bos/eos/pad token ids of the source's config.json, as JSON lines (may be empty). */
static void token_ids_from(const char* src_dir, char* out, size_t n) {
    out[0] = '\0';
    if (!src_dir) return;
    char* path = path_join(src_dir, "config.json");
    char* text = file_read_all(path, 16u << 20, NULL);
    free(path);
    cJSON* root = text ? cJSON_Parse(text) : NULL;
    free(text);
    static const char* const KEYS[] = {"bos_token_id", "eos_token_id", "pad_token_id"};
    for (int i = 0; root && i < 3; i++) {
        const cJSON* v = last_item(root, KEYS[i]);
        /* an id or a list of ids: printed back unchanged */
        if (v && (cJSON_IsNumber(v) || cJSON_IsArray(v) || cJSON_IsNull(v))) {
            char* s = cJSON_PrintUnformatted(v);
            size_t len = strlen(out);
            snprintf(out + len, n - len, "  \"%s\": %s,\n", KEYS[i], s);
            free(s);
        }
    }
    cJSON_Delete(root);
}

static void config_json(const ModelShape* c, const char* token_ids, char* buf, size_t n) {
    int qwen2 = c->qkv_bias && !c->o_bias;
    char eps[32], theta[32];
    float_repr(c->norm_eps, eps, sizeof eps);
    float_repr(c->rope_theta, theta, sizeof theta);
    int k = snprintf(buf, n,
                     "{\n"
                     "  \"architectures\": [\"%s\"],\n"
                     "  \"model_type\": \"%s\",\n"
                     "  \"hidden_size\": %d,\n"
                     "  \"intermediate_size\": %d,\n"
                     "  \"num_hidden_layers\": %d,\n"
                     "  \"num_attention_heads\": %d,\n"
                     "  \"num_key_value_heads\": %d,\n"
                     "  \"head_dim\": %d,\n"
                     "  \"hidden_act\": \"silu\",\n"
                     "  \"max_position_embeddings\": %d,\n"
                     "  \"rms_norm_eps\": %s,\n"
                     "  \"rope_theta\": %s,\n"
                     "  \"rope_scaling\": null,\n"
                     "  \"vocab_size\": %d,\n"
                     "  \"tie_word_embeddings\": %s,\n"
                     "%s"
                     "  \"attention_dropout\": 0.0,\n"
                     "  \"use_cache\": true,\n"
                     "  \"torch_dtype\": \"float32\",\n",
                     qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM", qwen2 ? "qwen2" : "llama", c->d_model, c->d_ff,
                     c->n_layer, c->n_head, c->n_kv_head, c->head_dim, c->n_ctx, eps, theta, c->vocab,
                     c->tied ? "true" : "false", token_ids);
    if (qwen2)
        /* no sliding window at all: with a window size set, transformers 4.49 still masks
         * keys beyond it (and warns), whatever use_sliding_window says */
        snprintf(buf + k, n - (size_t)k,
                 "  \"use_sliding_window\": false,\n  \"sliding_window\": null,\n  \"max_window_layers\": %d\n}\n",
                 c->n_layer);
    else
        snprintf(buf + k, n - (size_t)k, "  \"attention_bias\": %s,\n  \"mlp_bias\": false\n}\n",
                 c->qkv_bias ? "true" : "false");
}

int hf_export(Model* m, const char* dir, const char* tokenizer_src_dir, char* err, size_t errlen) {
    if (layout_check(m, err, errlen)) return -1;
    const ModelShape* c = &m->cfg;
    if (c->o_bias && !c->qkv_bias)
        return set_error(err, errlen, "%s: a model with an o_proj bias but no q/k/v biases has no Hugging Face form",
                         dir);
    char* tok_src = tokenizer_src_dir ? path_join(tokenizer_src_dir, "tokenizer.json") : NULL;
    if (tok_src && access(tok_src, R_OK) != 0) {
        int rc = set_error(err, errlen, "%s: cannot read: %s", tok_src, strerror(errno));
        free(tok_src);
        return rc;
    }
    free(tok_src);
    if (make_dirs(dir, err, errlen)) return -1;
    char* config_path = path_join(dir, "config.json");
    /* not loadable until everything else is in place */
    if (unlink(config_path) != 0 && errno != ENOENT) {
        int rc = set_error(err, errlen, "cannot remove %s: %s", config_path, strerror(errno));
        free(config_path);
        return rc;
    }
    m->backend->download(m);
    LlamaParams p;
    llama_point_params(&p, m->params_memory, m->tensor_sizes);
    HfTensor* t = mallocCheck((size_t)hf_tensor_count(c) * sizeof *t);
    int n = hf_tensor_views(c, &p, t);
    SafetensorsTensor* st = mallocCheck((size_t)n * sizeof *st);
    for (int i = 0; i < n; i++) st[i] = (SafetensorsTensor){t[i].name, t[i].ndim, t[i].shape, t[i].data};
    char* weights = path_join(dir, "model.safetensors");
    int rc = safetensors_write_f32(weights, st, n, 1, err, errlen);
    free(weights);
    free(st);
    free(t);
    static const char* const TOKENIZER_FILES[] = {"tokenizer.json", "tokenizer_config.json", "generation_config.json"};
    for (int i = 0; i < 3 && !rc && tokenizer_src_dir; i++) {
        char* src = path_join(tokenizer_src_dir, TOKENIZER_FILES[i]);
        char* dst = path_join(dir, TOKENIZER_FILES[i]);
        if (i == 0 || access(src, F_OK) == 0) rc = copy_file(src, dst, err, errlen);
        free(src);
        free(dst);
    }
    if (!rc) {
        char ids[512], text[4096];
        token_ids_from(tokenizer_src_dir, ids, sizeof ids);
        config_json(c, ids, text, sizeof text);
        rc = atomic_file_write(config_path, text, err, errlen);
    }
    free(config_path);
    return rc;
}
