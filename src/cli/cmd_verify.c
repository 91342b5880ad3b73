/* `sapo verify`: recomputes a shared rollout's per-token log-probs from a checkpoint and says
 * whether they equal the ones its sender claimed, bit for bit. The rollout is an encoded swarm
 * message (src/swarm/net/message.c, version 2: every completion carries the sender's behaviour
 * log-prob of each of its bytes), e.g. one a run wrote with run.dump_messages; the model is the
 * checkpoint the sender sampled with (`ckpt/node_K.rR.model` of a run sampled round R) and the
 * config its node ran with (model shape, n_ctx, gen.temperature, gen.top_p,
 * gen.max_new_tokens, model.deterministic). Each completion is scored by the training forward
 * over [prompt | completion] (model/recompute.h). In the deterministic mode an honest claim
 * matches on any machine; with the default numerics the last bits may differ. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "core/check.h"
#include "core/config.h"
#include "io/files.h"
#include "model/policy.h"
#include "model/prompt_codec.h"
#include "model/recompute.h"
#include "model/tokenizer.h"
#include "swarm/net/message.h"
#include "swarm/node_settings.h"
#include "swarm/taskset.h"

static const CliOption OPTIONS[] = {
    {"ckpt", "MODEL", "the checkpoint the sender sampled with (a run's ckpt/node_K.rR.model\nfor the message of round R), "
                      "or a llama node's Hugging Face directory (its\nround-0 model)"},
    {"rollout", "MESSAGE", "an encoded swarm message (version 2, with behaviour log-probs), e.g.\n"
                           "RUN_DIR/messages/node_K.rR.msg written with run.dump_messages = DIR"},
    {"node", "K", "whose [node.K] settings apply (default: the message's sender)"},
    {NULL, NULL, NULL},
};
enum { OPT_CKPT, OPT_ROLLOUT, OPT_NODE };

static void usage(FILE* out) {
    fprintf(out,
            "usage: sapo verify --ckpt MODEL --rollout MESSAGE [CONFIG.ini] [section.key=value ...] [--node K]\n"
            "Recomputes the per-token log-probs of every completion in a shared rollout and compares\n"
            "them with the log-probs its sender claimed, bit for bit.\n");
    cli_print_options(out, OPTIONS);
    fprintf(out,
            "  CONFIG.ini, overrides  the sender's configuration (a run's config.ini): model shape,\n"
            "                     model.deterministic, gen.temperature, gen.top_p, gen.max_new_tokens\n"
            "The prompt is question_prompt(question), kept to its last n_ctx - max_new_tokens bytes as\n"
            "generation keeps it; the log-probs are the sampler's: softmax(logits / temperature), with\n"
            "top-p the nucleus renormalisation. Completions that carry no log-probs are skipped.\n"
            "Exit 0: every claimed log-prob equals the recomputed one bit for bit; 1: some differ (the\n"
            "first is printed: group, completion, byte index, claimed and recomputed as hex bits);\n"
            "2: bad input (unreadable or undecodable message, missing checkpoint, bad config).\n"
            "Bit-for-bit agreement is promised only with model.deterministic = true\n"
            "(docs/DETERMINISM.md); with the default numerics the last bits of a few tokens differ.\n");
}

/* The model a rollout is verified against, and how it read its prompts: --ckpt as a Hugging
 * Face directory (a llama node's initial model), or a checkpoint loaded over the node's first
 * weights (model/policy.h: random ones, or a llama node's model.hf_dir). */
static int verify_model_open(Policy* vm, const char* ckpt, const NodeSettings* ns, char* err, size_t errlen) {
    struct stat st;
    int is_dir = stat(ckpt, &st) == 0 && S_ISDIR(st.st_mode);
    PolicySpec spec = node_policy_spec(ns);
    spec.init = ckpt;
    if (is_dir) spec = policy_spec_of_hf_dir(&spec, ckpt);
    memset(vm, 0, sizeof *vm);
    ModelShape g;
    if (policy_shape(&spec, &g, err, errlen)) return -1;
    ModelCapacity cap = model_capacity_dense(&g, 1);
    return policy_open(vm, &spec, model_backend_find("cpu"), &cap, 0, err, errlen) ? -1 : 0;
}

