/* A node's settings before it exists: the checks that would stop a run later and what a
 * node will hold (see node_config.h). */
#include "swarm/node_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "model/checkpoint.h"
#include "model/family.h"
#include "model/policy.h"
#include "swarm/evalset.h"
#include "swarm/taskset.h"

/* The process before any node buffer (libc and the loader's heap, OpenBLAS's work buffer,
 * HDF5's library state and the log's chunk caches, Open MPI's own private state, the task
 * tables and the evaluation set's questions at their default size): the smallest model's
 * RssAnon on one rank (11.4 MB: 1 layer of 32) less its other terms, rounded up (docs/SWARM.md,
 * the memory check). A CUDA build's rank also holds what the CUDA runtime and cuBLAS write
 * when they load: 82-93 MB more RssAnon on the four configs of tests/mpi/test_memory_estimate,
 * measured on a machine without a GPU (a GPU's context adds host memory this does not know). */
#ifdef SAPO_HAVE_CUDA
#define NODE_PROCESS_BYTES ((5.5 + 92.0) * 1024 * 1024)
#else
#define NODE_PROCESS_BYTES (5.5 * 1024 * 1024)
#endif
/* Open MPI's private cost per peer (its endpoint and the ob1/vader per-peer state): the
 * slope of that smallest config's RssAnon over 1, 8 and 64 ranks, ~16 KB a peer. */
#define NODE_MPI_PER_PEER_BYTES (16.0 * 1024)
/* Open MPI's shared-memory segment (the vader BTL, 4 MB a rank in /dev/shm): not private
 * (every local peer maps it), so it is counted once per rank in the host's sum only. */
#define NODE_MPI_SHARED_BYTES (4.0 * 1024 * 1024)

/* Node k's model.init (when set) against its shape; body: its payload too (checkpoint_verify). */
static int init_verify(const NodeSettings* ns, int k, int body, char* err, size_t errlen) {
    char why[512];
    if (*ns->init && checkpoint_verify(ns->init, &ns->model, body, NULL, why, sizeof why))
        return set_error(err, errlen, "node %d: model.init: %s", k, why);
    return 0;
}

/* sync.method: every node one shape (the outer step adds and averages their parameters
 * element by element), over a transport that carries the outer step. */
static int sync_config_check(const RunSettings* rs, char* err, size_t errlen) {
    const SyncSettings* s = &rs->sw.sync;
    if (s->method == SYNC_NONE) return 0;
    const char* name = s->method == SYNC_DILOCO ? "diloco" : "noloco";
    if (s->method == SYNC_NOLOCO && s->group > rs->n_nodes)
        return set_error(err, errlen, "sync.group = %d exceeds the swarm's %d nodes", s->group, rs->n_nodes);
    const ModelShape* g0 = &rs->node[0].model;
    size_t a[MODEL_MAX_TENSORS], b[MODEL_MAX_TENSORS];
    gpt_tensor_sizes(g0, a);
    int n0 = model_family(g0->family)->n_tensors;
    for (int k = 1; k < rs->n_nodes; k++) {
        const ModelShape* g = &rs->node[k].model;
        if (g->family != g0->family)
            return set_error(err, errlen,
                             "sync.method = %s averages weights, so every node must hold one model family: node 0 is "
                             "%s, node %d is %s",
                             name, model_family(g0->family)->name, k, model_family(g->family)->name);
        gpt_tensor_sizes(g, b);
        if (memcmp(a, b, sizeof(size_t) * (size_t)n0))
            return set_error(err, errlen,
                             "sync.method = %s averages weights, so every node must hold one shape: node %d's "
                             "model (n_layer %d, n_head %d, d_model %d, n_ctx %d) differs from node 0's (%d, %d, %d, %d)",
                             name, k, g->n_layer, g->n_head, g->d_model, g->n_ctx, g0->n_layer, g0->n_head, g0->d_model,
                             g0->n_ctx);
    }
    return 0;
}

/* Checkpoints with nodes of different net.slowdown on the virtual clock: a node s times slower
 * needs, in its round r, what faster peers send up to their round s(r + 1) - 1, while a
 * checkpoint waits for every node at the same round: the run would hang at the first. */
