/* One swarm node and its SAPO round (see node.h): node_round runs the round as a
 * sequence of stages over one RoundState, each a function below in the order it runs:
 * ask, generate and score, share, collect and verify, select, train, sync (sync.method), evaluate. */
#include "swarm/node.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/clock.h"
#include "core/check.h"
#include "core/mem_usage.h"
#include "core/rng.h"
#include "model/policy.h"
#include "model/tokenizer.h"
#include "swarm/evaluation.h"
#include "swarm/group_verify.h"
#include "swarm/net/message.h"
#include "swarm/node_config.h"
#include "swarm/node_gpu.h"
#include "swarm/sync_exchange.h"
#include "swarm/token_groups.h"
#include "tasks/infra/answer.h"

/* Whether any node of the swarm draws external groups (sampling.external > 0): if none does and
 * weights are synchronised, rollouts have no reader and the swarm shares weights alone. */
static int swarm_draws_external(const RunSettings* rs) {
    for (int k = 0; k < rs->n_nodes; k++)
        if (rs->node[k].n_external > 0) return 1;
    return 0;
}

SwarmNode* node_create(const RunSettings* rs, int rank, MPI_Comm comm, char* err, size_t errlen) {
    SwarmNode* n = callocCheck(1, sizeof *n);
    n->rank = rank;
    n->n_nodes = rs->n_nodes;
    n->comm = comm;
    n->sw = rs->sw;
    n->set = rs->node[rank];
    n->set.gen.stop = COMPLETION_STOP;
    snprintf(n->dump_dir, sizeof n->dump_dir, "%s", n->sw.dump_messages);
    if (n->dump_dir[0]) mkdir(n->dump_dir, 0777); /* every rank tries; one creates it */
    if (taskset_build(&n->tasks, n->sw.tasks_names, n->sw.tasks_preset, err, errlen)) {
        free(n);
        return NULL;
    }
    /* the same on every rank (a pure function of the config), so it fails on all or none */
    if (evalset_build(&n->eval, &n->tasks, n->sw.eval_seed, n->sw.eval_questions, err, errlen)) {
        taskset_free(&n->tasks);
        free(n);
        return NULL;
    }
    /* Collective steps first, before anything that could fail on one rank alone. */
    node_gpu_choose(comm, rank);
    n->netem = run_settings_netem(rs);
    n->slowdown = n->netem->slowdown[rank];
#ifdef SAPO_HAVE_NCCL
    TransportNcclOpen nccl_open = node_gpu_nccl_open; /* NCCL on the GPU node_gpu_choose gave this rank */
#else
    TransportNcclOpen nccl_open = NULL;
#endif
    n->transport = transport_select(n->sw.net.transport, comm, n->netem, rank, nccl_open, n->exchange_info,
                                    sizeof n->exchange_info);
    if (n->sw.sync.method != SYNC_NONE && transport_p2p(n->transport))
        n->sync_p2p = sync_p2p_create(comm, n->netem, rank, &n->sw.sync, transport_p2p(n->transport));
    n->ship_rollouts = n->sw.sync.method == SYNC_NONE || swarm_draws_external(rs);
    ModelShape g = n->set.model;
    const ModelBackend* backend = model_backend_for(n->set.backend);
    uint64_t init_seed = n->sw.init_seed;
    n->cap = node_model_capacity(&n->sw, &rs->node[rank]);
    int I = n->set.n_local, rows = n->set.n_local * n->set.n_completions, eval_questions = n->sw.eval_questions;
    n->max_prompts = I > eval_questions ? I : eval_questions;
    if (n->max_prompts < 1) n->max_prompts = 1;
    n->max_rows = rows > eval_questions ? rows : eval_questions;
    PolicySpec spec = node_policy_spec(&n->set);
    Policy opened;
    if (policy_open(&opened, &spec, backend, &n->cap, init_seed, err, errlen)) {
        node_free(n);
        return NULL;
    }
    n->policy = opened.model;
    n->tok = opened.tokenizer;
    n->codec = opened.codec;
    if (n->set.grpo.kl > 0.0f) { /* the frozen initial policy; the policy's tokenizer serves both */
        if (policy_open(&opened, &spec, backend, &n->cap, init_seed, err, errlen)) {
            node_free(n);
            return NULL;
        }
        n->ref = opened.model;
        opened.model = NULL;
        policy_close(&opened);
    }
    /* answers end at the chat's end of turn, and at </answer> in the decoded text */
    policy_generation_stops(&n->codec, &n->set.gen);
    n->trainer = grpo_trainer_create(n->policy, n->ref);
    n->sync = weight_sync_create(&n->sw.sync, n->policy->params_memory, n->policy->num_params);
    n->prompt_tokens = mallocCheck(sizeof(int) * n->max_prompts * g.n_ctx);
    n->prompt_lens = mallocCheck(sizeof(int) * n->max_prompts);
    n->out_tokens = mallocCheck(sizeof(int) * n->max_rows * n->set.gen.max_new_tokens);
    n->out_lens = mallocCheck(sizeof(int) * n->max_rows);
    n->own_rows = mallocCheck(sizeof(int*) * n->max_rows);
    n->out_logprobs = mallocCheck(sizeof(float) * n->max_rows * n->set.gen.max_new_tokens);
    mem_private_sample(); /* the peak private memory (sapo run's summary), here and after each stage */
    return n;
}

