/* One swarm node and its SAPO round (see node.h). */
#include "swarm/node.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench/bench_timer.h"
#include "core/check.h"
#include "core/rng.h"
#include "model/checkpoint.h"
#include "model/model_from_config.h"
#include "model/tokenizer.h"
#include "swarm/evaluation.h"
#include "swarm/exchange.h"
#include "swarm/group_verify.h"
#include "swarm/message.h"
#include "tasks/answer.h"
#ifdef SAPO_HAVE_CUDA
#include "cuda_backend.h"
#endif
#ifdef SAPO_HAVE_NCCL
#include "nccl_allgather.h"
#endif

/* What a rank holds beyond the node's own buffers (MPI's shared-memory segments, HDF5,
 * OpenBLAS's work buffer, libc): a quick.ini rank's private memory is about 45 MB in all,
 * of which about 25 MB is the node's touched activations and caches. */
#define NODE_PROCESS_BYTES (24.0 * 1024 * 1024)

static NodeFault parse_fault(const char* s) {
    if (!strcmp(s, "garbage")) return FAULT_GARBAGE;
    if (!strcmp(s, "truncate")) return FAULT_TRUNCATE;
    if (!strcmp(s, "lie")) return FAULT_LIE;
    if (!strcmp(s, "lie_logprobs")) return FAULT_LIE_LOGPROBS;
    return FAULT_NONE;
}

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