static unsigned bits_of(float x) {
    uint32_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

int cmd_verify(int argc, char** argv) {
    CliArgs a;
    int parsed = cli_parse("verify", OPTIONS, argc, argv, &a);
    const char* ckpt = a.opt[OPT_CKPT];
    const char* rollout = a.opt[OPT_ROLLOUT];
    int node_given = -1;
    if (parsed == 0 && cli_opt_int(&a, OPT_NODE, 0, INT_MAX, &node_given)) parsed = -1;
    struct Config* cfg = parsed == 0 && ckpt && rollout ? cli_args_config("verify", &a) : NULL;
    cli_args_free(&a);
    if (parsed > 0) {
        usage(stdout);
        return 0;
    }
    if (parsed == 0 && (!ckpt || !rollout)) usage(stderr);
    if (!cfg) return 2;
    size_t len = 0;
    uint8_t* buf = (uint8_t*)file_read_all(rollout, 0, &len);
    if (!buf) {
        fprintf(stderr, "sapo verify: cannot read %s\n", rollout);
        config_free(cfg);
        return 2;
    }
    SwarmMessage msg;
    char err[512];
    if (message_decode(buf, len, &msg, err, sizeof err)) {
        fprintf(stderr, "sapo verify: %s: %s\n", rollout, err);
        free(buf);
        config_free(cfg);
        return 2;
    }
    free(buf);
    int node = node_given >= 0 ? node_given : msg.sender;
    NodeSettings ns = node_settings_read(cfg, node);
    GenConfig gen = ns.gen;
    Policy vm;
    if (verify_model_open(&vm, ckpt, &ns, err, sizeof err)) {
        fprintf(stderr, "sapo verify: %s\n", err);
        message_free(&msg);
        config_free(cfg);
        return 2;
    }
    Model* m = vm.model;
    ModelShape g = m->cfg;
    int n_ctx = g.n_ctx, max_new = gen.max_new_tokens, V = g.vocab;
    int* prompt = mallocCheck((size_t)n_ctx * sizeof(int));
    int* comp = mallocCheck((size_t)n_ctx * sizeof(int));
    float* re = mallocCheck((size_t)n_ctx * sizeof(float));
    float* logits = mallocCheck((size_t)n_ctx * V * sizeof(float));
    float* scratch = mallocCheck((size_t)3 * V * sizeof(float));
    long tokens = 0, differ = 0, skipped = 0, completions = 0;
    int rc = 0;
    for (int gi = 0; gi < msg.n_groups && rc != 2; gi++) {
        const RolloutGroup* grp = &msg.groups[gi];
        char* text = question_prompt(grp->question);
        int plen = prompt_codec_encode(&vm.codec, text, prompt, n_ctx - max_new);
        free(text);
        for (int c = 0; c < grp->n_completions; c++) {
            /* a BPE sender's claims are per sampled id, a byte sender's per byte of the text */
            const float* claimed = vm.tokenizer ? (grp->token_logprobs ? grp->token_logprobs[c] : NULL)
                                                : grp->logprobs ? grp->logprobs[c] : NULL;
            int n = vm.tokenizer ? (grp->n_tokens ? grp->n_tokens[c] : 0) : (int)strlen(grp->completions[c]);
            if (!claimed || n == 0) {
                skipped++;
                continue;
            }
            completions++;
            if (n > n_ctx) n = n_ctx + 1; /* reported as not fitting below */
            for (int i = 0; i < n && i < n_ctx; i++)
                comp[i] = vm.tokenizer ? grp->token_ids[c][i] : (unsigned char)grp->completions[c][i];
            if (n > max_new || recompute_logprobs(m, &gen.sampler, prompt, plen, comp, n, re, NULL, logits, scratch)) {
                fprintf(stderr, "sapo verify: group %d completion %d: %d bytes do not fit (max_new_tokens %d, n_ctx %d)\n",
                        gi, c, n, max_new, n_ctx);
                rc = 2;
                break;
            }
            for (int i = 0; i < n; i++) {
                tokens++;
                if (bits_of(claimed[i]) == bits_of(re[i])) continue;
                if (differ++ == 0)
                    printf("first mismatch: group %d, completion %d, token %d (%s %d): claimed %08x (%.9g), "
                           "recomputed %08x (%.9g)\n",
                           gi, c, i, vm.tokenizer ? "id" : "byte", comp[i], bits_of(claimed[i]), claimed[i],
                           bits_of(re[i]), re[i]);
            }
        }
    }
    if (rc != 2) {
        printf("sapo verify: %s from node %d, round %d: %ld of %ld log-probs (%ld completions, %d groups; %ld "
               "without log-probs skipped) %s (model.deterministic = %s)\n",
               rollout, msg.sender, msg.round, tokens - differ, tokens, completions, msg.n_groups, skipped,
               differ ? "equal bit for bit; the rest differ" : "equal bit for bit", g.deterministic ? "true" : "false");
        rc = differ ? 1 : 0;
    }
    free(prompt);
    free(comp);
    free(re);
    free(logits);
    free(scratch);
    policy_close(&vm);
    message_free(&msg);
    config_free(cfg);
    return rc;
}
