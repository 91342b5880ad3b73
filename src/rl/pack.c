/* Packing of training groups into micro-batches (see pack.h). A sequence is [BOS] prompt
 * completion [EOS]; the prompt segment holds its first 1 + prompt_len - 1 tokens (BOS and all
 * prompt bytes but the last), every completion segment starts with the last prompt byte, so
 * it predicts the completion's first byte from there, exactly as an unshared row would. */
#include "rl/pack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"

/* How a group is cut to fit n_ctx: completions keep at most n_ctx - eos bytes; the prompt
 * loses its beginning until its longest completion fits (as an unshared row of n_ctx would,
 * for that completion). */
typedef struct {
    const unsigned char* prompt; /* the kept tail */
    int keep_p;
} GroupCut;

static int kept_completion(const char* c, int n_ctx, int eos) {
    int clen = (int)strlen(c), room = n_ctx - eos;
    return clen < room ? clen : room;
}

static GroupCut cut_group(const TrainGroup* g, int n_ctx, int eos) {
    int longest = 0;
    for (int c = 0; c < g->n; c++) {
        int k = kept_completion(g->completions[c], n_ctx, eos) + eos;
        if (k > longest) longest = k;
    }
    int plen = (int)strlen(g->prompt), room = n_ctx - longest;
    GroupCut cut = {.keep_p = plen < room ? plen : room};
    if (cut.keep_p < 0) cut.keep_p = 0;
    cut.prompt = (const unsigned char*)g->prompt + (plen - cut.keep_p);
    return cut;
}

void packer_init(Packer* pk, const Model* m, int max_tokens, int append_eos) {
    memset(pk, 0, sizeof *pk);
    pk->cap_tokens = max_tokens > 0 && max_tokens < m->cap.max_tokens ? max_tokens : m->cap.max_tokens;
    pk->cap_att = m->cap.max_att;
    pk->cap_segments = pk->cap_tokens; /* every segment holds at least one token */
    pk->n_head = m->cfg.n_head;
    pk->n_ctx = m->cfg.n_ctx;
    pk->append_eos = append_eos;
    pk->logit_scale = 1.0f;
    pk->inputs = mallocCheck((size_t)pk->cap_tokens * sizeof(int));
    pk->targets = mallocCheck((size_t)pk->cap_tokens * sizeof(int));
    pk->weight = mallocCheck((size_t)pk->cap_tokens * sizeof(float));
    pk->behaviour = mallocCheck((size_t)pk->cap_tokens * sizeof(float));
    pk->loss_id = mallocCheck((size_t)pk->cap_tokens * sizeof(long));
    pk->segs = mallocCheck((size_t)pk->cap_segments * sizeof(Segment));
}

void packer_free(Packer* pk) {
    free(pk->inputs);
    free(pk->targets);
    free(pk->weight);
    free(pk->behaviour);
    free(pk->loss_id);
    free(pk->segs);
    memset(pk, 0, sizeof *pk);
}

long pack_count_loss_tokens(const TrainGroup* groups, int n_groups, int n_ctx, int append_eos) {
    long total = 0;
    for (int g = 0; g < n_groups; g++)
        for (int c = 0; c < groups[g].n; c++) total += kept_completion(groups[g].completions[c], n_ctx, append_eos) + append_eos;
    return total;
}

/* Appends the prompt segment of a group: BOS and the kept prompt but its last byte. */
static void put_prompt(Packer* pk, const GroupCut* cut) {
    PackedBatch* pb = &pk->pb;
    int start = pb->n_tokens, n = cut->keep_p;
    for (int i = 0; i < n; i++) {
        pk->inputs[start + i] = i == 0 ? TOK_BOS : cut->prompt[i - 1];
        pk->targets[start + i] = TOK_PAD;
        pk->weight[start + i] = 0.0f;
        pk->behaviour[start + i] = NAN;
        pk->loss_id[start + i] = -1;
    }
    pk->segs[pb->n_segments++] = (Segment){.start = start, .len = n, .prefix = -1};
    pb->n_tokens += n;
}

/* Appends one completion segment continuing prompt segment `prefix` (-1 = none). */
static void put_completion(Packer* pk, const GroupCut* cut, const char* text, const float* behaviour, int kept,
                           float w, int prefix, PackCursor* cur) {
    PackedBatch* pb = &pk->pb;
    const unsigned char* c = (const unsigned char*)text;
    int start = pb->n_tokens, eos = pk->append_eos, n = kept + eos;
    for (int i = 0; i < n; i++) {
        /* input: the last prompt token (the BOS when the prompt is empty), then the completion */
        int in = i > 0 ? c[i - 1] : cut->keep_p > 0 ? cut->prompt[cut->keep_p - 1] : TOK_BOS;
        pk->inputs[start + i] = in;
        pk->targets[start + i] = i < kept ? c[i] : TOK_EOS;
        pk->weight[start + i] = w;
        pk->behaviour[start + i] = behaviour && i < kept ? behaviour[i] : NAN;
        pk->loss_id[start + i] = cur->loss_tokens++;
    }
    pk->segs[pb->n_segments++] = (Segment){.start = start, .len = n, .prefix = prefix};
    pb->n_tokens += n;
}

int pack_next(Packer* pk, const TrainGroup* groups, int n_groups, PackCursor* cur) {
    PackedBatch* pb = &pk->pb;
    *pb = (PackedBatch){.inputs = pk->inputs, .targets = pk->targets, .segs = pk->segs, .logit_scale = pk->logit_scale};
    long att = 0;
    int eos = pk->append_eos;
    while (cur->group < n_groups) {
        const TrainGroup* g = &groups[cur->group];
        if (cur->completion >= g->n) {
            cur->group++;
            cur->completion = 0;
            continue;
        }
        GroupCut cut = cut_group(g, pk->n_ctx, eos);
        long p = cut.keep_p;
        int prompt_here = 0, prefix = -1;
        for (int c = cur->completion; c < g->n; c++) {
            int kept = kept_completion(g->completions[c], pk->n_ctx, eos);
            long n = kept + eos;
            if (n == 0) { /* nothing to learn from: an empty completion without EOS */
                cur->completion = c + 1;
                continue;
            }
            long add_tok = n + (prompt_here || p == 0 ? 0 : p);
            long add_att = pk->n_head * (n * (p + n) + (prompt_here || p == 0 ? 0 : p * p));
            int add_seg = 1 + (prompt_here || p == 0 ? 0 : 1);
            if (pb->n_tokens + add_tok > pk->cap_tokens || att + add_att > pk->cap_att ||
                pb->n_segments + add_seg > pk->cap_segments) {
                if (pb->n_tokens > 0) return 1; /* the micro-batch is full; continue from here */
                sapo_die("training: a prompt of %ld tokens with a completion of %ld does not fit the model's capacity "
                         "(%d tokens, %ld attention weights per layer)",
                         p, n, pk->cap_tokens, pk->cap_att);
            }
            if (!prompt_here && p > 0) {
                prefix = pb->n_segments;
                put_prompt(pk, &cut);
            }
            prompt_here = 1;
            put_completion(pk, &cut, g->completions[c], g->behaviour ? g->behaviour[c] : NULL, kept,
                           g->weights ? g->weights[c] : 1.0f, prefix, cur);
            att += add_att;
            cur->completion = c + 1;
        }
    }
    return pb->n_tokens > 0;
}
