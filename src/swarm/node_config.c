/* A node's settings before it exists: the checks that would stop a run later
 * (swarm_config_check, node_init_verify) and what a node will hold (node_model_capacity,
 * node_memory_estimate). Declared in node.h. */
#include <string.h>

#include "core/check.h"
#include "model/checkpoint.h"
#include "model/model_from_config.h"
#include "swarm/node.h"

/* What a rank holds beyond the node's own buffers (MPI's shared-memory segments, HDF5,
 * OpenBLAS's work buffer, libc): a quick.ini rank's private memory is about 45 MB in all,
 * of which about 25 MB is the node's touched activations and caches. */
#define NODE_PROCESS_BYTES (24.0 * 1024 * 1024)

/* Node k's model.init (when set) against its shape; body: its payload too (checkpoint_verify). */
static int init_verify(const Config* cfg, int k, int body, char* err, size_t errlen) {
    const char* init = config_node_string(cfg, k, "model.init");
    GPTConfig g = gpt_config_from(cfg, k);
    char why[512];
    if (*init && checkpoint_verify(init, &g, body, NULL, why, sizeof why))
        return set_error(err, errlen, "node %d: model.init: %s", k, why);
    return 0;
}

int swarm_config_check(const Config* cfg, int n_nodes, char* err, size_t errlen) {
    TaskSet ts;
    if (taskset_build(&ts, config_string(cfg, "tasks.names"), config_string(cfg, "tasks.preset"), err, errlen)) return -1;
    taskset_free(&ts);
    if (config_max_node(cfg) >= n_nodes)
        return set_error(err, errlen, "[node.%d] is set but the swarm has %d nodes (0..%d)", config_max_node(cfg),
                         n_nodes, n_nodes - 1);
    if (config_float(cfg, "grpo.kl") > 0 && config_int(cfg, "grpo.ppo_epochs") < 1)
        return set_error(err, errlen, "grpo.ppo_epochs must be >= 1");
    for (int k = 0; k < n_nodes; k++) {
        long I = config_node_int(cfg, k, "sampling.local"), J = config_node_int(cfg, k, "sampling.external");
        long G = config_node_int(cfg, k, "sampling.groups");
        if (I + J != G)
            return set_error(err, errlen,
                             "node %d: sampling.local (%ld) + sampling.external (%ld) = %ld, but sampling.groups = %ld "
                             "(I + J must equal the groups trained on per round)",
                             k, I, J, I + J, G);
        if (I < 1) return set_error(err, errlen, "node %d: sampling.local = 0: a node must answer at least one question", k);
        if (J > 0 && n_nodes < 2)
            return set_error(err, errlen, "node %d: sampling.external = %ld but the swarm has a single node", k, J);
        GPTConfig g = gpt_config_from(cfg, k);
        long max_new = config_node_int(cfg, k, "gen.max_new_tokens");
        if (g.n_ctx < max_new + 16)
            return set_error(err, errlen, "node %d: model.n_ctx = %d leaves no room for prompts beside gen.max_new_tokens = %ld",
                             k, g.n_ctx, max_new);
        const char* backend = config_node_string(cfg, k, "model.backend");
        if (!model_backend_find(backend))
            return set_error(err, errlen, "node %d: model.backend = '%s' is not available in this build or on this machine",
                             k, backend);
        if (init_verify(cfg, k, 0, err, errlen)) return -1;
    }
    return 0;
}

int node_init_verify(const Config* cfg, int rank, char* err, size_t errlen) { return init_verify(cfg, rank, 1, err, errlen); }

ModelCapacity node_model_capacity(const Config* cfg, int rank) {
    GPTConfig g = gpt_config_from(cfg, rank);
    int I = (int)config_node_int(cfg, rank, "sampling.local"), J = (int)config_node_int(cfg, rank, "sampling.external");
    int L = (int)config_node_int(cfg, rank, "grpo.completions");
    int max_new = (int)config_node_int(cfg, rank, "gen.max_new_tokens");
    int eval_q = (int)config_int(cfg, "run.eval_questions"), micro = (int)config_node_int(cfg, rank, "model.micro_tokens");
    int eval_chunk = eval_q < 16 ? eval_q : 16;
    int prompts = I > eval_chunk ? I : eval_chunk, rows = I * L > prompts ? I * L : prompts;
    return model_capacity_for(&g, micro, I + J, L, max_new, prompts, rows);
}

double node_memory_estimate(const Config* cfg, int rank) {
    GPTConfig g = gpt_config_from(cfg, rank);
    ModelCapacity cap = node_model_capacity(cfg, rank);
    double model = model_memory_bytes(&g, &cap);
    int with_ref = config_float(cfg, "grpo.kl") > 0;
    int I = (int)config_node_int(cfg, rank, "sampling.local"), J = (int)config_node_int(cfg, rank, "sampling.external");
    int L = (int)config_node_int(cfg, rank, "grpo.completions");
    int max_new = (int)config_node_int(cfg, rank, "gen.max_new_tokens");
    int eval_q = (int)config_int(cfg, "run.eval_questions");
    double rows = (double)(I + J) * L + eval_q, prompts = (double)I + eval_q;
    double round = 4.0 * (prompts * g.n_ctx + rows * max_new) * 3 + /* tokens, texts, messages */
                   4.0 * 8 * cap.max_tokens + 8.0 * rows * max_new;  /* trainer's per-token buffers */
    return model * (with_ref ? 2 : 1) + round + NODE_PROCESS_BYTES;
}
