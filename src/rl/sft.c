/* Supervised warm-up helpers: byte-level row packing, the masked loss, and the packed step
 * over text or token-id demonstrations (see sft.h). */
#include "rl/sft.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"

#include "model/model.h"

int seq_pack(const char* prompt, const char* completion, int append_eos, int T, int* in, int* tg) {
    size_t plen = strlen(prompt), clen = strlen(completion);
    int eos = append_eos ? 1 : 0;
    /* sequence: BOS, prompt, completion, [EOS]; its first T + 1 tokens fit the row */
    int keep_c = (int)clen + eos <= T ? (int)clen : T - eos;
    if (keep_c < 0) keep_c = 0;
    int room_p = T - keep_c - eos;
    int keep_p = (int)plen < room_p ? (int)plen : room_p;
    const unsigned char* p = (const unsigned char*)prompt + (plen - keep_p);
    const unsigned char* c = (const unsigned char*)completion;
    int seq_len = 1 + keep_p + keep_c + eos;
    int count = 0;
    for (int t = 0; t < T; t++) {
        if (t + 1 >= seq_len) { /* no next token: padding */
            in[t] = TOK_PAD;
            tg[t] = TOK_PAD;
            continue;
        }
        int i = t, j = t + 1; /* the row predicts token j of the sequence from token i */
        in[t] = i == 0 ? TOK_BOS : i <= keep_p ? p[i - 1] : c[i - 1 - keep_p];
        int tok_j = j <= keep_p ? p[j - 1] : j <= keep_p + keep_c ? c[j - 1 - keep_p] : TOK_EOS;
        tg[t] = j <= keep_p ? TOK_PAD : tok_j;
        count += tg[t] != TOK_PAD;
    }
    return count;
}

int sft_pack(const SftExample* ex, int n, int T, int* inputs, int* targets) {
    int count = 0;
    for (int r = 0; r < n; r++)
        count += seq_pack(ex[r].prompt, ex[r].completion, 1, T, inputs + (size_t)r * T, targets + (size_t)r * T);
    return count;
}

float sft_loss_grad(const float* logprobs, const int* targets, int n, float* dlogprobs) {
    int count = 0;
    for (int i = 0; i < n; i++) count += targets[i] != TOK_PAD;
    double loss = 0.0;
    for (int i = 0; i < n; i++) {
        int on = targets[i] != TOK_PAD && count > 0;
        if (on) loss -= logprobs[i];
        dlogprobs[i] = on ? -1.0f / count : 0.0f;
    }
    return count ? (float)(loss / count) : 0.0f;
}

/* The supervised step over n groups of one completion each, whichever form they hold. */
static float sft_accumulate_groups(Model* m, Packer* pk, const TrainGroup* groups, int n, float* lp, float* dlp) {
    long total = pack_count_loss_tokens(groups, n, m->cfg.n_ctx, pk->append_eos);
    model_zero_grad(m);
    double loss = 0.0;
    PackCursor cur = {0};
    while (total > 0 && pack_next(pk, groups, n, &cur)) {
        const PackedBatch* pb = &pk->pb;
        model_forward_packed(m, pb, lp);
        for (int i = 0; i < pb->n_tokens; i++) {
            int on = pb->targets[i] != pk->roles.none;
            if (on) loss -= lp[i];
            dlp[i] = on ? -1.0f / (float)total : 0.0f;
        }
        model_backward(m, dlp);
    }
    return total > 0 ? (float)(loss / (double)total) : 0.0f;
}

float sft_accumulate(Model* m, Packer* pk, const SftExample* ex, int n, float* lp, float* dlp) {
    TrainGroup* groups = mallocCheck((size_t)(n > 0 ? n : 1) * sizeof *groups);
    for (int i = 0; i < n; i++) groups[i] = (TrainGroup){.prompt = ex[i].prompt, .n = 1, .completions = &ex[i].completion};
    float loss = sft_accumulate_groups(m, pk, groups, n, lp, dlp);
    free(groups);
    return loss;
}

float sft_accumulate_ids(Model* m, Packer* pk, const SftTokens* ex, int n, float* lp, float* dlp) {
    TrainGroup* groups = mallocCheck((size_t)(n > 0 ? n : 1) * sizeof *groups);
    for (int i = 0; i < n; i++)
        groups[i] = (TrainGroup){.n = 1,
                                 .prompt_ids = ex[i].prompt,
                                 .prompt_len = ex[i].prompt_len,
                                 .completion_ids = &ex[i].completion,
                                 .completion_lens = &ex[i].completion_len};
    float loss = sft_accumulate_groups(m, pk, groups, n, lp, dlp);
    free(groups);
    return loss;
}
