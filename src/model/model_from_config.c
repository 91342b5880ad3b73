/* Reads [model], [optim] and [gen] keys (with [node.K] overrides) into the model's structs. */
#include "model/model_from_config.h"

GPTConfig gpt_config_from(const Config* cfg, int node) {
    GPTConfig g = {
        .n_layer = (int)config_node_int(cfg, node, "model.n_layer"),
        .n_head = (int)config_node_int(cfg, node, "model.n_head"),
        .d_model = (int)config_node_int(cfg, node, "model.d_model"),
        .n_ctx = (int)config_node_int(cfg, node, "model.n_ctx"),
        .vocab = GPT_VOCAB,
        .deterministic = config_node_bool(cfg, node, "model.deterministic"),
    };
    return g;
}

AdamWConfig adamw_config_from(const Config* cfg, int node) {
    AdamWConfig a = {
        .lr = (float)config_node_float(cfg, node, "optim.lr"),
        .beta1 = (float)config_node_float(cfg, node, "optim.beta1"),
        .beta2 = (float)config_node_float(cfg, node, "optim.beta2"),
        .eps = (float)config_node_float(cfg, node, "optim.eps"),
        .weight_decay = (float)config_node_float(cfg, node, "optim.weight_decay"),
    };
    return a;
}

GenConfig gen_config_from(const Config* cfg, int node) {
    GenConfig g = {
        .sampler = {.temperature = (float)config_node_float(cfg, node, "gen.temperature"),
                    .top_p = (float)config_node_float(cfg, node, "gen.top_p")},
        .max_new_tokens = (int)config_node_int(cfg, node, "gen.max_new_tokens"),
        .stop = NULL,
    };
    return g;
}