static int slowdown_checkpoint_check(const RunSettings* rs, char* err, size_t errlen) {
    const SwarmSettings* sw = &rs->sw;
    if (sw->checkpoint_every <= 0 || sw->checkpoint_every >= sw->rounds || sw->net.wall_clock ||
        sw->net.transport != NET_TRANSPORT_P2P)
        return 0;
    int slow = 0, fast = 0;
    for (int k = 1; k < rs->n_nodes; k++) {
        if (rs->node[k].slowdown > rs->node[slow].slowdown) slow = k;
        if (rs->node[k].slowdown < rs->node[fast].slowdown) fast = k;
    }
    if (rs->node[slow].slowdown == rs->node[fast].slowdown) return 0;
    return set_error(err, errlen,
                     "node %d: net.slowdown = %g beside node %d's %g needs run.checkpoint_every = 0 (or net.clock = "
                     "wall): on the virtual clock a checkpoint waits for every node at the same round, which the "
                     "slower node reaches only after the faster ones' later rounds",
                     slow, rs->node[slow].slowdown, fast, rs->node[fast].slowdown);
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
        PolicySpec spec = node_policy_spec(ns);
        char why[1024];
        if (policy_check(&spec, why, sizeof why)) return set_error(err, errlen, "node %d: %s", k, why);
        ModelShape g = ns->model;
        long max_new = ns->gen.max_new_tokens;
        if (g.n_ctx < max_new + 16)
            return set_error(err, errlen, "node %d: model.n_ctx = %d leaves no room for prompts beside gen.max_new_tokens = %ld",
                             k, g.n_ctx, max_new);
        if (!model_backend_for(ns->backend))
            return set_error(err, errlen, "node %d: model.backend = '%s' is not available in this build or on this machine",
                             k, model_backend_choice_name(ns->backend));
        if (init_verify(ns, k, 0, err, errlen)) return -1;
    }
    if (slowdown_checkpoint_check(rs, err, errlen)) return -1;
    return sync_config_check(rs, err, errlen);
}

int node_init_verify(const NodeSettings* ns, int rank, char* err, size_t errlen) {
    return init_verify(ns, rank, 1, err, errlen);
}

ModelCapacity node_model_capacity(const SwarmSettings* sw, const NodeSettings* ns) {
    ModelShape g = ns->model;
    int I = ns->n_local, J = ns->n_external, L = ns->n_completions, max_new = ns->gen.max_new_tokens;
    int eval_q = sw->eval_questions, micro = ns->micro_tokens;
    int eval_chunk = eval_q < 16 ? eval_q : 16;
    int prompts = I > eval_chunk ? I : eval_chunk, rows = I * L > prompts ? I * L : prompts;
    return model_capacity_for(&g, micro, I + J, L, max_new, prompts, rows);
}

/* Bytes of one shared group as the receiver holds it: the question, its answer and the
 * generator's JSON (at most a prompt's n_ctx bytes, twice for config and metadata), and per
 * completion its text (up to 4 bytes per token), the byte log-probs (4 per byte), the token
 * ids and their log-probs (8 per token) and the allocator's headers. */
static double group_bytes(const ModelShape* g, int completions, int max_new) {
    return 2.0 * g->n_ctx + 256 + completions * (max_new * (4.0 + 16.0 + 8.0) + 96.0);
}

/* Questions drawn to size a round's prompts (the evaluation set's first ones: a function of
 * the settings, the same on every rank). */
#define PROMPT_SAMPLE_QUESTIONS 64

/* A round's mean prompt, in tokens: for the byte-level model the mean of
 * PROMPT_SAMPLE_QUESTIONS questions of the task set (BOS and its bytes; a round's batch sums
 * its groups' prompts); with a tokenizer, or when the tasks cannot be drawn, the capacity's
 * bound n_ctx - max_new. */
static int prompt_tokens_expected(const SwarmSettings* sw, const NodeSettings* ns) {
    int bound = ns->model.n_ctx - ns->gen.max_new_tokens;
    double sum = 0;
    if (bound < 1) bound = 1;
    PolicySpec spec = node_policy_spec(ns);
    if (policy_reads_hf_dir(&spec)) return bound;
    TaskSet ts;
    EvalSet es;
    char err[512];
    if (taskset_build(&ts, sw->tasks_names, sw->tasks_preset, err, sizeof err)) return bound;
    if (evalset_build(&es, &ts, sw->eval_seed, PROMPT_SAMPLE_QUESTIONS, err, sizeof err)) {
        taskset_free(&ts);
        return bound;
    }
    for (int i = 0; i < es.n; i++) sum += 1 + (double)strlen(es.prompts[i]);
    int mean = es.n ? (int)(sum / es.n + 0.5) : bound;
    evalset_free(&es);
    taskset_free(&ts);
    return mean < bound ? mean : bound;
}