void node_free(SwarmNode* n) {
    if (!n) return;
    sync_p2p_free(n->sync_p2p); /* before the transport whose link it shares, and netem */
    transport_free(n->transport);
    netem_free(n->netem);
    weight_sync_free(n->sync);
    grpo_trainer_free(n->trainer);
    model_free(n->policy);
    model_free(n->ref);
    if (n->tok) tokenizer_free(n->tok);
    evalset_free(&n->eval);
    taskset_free(&n->tasks);
    pool_free(&n->pool);
    free(n->prompt_tokens);
    free(n->prompt_lens);
    free(n->out_tokens);
    free(n->out_lens);
    free(n->own_rows);
    free(n->out_logprobs);
    free(n);
}

void node_finish(SwarmNode* n, int end_round) {
    transport_finish(n->transport, end_round);
    if (n->sync_p2p) sync_p2p_finish(n->sync_p2p, end_round);
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
    int n_ctx = n->policy->cfg.n_ctx, max_new = n->set.gen.max_new_tokens, max_prompt = n_ctx - max_new;
    for (int p = 0; p < n_prompts; p++)
        n->prompt_lens[p] = prompt_codec_encode(&n->codec, prompts[p], n->prompt_tokens + (size_t)p * n_ctx, max_prompt);
    model_generate_groups_logprobs(n->policy, n->prompt_tokens, n_ctx, n->prompt_lens, n_prompts, L, &n->set.gen, rng,
                                   n->out_tokens, n->out_lens, n->out_logprobs);
    for (int r = 0; r < n_prompts * L; r++) {
        const int* toks = n->out_tokens + (size_t)r * max_new;
        texts[r] = prompt_codec_text(&n->codec, toks, n->out_lens[r]);
        /* per-byte log-probs exist only where a token is a byte; a BPE node's travel per token */
        if (lps) lps[r] = n->tok ? NULL
                                 : text_logprobs(toks, n->out_logprobs + (size_t)r * max_new, n->out_lens[r],
                                                 strlen(texts[r]));
    }
}

/* What one round carries from stage to stage. Rows are the paper's I x L own completions,
 * row i*L + c answering question i. */
typedef struct {
    int round;
    int I, L, rows;
    Question* qs;         /* (I) this round's questions */
    char** prompts;       /* (I) views of qs[i].prompt */
    char** texts;         /* (rows) decoded completions */
    float** text_lps;     /* (rows) their behaviour log-probs, one per byte, or NULL */
    float* rewards;       /* (rows) our verifiers' rewards */
    double own_sum;       /* sum of rewards */
    uint8_t* msg;         /* this round's encoded message */
    size_t msg_len;
    Inbox inbox;          /* what the transport delivered */
    int* chosen;          /* (used) indices of the pool groups drawn for training */
    int used;
    double t0, t1, t2, t3; /* start, generated, collected, trained (clock_now) */
} RoundState;

