/* A node's settings before it exists: the checks that would stop a run later and what a
 * node will hold (see node_config.h). */
#include "swarm/node_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/check.h"
#include "model/checkpoint.h"
#include "model/family.h"
#include "model/hf_model.h"
#include "swarm/taskset.h"

/* What a rank holds beyond the node's own buffers (MPI's shared-memory segments, HDF5,
 * OpenBLAS's work buffer, libc): a quick.ini rank's private memory is about 45 MB in all,
 * of which about 25 MB is the node's touched activations and caches. */
#define NODE_PROCESS_BYTES (24.0 * 1024 * 1024)

/* Node k's model.init (when set) against its shape; body: its payload too (checkpoint_verify). */
static int init_verify(const NodeSettings* ns, int k, int body, char* err, size_t errlen) {
    char why[512];
    if (*ns->init && checkpoint_verify(ns->init, &ns->model, body, NULL, why, sizeof why))
        return set_error(err, errlen, "node %d: model.init: %s", k, why);
    return 0;
}

/* A llama node needs a readable Hugging Face directory with its tokenizer. */
static int llama_node_check(const NodeSettings* ns, int k, char* err, size_t errlen) {
    char why[512];
    GPTConfig h;
    if (!*ns->hf_dir) return set_error(err, errlen, "node %d: model.family = llama needs model.hf_dir (a Hugging Face directory)", k);
    if (hf_model_shape(ns->hf_dir, ns->model.n_ctx, 0, &h, why, sizeof why))
        return set_error(err, errlen, "node %d: model.hf_dir: %s", k, why);
    size_t n = strlen(ns->hf_dir) + 32;
    char* path = mallocCheck(n);
    snprintf(path, n, "%s/tokenizer.json", ns->hf_dir);
    struct stat st;
    int there = stat(path, &st) == 0;
    free(path);
    if (!there) return set_error(err, errlen, "node %d: model.hf_dir %s has no tokenizer.json", k, ns->hf_dir);
    return 0;
}

int swarm_config_check(const RunSettings* rs, char* err, size_t errlen) {
    const SwarmSettings* sw = &rs->sw;
    int n_nodes = rs->n_nodes;
    TaskSet ts;
    if (taskset_build(&ts, sw->tasks_names, sw->tasks_preset, err, errlen)) return -1;
    taskset_free(&ts);
    if (rs->max_node_section >= n_nodes)
        return set_error(err, errlen, "[node.%d] is set but the swarm has %d nodes (0..%d)", rs->max_node_section,
                         n_nodes, n_nodes - 1);
    if (sw->kl > 0 && sw->ppo_epochs < 1)
        return set_error(err, errlen, "grpo.ppo_epochs must be >= 1");
    for (int k = 0; k < n_nodes; k++) {
        const NodeSettings* ns = &rs->node[k];
        long I = ns->n_local, J = ns->n_external, G = ns->n_groups;
        if (I + J != G)
            return set_error(err, errlen,
                             "node %d: sampling.local (%ld) + sampling.external (%ld) = %ld, but sampling.groups = %ld "
                             "(I + J must equal the groups trained on per round)",
                             k, I, J, I + J, G);
        if (I < 1) return set_error(err, errlen, "node %d: sampling.local = 0: a node must answer at least one question", k);
        if (J > 0 && n_nodes < 2)
            return set_error(err, errlen, "node %d: sampling.external = %ld but the swarm has a single node", k, J);
        if (ns->family == MODEL_FAMILY_LLAMA && llama_node_check(ns, k, err, errlen)) return -1;
        GPTConfig g = ns->model;
        long max_new = ns->gen.max_new_tokens;
        if (g.n_ctx < max_new + 16)
            return set_error(err, errlen, "node %d: model.n_ctx = %d leaves no room for prompts beside gen.max_new_tokens = %ld",
                             k, g.n_ctx, max_new);
        if (!model_backend_for(ns->backend))
            return set_error(err, errlen, "node %d: model.backend = '%s' is not available in this build or on this machine",
                             k, model_backend_choice_name(ns->backend));
        if (init_verify(ns, k, 0, err, errlen)) return -1;
    }
    return 0;
}

int node_init_verify(const NodeSettings* ns, int rank, char* err, size_t errlen) {
    return init_verify(ns, rank, 1, err, errlen);
}

ModelCapacity node_model_capacity(const SwarmSettings* sw, const NodeSettings* ns) {
    GPTConfig g = ns->model;
    int I = ns->n_local, J = ns->n_external, L = ns->n_completions, max_new = ns->gen.max_new_tokens;
    int eval_q = sw->eval_questions, micro = ns->micro_tokens;
    int eval_chunk = eval_q < 16 ? eval_q : 16;
    int prompts = I > eval_chunk ? I : eval_chunk, rows = I * L > prompts ? I * L : prompts;
    return model_capacity_for(&g, micro, I + J, L, max_new, prompts, rows);
}

double node_memory_estimate(const SwarmSettings* sw, const NodeSettings* ns) {
    GPTConfig g = ns->model;
    ModelCapacity cap = node_model_capacity(sw, ns);
    double model = model_memory_bytes(&g, &cap);
    int with_ref = sw->kl > 0;
    int I = ns->n_local, J = ns->n_external, L = ns->n_completions, max_new = ns->gen.max_new_tokens;
    int eval_q = sw->eval_questions;
    double rows = (double)(I + J) * L + eval_q, prompts = (double)I + eval_q;
    double round = 4.0 * (prompts * g.n_ctx + rows * max_new) * 3 + /* tokens, texts, messages */
                   4.0 * 8 * cap.max_tokens + 8.0 * rows * max_new;  /* trainer's per-token buffers */
    return model * (with_ref ? 2 : 1) + round + NODE_PROCESS_BYTES;
}