SwarmNode* node_create(const Config* cfg, int rank, int n_nodes, MPI_Comm comm, char* err, size_t errlen) {
    SwarmNode* n = callocCheck(1, sizeof *n);
    n->rank = rank;
    n->n_nodes = n_nodes;
    n->comm = comm;
    n->seed = (uint64_t)config_int(cfg, "swarm.seed");
    n->n_local = (int)config_node_int(cfg, rank, "sampling.local");
    n->n_external = (int)config_node_int(cfg, rank, "sampling.external");
    n->n_completions = (int)config_node_int(cfg, rank, "grpo.completions");
    n->filter_zero_adv = !strcmp(config_string(cfg, "sampling.filter"), "zero_adv");
    n->eval_every = (int)config_int(cfg, "run.eval_every");
    n->eval_questions = (int)config_int(cfg, "run.eval_questions");
    n->fault = parse_fault(config_node_string(cfg, rank, "net.fault"));
    n->grad_clip = (float)config_node_float(cfg, rank, "optim.grad_clip");
    n->adamw = adamw_config_from(cfg, rank);
    n->gen = gen_config_from(cfg, rank);
    const char* ext = config_node_string(cfg, rank, "grpo.external");
    n->external = !strcmp(ext, "tis") ? EXTERNAL_TIS : !strcmp(ext, "positive_only") ? EXTERNAL_POSITIVE_ONLY : EXTERNAL_RATIO1;
    float temperature = n->gen.sampler.temperature;
    int at_gen_temperature = !strcmp(config_string(cfg, "grpo.train_temperature"), "gen") && temperature > 0.0f;
    n->grpo = (GrpoConfig){.eps_low = (float)config_float(cfg, "grpo.eps_low"),
                           .eps_high = (float)config_float(cfg, "grpo.eps_high"),
                           .kl = (float)config_float(cfg, "grpo.kl"),
                           .ppo_epochs = (int)config_int(cfg, "grpo.ppo_epochs"),
                           .tis_cap = n->external == EXTERNAL_TIS ? (float)config_float(cfg, "grpo.tis_cap") : 0.0f,
                           .logit_scale = at_gen_temperature ? 1.0f / temperature : 1.0f,
                           .warmup_steps = (int)config_int(cfg, "optim.warmup_steps")};
    n->gen.stop = COMPLETION_STOP;
    snprintf(n->dump_dir, sizeof n->dump_dir, "%s", config_string(cfg, "run.dump_messages"));
    if (n->dump_dir[0]) mkdir(n->dump_dir, 0777); /* every rank tries; one creates it */
    if (taskset_build(&n->tasks, config_string(cfg, "tasks.names"), config_string(cfg, "tasks.preset"), err, errlen)) {
        free(n);
        return NULL;
    }
    /* the same on every rank (a pure function of the config), so it fails on all or none */
    if (evalset_build(&n->eval, &n->tasks, (uint64_t)config_int(cfg, "run.eval_seed"), n->eval_questions, err, errlen)) {
        taskset_free(&n->tasks);
        free(n);
        return NULL;
    }
    /* Collective steps first, before anything that could fail on one rank alone. */
#ifdef SAPO_HAVE_CUDA
    { /* the GPU of a CUDA node is its rank among this machine's ranks, modulo the GPUs */
        MPI_Comm local;
        int local_rank, local_size;
        mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
        mpiCheck(MPI_Comm_rank(local, &local_rank));
        mpiCheck(MPI_Comm_size(local, &local_size));
        mpiCheck(MPI_Comm_free(&local));
        cuda_set_local_rank(local_rank, local_size);
    }
#endif
    n->use_p2p = !strcmp(config_string(cfg, "net.transport"), "p2p");
    if (!n->use_p2p) {
#ifdef SAPO_HAVE_NCCL
        char why[160];
        n->nccl = nccl_exchange_create(comm, why, sizeof why);
        snprintf(n->exchange_info, sizeof n->exchange_info, "all-gather over %s (%s)", n->nccl ? "NCCL" : "MPI", why);
#else
        snprintf(n->exchange_info, sizeof n->exchange_info, "all-gather over MPI (this build has no NCCL)");
#endif
    } else {
        snprintf(n->exchange_info, sizeof n->exchange_info, "p2p over MPI");
    }
    GPTConfig g = gpt_config_from(cfg, rank);
    const ModelBackend* backend = model_backend_find(config_node_string(cfg, rank, "model.backend"));
    uint64_t init_seed = (uint64_t)config_int(cfg, "model.init_seed");
    n->cap = node_model_capacity(cfg, rank);
    n->max_prompts = n->n_local > n->eval_questions ? n->n_local : n->eval_questions;
    if (n->max_prompts < 1) n->max_prompts = 1;
    n->max_rows = n->n_local * n->n_completions > n->eval_questions ? n->n_local * n->n_completions : n->eval_questions;
    n->policy = model_create_cap(&g, backend, &n->cap, init_seed);
    const char* init = config_node_string(cfg, rank, "model.init");
    if (*init && checkpoint_load(n->policy, init, 0, err, errlen)) {
        node_free(n);
        return NULL;
    }
    if (n->grpo.kl > 0.0f) {
        n->ref = model_create_cap(&g, backend, &n->cap, init_seed);
        if (*init && checkpoint_load(n->ref, init, 0, err, errlen)) {
            node_free(n);
            return NULL;
        }
    }
    n->trainer = grpo_trainer_create(n->policy, n->ref);
    n->netem = netem_create(cfg, n_nodes);
    n->slowdown = n->netem->slowdown[rank];
    if (n->use_p2p) n->p2p = p2p_create(comm, n->netem, rank);
    n->prompt_tokens = mallocCheck(sizeof(int) * n->max_prompts * g.n_ctx);
    n->prompt_lens = mallocCheck(sizeof(int) * n->max_prompts);
    n->out_tokens = mallocCheck(sizeof(int) * n->max_rows * n->gen.max_new_tokens);
    n->out_lens = mallocCheck(sizeof(int) * n->max_rows);
    n->out_logprobs = mallocCheck(sizeof(float) * n->max_rows * n->gen.max_new_tokens);
    return n;
}

void node_free(SwarmNode* n) {
    if (!n) return;
#ifdef SAPO_HAVE_NCCL
    nccl_exchange_free(n->nccl);
#endif
    p2p_free(n->p2p);
    netem_free(n->netem);
    grpo_trainer_free(n->trainer);
    model_free(n->policy);
    model_free(n->ref);
    evalset_free(&n->eval);
    taskset_free(&n->tasks);
    pool_free(&n->pool);
    free(n->prompt_tokens);
    free(n->prompt_lens);
    free(n->out_tokens);
    free(n->out_lens);
    free(n->out_logprobs);
    free(n);
}