static void round_state_free(RoundState* s) {
    for (int r = 0; r < s->rows; r++) {
        free(s->texts[r]);
        free(s->text_lps[r]);
    }
    for (int i = 0; i < s->I; i++) question_free(&s->qs[i]);
    free(s->text_lps);
    free(s->qs);
    free(s->prompts);
    free(s->texts);
    free(s->rewards);
    free(s->chosen);
}

/* ask: I questions from the (seed, rank, round, questions) stream. */
static void round_ask(SwarmNode* n, RoundState* s, RoundRecord* rec) {
    char err[512];
    RngStream qrng = rng_stream(n->sw.seed, (uint32_t)n->rank, (uint32_t)s->round, RNG_QUESTIONS);
    s->qs = callocCheck(s->I, sizeof *s->qs);
    s->prompts = mallocCheck(sizeof(char*) * s->I);
    for (int i = 0; i < s->I; i++) {
        for (int tries = 0;; tries++) {
            if (question_draw(&n->tasks, &qrng, &s->qs[i], err, sizeof err)) sapo_die("question: %s", err);
            if (!evalset_contains(&n->eval, &s->qs[i]) || !n->sw.exclude_eval) break;
            if (tries + 1 == EVALSET_EXCLUDE_TRIES)
                sapo_die("tasks.exclude_eval: %d draws in a row were questions of the held-out set (last: %s); "
                         "the preset's question space is too small for run.eval_questions = %d",
                         EVALSET_EXCLUDE_TRIES, s->qs[i].slot->spec->name, n->sw.eval_questions);
            question_free(&s->qs[i]);
        }
        /* counted on the question asked, in both modes: 0 under tasks.exclude_eval is then a
         * measurement of what the redraws left, not a column that cannot move */
        if (evalset_contains(&n->eval, &s->qs[i])) rec->m[RM_TRAIN_IN_EVAL]++;
        s->prompts[i] = s->qs[i].prompt;
    }
}

/* generate and score: L completions per question, each scored by our own verifier. */
static void round_generate_and_score(SwarmNode* n, RoundState* s, RoundRecord* rec) {
    int rows = s->rows, L = s->L;
    s->texts = mallocCheck(sizeof(char*) * rows);
    s->text_lps = mallocCheck(sizeof(float*) * rows);
    s->rewards = mallocCheck(sizeof(float) * rows);
    RngStream grng = rng_stream(n->sw.seed, (uint32_t)n->rank, (uint32_t)s->round, RNG_GENERATE);
    generate_texts(n, s->prompts, s->I, L, &grng, s->texts, s->text_lps);
    double by_task_sum[TASK_N_IDS] = {0}, formatted = 0.0, length = 0.0;
    int by_task_n[TASK_N_IDS] = {0};
    for (int r = 0; r < rows; r++) {
        const Question* q = &s->qs[r / L];
        s->rewards[r] = (float)task_reward(q->slot->spec, s->texts[r], q->entry);
        s->own_sum += s->rewards[r];
        by_task_sum[q->slot->task_id] += s->rewards[r];
        by_task_n[q->slot->task_id]++;
        char* extracted = answer_extract(s->texts[r]);
        formatted += extracted != NULL;
        free(extracted);
        length += strlen(s->texts[r]);
    }
    rec->m[RM_REWARD_OWN] = s->own_sum / rows;
    rec->m[RM_FORMAT_RATE] = formatted / rows;
    rec->m[RM_COMPLETION_LEN] = length / rows;
    for (int t = 0; t < TASK_N_IDS; t++)
        if (by_task_n[t]) rec->reward_by_task[t] = by_task_sum[t] / by_task_n[t];
}

/* A BPE node's group i also carries the ids it sampled, one behaviour log-prob each (none
 * for a completion with a non-finite one), and its tokenizer's fingerprint: a receiver with
 * the same tokenizer trains those ids as sent. The arrays point into the node's buffers. */
