/* Supervised warm-up helpers (see sft.h). */
#include "rl/sft.h"

#include <string.h>

#include "model/gpt.h"

int sft_pack(const SftExample* ex, int n, int T, int* inputs, int* targets) {
    int count = 0;
    for (int r = 0; r < n; r++) {
        int* in = inputs + (size_t)r * T;
        int* tg = targets + (size_t)r * T;
        size_t plen = strlen(ex[r].prompt), clen = strlen(ex[r].completion);
        /* sequence: BOS, prompt, completion, EOS; keep at most T + 1 tokens */
        int keep_c = (int)clen < T ? (int)clen : T - 1;
        int room_p = T - keep_c - 1; /* prompt bytes that fit beside BOS and the completion */
        if (room_p < 0) room_p = 0;
        int keep_p = (int)plen < room_p ? (int)plen : room_p;
        const unsigned char* p = (const unsigned char*)ex[r].prompt + (plen - keep_p);
        const unsigned char* c = (const unsigned char*)ex[r].completion;
        int seq_len = 1 + keep_p + keep_c + 1;
        for (int t = 0; t < T; t++) {
            int i = t, j = t + 1; /* input is token i, target token j of the sequence */
            int tok_i = i == 0 ? TOK_BOS : i <= keep_p ? p[i - 1] : i <= keep_p + keep_c ? c[i - 1 - keep_p] : TOK_EOS;
            int tok_j = j <= keep_p ? p[j - 1] : j <= keep_p + keep_c ? c[j - 1 - keep_p] : TOK_EOS;
            if (i >= seq_len - 1) {
                in[t] = TOK_PAD;
                tg[t] = TOK_PAD;
                continue;
            }
            in[t] = tok_i;
            tg[t] = j <= keep_p ? TOK_PAD : tok_j;
            count += tg[t] != TOK_PAD;
        }
    }
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