void node_finish(SwarmNode* n, int end_round) {
    if (n->p2p) p2p_drain(n->p2p, end_round);
}

/* The sampler's log-probs of the bytes of a decoded completion, one per byte of its text:
 * tokens that tok_decode drops (EOS, special tokens) are skipped, and the text ends at a NUL.
 * NULL (none shipped) when one is not finite: a diverged model's NaN logits. */
static float* text_logprobs(const int* tokens, const float* logprobs, int n, size_t text_len) {
    float* out = mallocCheck((text_len ? text_len : 1) * sizeof(float));
    size_t k = 0;
    for (int i = 0; i < n && k < text_len; i++)
        if (tokens[i] > 0 && tokens[i] < 256) {
            if (!isfinite(logprobs[i]) || logprobs[i] > 0.0f) {
                free(out);
                return NULL;
            }
            out[k++] = logprobs[i];
        }
    return out;
}

/* Generates L completions for each of n_prompts prompts (row p*L + c answers prompts[p]),
 * the prompt computed once for its L rows; writes the decoded texts (heap) into texts and,
 * when lps is not NULL, each text's behaviour log-probs (heap, one per byte) into lps. */
static void generate_texts(SwarmNode* n, char* const* prompts, int n_prompts, int L, RngStream* rng, char** texts,
                           float** lps) {
    int n_ctx = n->policy->cfg.n_ctx, max_prompt = n_ctx - n->gen.max_new_tokens, max_new = n->gen.max_new_tokens;
    for (int p = 0; p < n_prompts; p++)
        n->prompt_lens[p] = tok_encode_prompt(prompts[p], n->prompt_tokens + (size_t)p * n_ctx, max_prompt);
    model_generate_groups_logprobs(n->policy, n->prompt_tokens, n_ctx, n->prompt_lens, n_prompts, L, &n->gen, rng,
                                   n->out_tokens, n->out_lens, n->out_logprobs);
    for (int r = 0; r < n_prompts * L; r++) {
        const int* toks = n->out_tokens + (size_t)r * max_new;
        texts[r] = tok_decode(toks, n->out_lens[r]);
        if (lps) lps[r] = text_logprobs(toks, n->out_logprobs + (size_t)r * max_new, n->out_lens[r], strlen(texts[r]));
    }
}

/* pass@1 on the fixed held-out set: one answer per question, sampled with the node's gen
 * settings from the (seed, rank, round, RNG_EVAL) stream; overall and per task into rec. */
static void node_evaluate(SwarmNode* n, int round, RoundRecord* rec) {
    RngStream rng = rng_stream(n->seed, (uint32_t)n->rank, (uint32_t)round, RNG_EVAL);
    rec->m[RM_EVAL_PASS1] = evaluation_run(n->policy, &n->gen, &n->eval, &rng, rec->eval_by_task, NULL);
}

/* Corrupts an encoded message as net.fault asks (garbage and truncate act on the bytes). */
static void apply_byte_fault(SwarmNode* n, int round, uint8_t* buf, size_t* len) {
    if (n->fault == FAULT_GARBAGE) {
        RngStream rng = rng_stream(n->seed, (uint32_t)n->rank, (uint32_t)round, RNG_NETEM);
        for (size_t i = 0; i < *len; i++) buf[i] = (uint8_t)rng_u32(&rng);
    } else if (n->fault == FAULT_TRUNCATE) {
        *len /= 2;
    }
}