static void ship_token_ids(SwarmNode* n, const RoundState* s, int i, RolloutGroup* g) {
    int L = s->L, max_new = n->set.gen.max_new_tokens;
    g->tokenizer = tokenizer_fingerprint(n->tok);
    g->vocab = n->policy->cfg.vocab;
    g->n_tokens = mallocCheck(sizeof(int32_t) * (size_t)L);
    g->token_ids = mallocCheck(sizeof(int32_t*) * (size_t)L);
    g->token_logprobs = mallocCheck(sizeof(float*) * (size_t)L);
    for (int c = 0; c < L; c++) {
        size_t row = (size_t)i * L + c;
        int len = n->out_lens[row];
        float* lp = n->out_logprobs + row * max_new;
        int finite = 1;
        for (int k = 0; k < len; k++) finite = finite && isfinite(lp[k]) && lp[k] <= 0.0f;
        g->n_tokens[c] = len;
        g->token_ids[c] = (int32_t*)(n->out_tokens + row * max_new);
        g->token_logprobs[c] = finite && len > 0 ? lp : NULL;
    }
}

/* The encoded message of this round's I groups (net.fault's lies applied); with weights-only
 * sharing (ship_rollouts 0) a message of no group, so the exchange keeps its rhythm. */
static void round_encode(SwarmNode* n, RoundState* s) {
    char err[512];
    int shipped = n->ship_rollouts ? s->I : 0;
    SwarmMessage msg = {.sender = n->rank, .round = s->round, .n_groups = shipped};
    msg.groups = callocCheck(shipped > 0 ? shipped : 1, sizeof(RolloutGroup));
    for (int i = 0; i < shipped; i++) {
        const Question* q = &s->qs[i];
        RolloutGroup* g = &msg.groups[i];
        g->task_id = q->slot->task_id;
        g->seed = q->seed;
        g->index = q->index;
        g->config_json = q->slot->config_json;
        g->question = (char*)question_text(q);
        g->answer = (char*)question_answer(q);
        g->metadata_json = question_metadata_json(q);
        g->n_completions = s->L;
        g->completions = s->texts + (size_t)i * s->L;
        g->logprobs = s->text_lps + (size_t)i * s->L;
        if (n->tok) ship_token_ids(n, s, i, g);
        node_fault_corrupt_group(n->set.fault, g);
    }
    if (message_encode(&msg, &s->msg, &s->msg_len, err, sizeof err)) sapo_die("encoding this round's message: %s", err);
    for (int i = 0; i < shipped; i++) {
        free(msg.groups[i].metadata_json);
        free(msg.groups[i].n_tokens);
        free(msg.groups[i].token_ids);
        free(msg.groups[i].token_logprobs);
    }
    free(msg.groups); /* the strings and ids it pointed at belong to qs, texts and the node */
}

/* What was sent, for `sapo verify` (run.dump_messages). */
static void round_dump(const SwarmNode* n, const RoundState* s) {
    char path[640];
    snprintf(path, sizeof path, "%s/node_%04d.r%07d.msg", n->dump_dir, n->rank, s->round);
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(s->msg, 1, s->msg_len, f) != s->msg_len || fclose(f)) sapo_die("cannot write %s", path);
}

/* share: encode every group, corrupt the bytes as net.fault asks, send through the
 * transport and receive this round's inbox. */
static void round_share(SwarmNode* n, RoundState* s, RoundRecord* rec) {
    round_encode(n, s);
    node_fault_corrupt_bytes(n->set.fault, n->sw.seed, n->rank, s->round, s->msg, &s->msg_len);
    if (n->dump_dir[0]) round_dump(n, s);
    rec->m[RM_ONLINE] = !netem_offline(n->netem, n->rank, s->round);
    ExchangeStats st;
    transport_exchange(n->transport, s->round, s->msg, s->msg_len, &s->inbox, &st);
    rec->m[RM_MSGS_SENT] = st.sent;
    rec->m[RM_MSGS_DROPPED] = st.dropped;
    rec->m[RM_BYTES_SENT] = st.bytes_sent;
    rec->m[RM_MSGS_LATE] = st.late;
    rec->m[RM_MSGS_OFFLINE] = st.offline;
    rec->m[RM_T_WAIT] = s->inbox.t_wait;
    free(s->msg);
    s->msg = NULL;
}

/* collect and verify: decode each received message, verify and re-score each of its groups
 * and add the good ones to the pool, cut to our L completions. */