/* The part of the capacity a worst-case round writes: node_model_capacity allocates for
 * prompts of n_ctx - max_new tokens; a micro-batch of prompts of `prompt` tokens and
 * completions of max_new fills min(micro_tokens, the round's batch) tokens, and as many
 * attention weights as its groups have (prompt^2 + L x seg x (prompt + seg) per head). */
static ModelCapacity capacity_written(const ModelCapacity* cap, const NodeSettings* ns, int prompt) {
    ModelCapacity w = *cap;
    double seg = ns->gen.max_new_tokens + 1, L = ns->n_completions, groups = ns->n_local + ns->n_external;
    double group_tokens = prompt + L * seg;
    double tokens = groups * group_tokens;
    if (tokens > ns->micro_tokens) tokens = ns->micro_tokens;
    if (tokens < w.max_tokens) w.max_tokens = (int)tokens;
    double att = ns->model.n_head * (tokens / group_tokens) * ((double)prompt * prompt + L * seg * (prompt + seg));
    if (att < (double)w.max_att) w.max_att = (long)att;
    return w;
}

NodeMemoryTerms node_memory_terms(const SwarmSettings* sw, const NodeSettings* ns, int n_nodes) {
    ModelShape g = ns->model;
    ModelCapacity allocated = node_model_capacity(sw, ns);
    ModelCapacity cap = capacity_written(&allocated, ns, prompt_tokens_expected(sw, ns));
    NodeMemoryTerms t = {0};
    size_t sizes[MODEL_MAX_TENSORS];
    gpt_tensor_sizes(&g, sizes);
    double P = 0;
    for (int i = 0; i < model_family(g.family)->n_tensors; i++) P += (double)sizes[i];
    t.policy = model_memory_bytes(&g, &cap);
    /* the reference model scores the training batch only: it never generates (no KV caches
     * or decode rows) and never steps (its gradient and Adam moments, calloc'd, stay unmapped) */
    ModelCapacity scoring = cap;
    scoring.max_prefixes = scoring.max_rows = 0;
    t.reference = sw->kl > 0 ? model_memory_bytes(&g, &scoring) - 12.0 * P : 0;
    int I = ns->n_local, J = ns->n_external, L = ns->n_completions, max_new = ns->gen.max_new_tokens;
    int eval_q = sw->eval_questions;
    double rows = (double)(I + J) * L + eval_q, prompts = (double)I + eval_q;
    t.round = 4.0 * (prompts * g.n_ctx + rows * max_new) * 3 + /* tokens, texts, messages */
              4.0 * 8 * cap.max_tokens + 8.0 * rows * max_new;  /* trainer's per-token buffers */
    int peers = n_nodes - 1;
    int fanout = sw->net.transport == NET_TRANSPORT_P2P ? sw->net.fanout : 0; /* allgather: from everyone */
    int senders = fanout > 0 && fanout < peers ? fanout : peers;
    /* a round's inbox: each sender's I groups, encoded as received and decoded into the pool */
    t.peers = peers * NODE_MPI_PER_PEER_BYTES + 2.0 * senders * I * group_bytes(&g, L, max_new);
    t.process = NODE_PROCESS_BYTES;
    t.shared = n_nodes > 1 ? NODE_MPI_SHARED_BYTES : 0;
    t.sync = weight_sync_memory_bytes(&sw->sync, P);
    if (sw->net.transport == NET_TRANSPORT_P2P) /* p2p: a sent weight message and one kept per sender */
        t.sync += 4.0 * (1 + senders) * (double)weight_sync_payload(&sw->sync, (size_t)P);
    t.private_total = t.policy + t.reference + t.round + t.peers + t.sync + t.process;
    return t;
}

double node_memory_estimate(const SwarmSettings* sw, const NodeSettings* ns, int n_nodes) {
    NodeMemoryTerms t = node_memory_terms(sw, ns, n_nodes);
    return t.private_total + t.shared;
}