void node_round(SwarmNode* n, int round, RoundRecord* rec) {
    round_record_clear(rec, round);
    int I = n->n_local, L = n->n_completions, rows = I * L; /* the paper's names */
    int n_ctx = n->policy->cfg.n_ctx;
    char err[512];
    double t0 = bench_now();

    /* ---- ask and answer: I questions, L completions each, scored by our verifiers ---- */
    RngStream qrng = rng_stream(n->seed, (uint32_t)n->rank, (uint32_t)round, RNG_QUESTIONS);
    Question* qs = callocCheck(I, sizeof *qs);
    char** prompts = mallocCheck(sizeof(char*) * I);
    char** texts = mallocCheck(sizeof(char*) * rows);
    float** text_lps = mallocCheck(sizeof(float*) * rows);
    float* rewards = mallocCheck(sizeof(float) * rows);
    for (int i = 0; i < I; i++) {
        if (question_draw(&n->tasks, &qrng, &qs[i], err, sizeof err)) sapo_die("question: %s", err);
        prompts[i] = qs[i].prompt;
    }
    RngStream grng = rng_stream(n->seed, (uint32_t)n->rank, (uint32_t)round, RNG_GENERATE);
    generate_texts(n, prompts, I, L, &grng, texts, text_lps);
    double by_task_sum[TASK_N_IDS] = {0}, own_sum = 0.0, formatted = 0.0, length = 0.0;
    int by_task_n[TASK_N_IDS] = {0};
    for (int r = 0; r < rows; r++) {
        const Question* q = &qs[r / L];
        rewards[r] = (float)task_reward(q->slot->spec, texts[r], q->entry);
        own_sum += rewards[r];
        by_task_sum[q->slot->task_id] += rewards[r];
        by_task_n[q->slot->task_id]++;
        char* extracted = answer_extract(texts[r]);
        formatted += extracted != NULL;
        free(extracted);
        length += strlen(texts[r]);
    }
    rec->m[RM_REWARD_OWN] = own_sum / rows;
    rec->m[RM_FORMAT_RATE] = formatted / rows;
    rec->m[RM_COMPLETION_LEN] = length / rows;
    for (int t = 0; t < TASK_N_IDS; t++)
        if (by_task_n[t]) rec->reward_by_task[t] = by_task_sum[t] / by_task_n[t];
    double t1 = bench_now();
    rec->m[RM_T_GENERATE] = t1 - t0;

    /* ---- share every group, receive and verify the peers' ---- */
    SwarmMessage msg = {.sender = n->rank, .round = round, .n_groups = I};
    msg.groups = callocCheck(I, sizeof(RolloutGroup));
    for (int i = 0; i < I; i++) {
        RolloutGroup* g = &msg.groups[i];
        const cJSON* a = cJSON_GetObjectItem(qs[i].entry, "answer");
        g->task_id = qs[i].slot->task_id;
        g->seed = qs[i].seed;
        g->index = qs[i].index;
        g->config_json = qs[i].slot->config_json;
        g->question = cJSON_GetObjectItem(qs[i].entry, "question")->valuestring;
        g->answer = cJSON_IsString(a) ? a->valuestring : NULL;
        g->metadata_json = cJSON_PrintUnformatted(cJSON_GetObjectItem(qs[i].entry, "metadata"));
        g->n_completions = L;
        g->completions = texts + (size_t)i * L;
        g->logprobs = text_lps + (size_t)i * L;
        if (n->fault == FAULT_LIE) g->answer = "a lie about the ground truth";
        if (n->fault == FAULT_LIE_LOGPROBS) /* claims every byte was nearly impossible */
            for (int c = 0; c < L; c++)
                for (size_t k = 0; g->logprobs[c] && k < strlen(g->completions[c]); k++) g->logprobs[c][k] = -1e30f;
    }
    uint8_t* buf = NULL;
    size_t len = 0;
    if (message_encode(&msg, &buf, &len, err, sizeof err)) sapo_die("encoding this round's message: %s", err);
    for (int i = 0; i < I; i++) free(msg.groups[i].metadata_json);
    free(msg.groups); /* the strings it pointed at belong to qs and texts */
    apply_byte_fault(n, round, buf, &len);
    if (n->dump_dir[0]) { /* what was sent, for `sapo verify` */
        char path[640];
        snprintf(path, sizeof path, "%s/node_%04d.r%07d.msg", n->dump_dir, n->rank, round);
        FILE* f = fopen(path, "wb");
        if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) sapo_die("cannot write %s", path);
    }
    Inbox inbox;
    int online = !netem_offline(n->netem, n->rank, round);
    rec->m[RM_ONLINE] = online;
    if (n->use_p2p) {
        P2PSendStats ss = p2p_send(n->p2p, round, buf, len);
        rec->m[RM_MSGS_SENT] = ss.sent;
        rec->m[RM_MSGS_DROPPED] = ss.dropped;
        rec->m[RM_BYTES_SENT] = ss.bytes_sent;
        int late = 0;
        p2p_receive(n->p2p, round, &inbox, &late);
        rec->m[RM_MSGS_LATE] = late;
    } else { /* the paper's exchange: every node gets every message, netem does not apply */
#ifdef SAPO_HAVE_NCCL
        if (n->nccl) exchange_allgather_nccl(n->nccl, n->comm, buf, len, &inbox);
        else
#endif
            exchange_allgather(n->comm, buf, len, &inbox);
        rec->m[RM_MSGS_SENT] = n->n_nodes - 1;
        rec->m[RM_BYTES_SENT] = (double)len * (n->n_nodes - 1);
    }
    rec->m[RM_T_WAIT] = inbox.t_wait;
    free(buf);
    float* ext_rewards = mallocCheck(sizeof(float) * MESSAGE_MAX_COMPLETIONS);
    for (int k = 0; k < inbox.n; k++) {
        rec->m[RM_MSGS_RECEIVED]++;
        rec->m[RM_BYTES_RECEIVED] += (double)inbox.lens[k];
        SwarmMessage in;
        int bad = message_decode(inbox.bufs[k], inbox.lens[k], &in, err, sizeof err) != 0;
        if (!bad && in.sender != inbox.senders[k]) { /* a message claiming another sender */
            message_free(&in);
            bad = 1;
        }
        if (bad) {
            rec->m[RM_MSGS_REJECTED]++;
            continue;
        }
        for (int gi = 0; gi < in.n_groups; gi++) {
            RolloutGroup* g = &in.groups[gi];
            if (group_verify(g, MESSAGE_MAX_COMPLETIONS, ext_rewards, NULL, 0) != GROUP_OK) {
                rec->m[RM_GROUPS_REJECTED]++;
                continue;
            }
            /* A peer with a larger L (heterogeneous swarm): keep our L of its completions,
             * so the batch and the advantages look like our own groups. */
            while (g->n_completions > L) {
                g->n_completions--;
                free(g->completions[g->n_completions]);
                if (g->logprobs) free(g->logprobs[g->n_completions]);
            }
            pool_add(&n->pool, g, ext_rewards, in.sender, in.round);
        }
        message_free(&in);
    }
    inbox_free(&inbox);
    free(ext_rewards);
    rec->m[RM_POOL_SIZE] = n->pool.n;
    rec->m[RM_POOL_ELIGIBLE] = pool_eligible(&n->pool, n->filter_zero_adv);
    double t2 = bench_now();
    double inbox_wait = rec->m[RM_T_WAIT];
    rec->m[RM_T_EXCHANGE] = t2 - t1 - inbox_wait;

    /* ---- the training batch: I own groups + up to J drawn from the filtered pool ---- */
    int* chosen = mallocCheck(sizeof(int) * (n->n_external > 0 ? n->n_external : 1));
    RngStream prng = rng_stream(n->seed, (uint32_t)n->rank, (uint32_t)round, RNG_POOL);
    int used = n->n_external > 0 ? pool_draw(&n->pool, n->n_external, n->filter_zero_adv, &prng, chosen) : 0;
    rec->m[RM_EXTERNAL_USED] = used;
    rec->m[RM_SHORTFALL] = n->n_external - used;
    int n_samples = rows, n_groups = I + used, width = L;
    for (int e = 0; e < used; e++) {
        int c = n->pool.items[chosen[e]].group.n_completions;
        n_samples += c;
        if (c > width) width = c;
    }
    GrpoGroup* groups = mallocCheck(sizeof(GrpoGroup) * n_groups);
    char** ext_prompts = mallocCheck(sizeof(char*) * (used > 0 ? used : 1));
    float* adv = mallocCheck(sizeof(float) * (size_t)n_groups * width);
    double train_sum = own_sum;
    for (int i = 0; i < I; i++) {
        float* a = adv + (size_t)i * width;
        grpo_advantages(rewards + i * L, L, a);
        groups[i] = (GrpoGroup){.prompt = prompt_tail(qs[i].prompt, n_ctx, n->gen.max_new_tokens),
                                .n = L,
                                .completions = (const char* const*)texts + (size_t)i * L,
                                .weights = a};
    }
    for (int e = 0; e < used; e++) {
        const PoolGroup* pg = &n->pool.items[chosen[e]];
        rec->m[RM_EXTERNAL_FLAT] += pg->all_equal;
        double age = round - pg->sent_round;
        if (!(age >= rec->m[RM_EXTERNAL_AGE_MIN])) rec->m[RM_EXTERNAL_AGE_MIN] = age; /* NaN compares false */
        if (!(age <= rec->m[RM_EXTERNAL_AGE_MAX])) rec->m[RM_EXTERNAL_AGE_MAX] = age;
        ext_prompts[e] = question_prompt(pg->group.question);
        float* a = adv + (size_t)(I + e) * width;
        grpo_advantages(pg->rewards, pg->group.n_completions, a);
        if (n->external == EXTERNAL_POSITIVE_ONLY) /* imitate the peers' better answers only */
            for (int c = 0; c < pg->group.n_completions; c++) a[c] = a[c] > 0.0f ? a[c] : 0.0f;
        groups[I + e] = (GrpoGroup){.prompt = prompt_tail(ext_prompts[e], n_ctx, n->gen.max_new_tokens),
                                    .n = pg->group.n_completions,
                                    .completions = (const char* const*)pg->group.completions,
                                    .weights = a,
                                    .behaviour = n->external == EXTERNAL_TIS
                                                     ? (const float* const*)pg->group.logprobs
                                                     : NULL};
        for (int c = 0; c < pg->group.n_completions; c++) train_sum += pg->rewards[c];
    }
    rec->m[RM_REWARD_TRAIN] = train_sum / n_samples;
    rec->m[RM_TRAIN_ROWS] = n_samples;
    GrpoStats st = grpo_train(n->trainer, groups, n_groups, &n->grpo, &n->adamw, n->grad_clip,
                              (long)round * n->grpo.ppo_epochs);
    rec->m[RM_OFFPOLICY_WEIGHT] = st.is_weight;
    rec->m[RM_OFFPOLICY_CAPPED] = st.is_capped;
    rec->m[RM_LOSS] = st.loss;
    rec->m[RM_GRAD_NORM] = st.grad_norm;
    rec->m[RM_KL] = st.kl;
    rec->m[RM_TRAIN_TOKENS] = st.tokens;
    double t3 = bench_now();
    rec->m[RM_T_TRAIN] = t3 - t2;
    if (n->netem->wall_clock && n->slowdown > 1.0) { /* a real straggler: stretch the round */
        double work = t3 - t0 - inbox_wait;
        struct timespec ts = {0};
        double extra = (n->slowdown - 1.0) * (work > 0 ? work : 0);
        ts.tv_sec = (time_t)extra;
        ts.tv_nsec = (long)((extra - (double)ts.tv_sec) * 1e9);
        nanosleep(&ts, NULL);
    }

    /* ---- evaluation on the fixed held-out set ---- */
    if (n->eval_every > 0 && n->eval_questions > 0 && (round + 1) % n->eval_every == 0) {
        node_evaluate(n, round, rec);
        rec->m[RM_T_EVAL] = bench_now() - t3;
    }

    rec->m[RM_T_ROUND] = bench_now() - t0;
    for (int e = 0; e < used; e++) free(ext_prompts[e]);
    free(ext_prompts);
    free(groups);
    free(adv);
    free(chosen);
    pool_clear(&n->pool);
    for (int r = 0; r < rows; r++) {
        free(texts[r]);
        free(text_lps[r]);
    }
    free(text_lps);
    for (int i = 0; i < I; i++) question_free(&qs[i]);
    free(qs);
    free(prompts);
    free(texts);
    free(rewards);
}