static void round_collect(SwarmNode* n, RoundState* s, RoundRecord* rec) {
    char err[512];
    Inbox* inbox = &s->inbox;
    float* ext_rewards = mallocCheck(sizeof(float) * MESSAGE_MAX_COMPLETIONS);
    for (int k = 0; k < inbox->n; k++) {
        rec->m[RM_MSGS_RECEIVED]++;
        rec->m[RM_BYTES_RECEIVED] += (double)inbox->lens[k];
        SwarmMessage in;
        int bad = message_decode(inbox->bufs[k], inbox->lens[k], &in, err, sizeof err) != 0;
        if (!bad && in.sender != inbox->senders[k]) { /* a message claiming another sender */
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
            if (g->n_completions > s->L) rollout_group_truncate(g, s->L);
            pool_add(&n->pool, g, ext_rewards, in.sender, inbox->age_from ? inbox->age_from[k] : in.round);
        }
        message_free(&in);
    }
    inbox_free(inbox);
    free(ext_rewards);
    rec->m[RM_POOL_SIZE] = n->pool.n;
    rec->m[RM_POOL_ELIGIBLE] = pool_eligible(&n->pool, n->set.filter_zero_adv);
}

/* select: up to J external groups drawn from the filtered pool. */
static void round_select(SwarmNode* n, RoundState* s, RoundRecord* rec) {
    int J = n->set.n_external;
    s->chosen = mallocCheck(sizeof(int) * (J > 0 ? J : 1));
    RngStream prng = rng_stream(n->sw.seed, (uint32_t)n->rank, (uint32_t)s->round, RNG_POOL);
    s->used = J > 0 ? pool_draw(&n->pool, J, n->set.filter_zero_adv, &prng, s->chosen) : 0;
    rec->m[RM_EXTERNAL_USED] = s->used;
    rec->m[RM_SHORTFALL] = J - s->used;
}

/* Own group i of a BPE node: the prompt ids generation read and the ids it sampled. */
static void own_token_group(SwarmNode* n, int i, int L, GrpoGroup* g) {
    int n_ctx = n->policy->cfg.n_ctx, max_new = n->set.gen.max_new_tokens;
    for (int c = 0; c < L; c++) n->own_rows[(size_t)i * L + c] = n->out_tokens + ((size_t)i * L + c) * max_new;
    token_group_own(g, n->prompt_tokens + (size_t)i * n_ctx, n->prompt_lens[i],
                    (const int* const*)(n->own_rows + (size_t)i * L), n->out_lens + (size_t)i * L);
}

/* train: GRPO advantages of the I own and the used external groups, and one GRPO step. */
static void round_train(SwarmNode* n, RoundState* s, RoundRecord* rec) {
    int I = s->I, L = s->L, used = s->used, n_ctx = n->policy->cfg.n_ctx;
    int n_samples = s->rows, n_groups = I + used, width = L;
    for (int e = 0; e < used; e++) {
        int c = n->pool.items[s->chosen[e]].group.n_completions;
        n_samples += c;
        if (c > width) width = c;
    }
    GrpoGroup* groups = mallocCheck(sizeof(GrpoGroup) * n_groups);
    char** ext_prompts = mallocCheck(sizeof(char*) * (used > 0 ? used : 1));
    TokenGroups tg = {0};
    if (n->tok) token_groups_init(&tg, used, width);
    float* adv = mallocCheck(sizeof(float) * (size_t)n_groups * width);
    double train_sum = s->own_sum;
    /* the sender's log-probs, where the off-policy rule wants them (rl/weighting.h) */
    int with_behaviour = weighting_needs_sender_logprobs(&n->set.weighting);
    for (int i = 0; i < I; i++) {
        float* a = adv + (size_t)i * width;
        grpo_advantages(s->rewards + i * L, L, a);
        weighting_group_weights(&n->set.weighting, 0, a, L);
        groups[i] = (GrpoGroup){.prompt = prompt_tail(s->qs[i].prompt, n_ctx, n->set.gen.max_new_tokens),
                                .n = L,
                                .completions = (const char* const*)s->texts + (size_t)i * L,
                                .weights = a};
        if (n->tok) own_token_group(n, i, L, &groups[i]); /* the ids sampled, as sampled */
    }
    for (int e = 0; e < used; e++) {
        const PoolGroup* pg = &n->pool.items[s->chosen[e]];
        rec->m[RM_EXTERNAL_FLAT] += pg->all_equal;
        double age = s->round - pg->sent_round;
        if (!(age >= rec->m[RM_EXTERNAL_AGE_MIN])) rec->m[RM_EXTERNAL_AGE_MIN] = age; /* NaN compares false */
        if (!(age <= rec->m[RM_EXTERNAL_AGE_MAX])) rec->m[RM_EXTERNAL_AGE_MAX] = age;
        rec->m[RM_EXTERNAL_AGE_MEAN] = (e == 0 ? 0.0 : rec->m[RM_EXTERNAL_AGE_MEAN]) + age / used;
        ext_prompts[e] = question_prompt(pg->group.question);
        float* a = adv + (size_t)(I + e) * width;
        grpo_advantages(pg->rewards, pg->group.n_completions, a);
        weighting_group_weights(&n->set.weighting, 1, a, pg->group.n_completions);
        groups[I + e] = (GrpoGroup){.prompt = prompt_tail(ext_prompts[e], n_ctx, n->set.gen.max_new_tokens),
                                    .n = pg->group.n_completions,
                                    .completions = (const char* const*)pg->group.completions,
                                    .weights = a,
                                    .behaviour = with_behaviour ? (const float* const*)pg->group.logprobs : NULL};
        if (n->tok) {
            int n_ctx = n->policy->cfg.n_ctx, room = n_ctx - n->set.gen.max_new_tokens;
            rec->m[RM_EXTERNAL_REENCODED] += token_group_external(&tg, e, &n->codec, tokenizer_fingerprint(n->tok),
                                                                  n->policy->cfg.vocab, ext_prompts[e], n_ctx, room,
                                                                  &pg->group, with_behaviour,
                                                                  &groups[I + e]);
        }
        for (int c = 0; c < pg->group.n_completions; c++) train_sum += pg->rewards[c];
    }
    rec->m[RM_REWARD_TRAIN] = train_sum / n_samples;
    rec->m[RM_TRAIN_ROWS] = n_samples;
    if (n->set.frozen) { /* grpo.frozen: the batch is built and logged, no step is taken */
        rec->m[RM_OFFPOLICY_WEIGHT] = rec->m[RM_OFFPOLICY_CAPPED] = NAN;
        rec->m[RM_LOSS] = rec->m[RM_GRAD_NORM] = rec->m[RM_KL] = NAN;
        rec->m[RM_TRAIN_TOKENS] = (double)pack_count_loss_tokens(groups, n_groups, n_ctx, 0);
    } else {
        GrpoStats st = grpo_train(n->trainer, groups, n_groups, &n->set.grpo, &n->set.adamw, n->set.grad_clip,
                                  (long)s->round * n->set.grpo.ppo_epochs);
        rec->m[RM_OFFPOLICY_WEIGHT] = st.is_weight;
        rec->m[RM_OFFPOLICY_CAPPED] = st.is_capped;
        rec->m[RM_OFFPOLICY_DROPPED] = st.ftis_dropped;
        rec->m[RM_LOSS] = st.loss;
        rec->m[RM_GRAD_NORM] = st.grad_norm;
        rec->m[RM_KL] = st.kl;
        rec->m[RM_TRAIN_TOKENS] = st.tokens;
    }
    for (int e = 0; e < used; e++) free(ext_prompts[e]);
    token_groups_free(&tg);
    free(ext_prompts);
    free(groups);
    free(adv);
    pool_clear(&n->pool);
}

/* The outer step of weight synchronisation, every sync.every rounds: the weights on the host,
 * the swarm's (or group's) mean contribution, the new outer weights back to the backend. */
static void round_sync(SwarmNode* n, int round, RoundRecord* rec) {
    int step = n->sync && weight_sync_due(&n->sw.sync, round);
    if (!step && !n->sync_p2p) return; /* p2p takes the weight messages due every round */
    Model* m = n->policy;
    if (step) m->backend->download(m);
    SyncStats st;
    if (n->sync_p2p)
        sync_step_p2p(n->sync_p2p, n->sync, n->sw.seed, (int)n->set.fault, n->rank, n->n_nodes, round,
                      m->params_memory, &st);
    else
        sync_step_allreduce(n->sync, n->comm, n->sw.seed, n->rank, n->n_nodes, m->params_memory, &st);
    if (step) m->backend->upload(m);
    rec->m[RM_SYNC_PEERS] = st.peers;
    rec->m[RM_SYNC_AGE] = step ? st.age : NAN;
    rec->m[RM_SYNC_DROPPED] = st.dropped;
    rec->m[RM_SYNC_REJECTED] = st.rejected;
    rec->m[RM_BYTES_SENT] += st.bytes_sent;
    rec->m[RM_BYTES_RECEIVED] += st.bytes_received;
}

/* evaluate: pass@1 on the fixed held-out set: one answer per question, sampled with the
 * node's gen settings from the (seed, rank, round, RNG_EVAL) stream; overall and per task
 * into rec. */
static void round_evaluate(SwarmNode* n, int round, RoundRecord* rec) {
    RngStream rng = rng_stream(n->sw.seed, (uint32_t)n->rank, (uint32_t)round, RNG_EVAL);
    rec->m[RM_EVAL_PASS1] = evaluation_run(n->policy, &n->codec, &n->set.gen, &n->eval, &rng, rec->eval_by_task, NULL);
}

void node_round(SwarmNode* n, int round, RoundRecord* rec) {
    round_record_clear(rec, round);
    int I = n->set.n_local, L = n->set.n_completions;
    RoundState s = {.round = round, .I = I, .L = L, .rows = I * L};
    s.t0 = clock_now();
    double t_start = s.t0;

    /* ---- evaluate the initial policy first (run.eval_first): its own stream, as any round's ---- */
    if (round == 0 && n->sw.eval_first && n->sw.eval_questions > 0) {
        round_evaluate(n, round, rec);
        rec->m[RM_T_EVAL] = clock_now() - s.t0;
        s.t0 = clock_now();
    }

    /* ---- ask: I questions ---- */
    round_ask(n, &s, rec);

    /* ---- generate and score: L completions each, scored by our verifiers ---- */
    round_generate_and_score(n, &s, rec);
    s.t1 = clock_now();
    rec->m[RM_T_GENERATE] = s.t1 - s.t0;
    mem_private_sample();

    /* ---- share: our I groups out, the peers' messages in ---- */
    round_share(n, &s, rec);

    /* ---- collect and verify: the peers' groups, regenerated and re-scored, into the pool ---- */
    round_collect(n, &s, rec);
    s.t2 = clock_now();
    rec->m[RM_T_EXCHANGE] = s.t2 - s.t1 - rec->m[RM_T_WAIT];
    mem_private_sample();

    /* ---- select: up to J external groups from the filtered pool ---- */
    round_select(n, &s, rec);

    /* ---- train: one GRPO step on the I + J groups (a wall-clock straggler then sleeps) ---- */
    round_train(n, &s, rec);
    s.t3 = clock_now();
    rec->m[RM_T_TRAIN] = s.t3 - s.t2;
    mem_private_sample();
    node_fault_straggle(n->slowdown, n->netem->net.wall_clock, s.t3 - s.t0 - rec->m[RM_T_WAIT]);

    /* ---- sync: every sync.every rounds, the outer step on the swarm's weights (counted in t_exchange) ---- */
    double t_sync = clock_now();
    round_sync(n, round, rec);
    rec->m[RM_T_EXCHANGE] += clock_now() - t_sync;
    s.t3 += clock_now() - t_sync;

    /* ---- evaluate: pass@1 on the fixed held-out set, every run.eval_every rounds (and, with
     * run.eval_first, the initial policy in round 0's row: evaluated before it trains, above) ---- */
    if (n->sw.eval_every > 0 && n->sw.eval_questions > 0 && (round + 1) % n->sw.eval_every == 0 &&
        !(round == 0 && n->sw.eval_first)) {
        round_evaluate(n, round, rec);
        rec->m[RM_T_EVAL] = clock_now() - s.t3;
    }

    /* ---- log: rec is the round's row; the caller appends it (node_log_append) ---- */
    rec->weights_digest = (int64_t)model_weights_digest(n->policy);
    rec->m[RM_T_ROUND] = clock_now() - t_start;
    mem_private_sample(); /* after the evaluation */
    round_state_free(&s);
}
