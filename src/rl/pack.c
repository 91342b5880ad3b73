/* Packing of training groups into micro-batches (see pack.h). A sequence is [start] prompt
 * completion [end] (the model's TokenRoles; byte_gpt: BOS and EOS); the prompt segment holds
 * all of [start] prompt but its last token, every completion segment starts with that last
 * token, so it predicts the completion's first token from there, exactly as an unshared row
 * would. */
#include "rl/pack.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"

TrainGroup train_group_ids(const int* prompt, int prompt_len, int n, int* const* completions, const int* lens) {
    return (TrainGroup){.n = n, .prompt_ids = prompt, .prompt_len = prompt_len,
                        .completion_ids = (const int* const*)completions, .completion_lens = lens};
}

int train_completion_len(const TrainGroup* g, int c) {
    return g->prompt_ids ? g->completion_lens[c] : (int)strlen(g->completions[c]);
}
static int completion_token(const TrainGroup* g, int c, int i) {
    return g->prompt_ids ? g->completion_ids[c][i] : ((const unsigned char*)g->completions[c])[i];
}
static int prompt_len(const TrainGroup* g) { return g->prompt_ids ? g->prompt_len : (int)strlen(g->prompt); }
static int prompt_token(const TrainGroup* g, int i) {
    return g->prompt_ids ? g->prompt_ids[i] : ((const unsigned char*)g->prompt)[i];
}

/* How a group is cut to fit n_ctx: completions keep at most n_ctx - eos tokens; the prompt
 * loses its beginning (after the start token) until its longest completion fits (as an
 * unshared row of n_ctx would, for that completion). The kept sequence's prompt part is
 * [start] prompt[skip..): `seg` tokens in the prompt segment, then one that opens each
 * completion segment. */
typedef struct {
    int skip;  /* prompt tokens cut from the front */
    int keep_p; /* prompt tokens kept */
    int seg;   /* the prompt segment's length: [start] + keep_p - 1 */
} GroupCut;

static int kept_completion(const TrainGroup* g, int c, int n_ctx, int eos) {
    int clen = train_completion_len(g, c), room = n_ctx - eos;
    return clen < room ? clen : room;
}

static GroupCut cut_group(const TrainGroup* g, const TokenRoles* roles, int n_ctx, int eos) {
    int longest = 0, has_start = roles->start >= 0;
    for (int c = 0; c < g->n; c++) {
        int k = kept_completion(g, c, n_ctx, eos) + eos;
        if (k > longest) longest = k;
    }
    int plen = prompt_len(g), room = n_ctx - longest + 1 - has_start;
    GroupCut cut = {.keep_p = plen < room ? plen : room};
    if (cut.keep_p < 0) cut.keep_p = 0;
    if (!has_start && cut.keep_p < 1)
        sapo_die("training: a group needs at least one prompt token (the model has no start token)");
    cut.skip = plen - cut.keep_p;
    cut.seg = has_start + cut.keep_p - 1;
    return cut;
}

/* Token i of the kept [start] prompt. */
static int framed_prompt_token(const TrainGroup* g, const GroupCut* cut, const TokenRoles* roles, int i) {
    if (roles->start >= 0) return i == 0 ? roles->start : prompt_token(g, cut->skip + i - 1);
    return prompt_token(g, cut->skip + i);
}

void packer_init(Packer* pk, const Model* m, int max_tokens, int append_eos) {
    memset(pk, 0, sizeof *pk);
    pk->cap_tokens = max_tokens > 0 && max_tokens < m->cap.max_tokens ? max_tokens : m->cap.max_tokens;
    pk->cap_att = m->cap.max_att;
    pk->cap_segments = pk->cap_tokens; /* every segment holds at least one token */
    pk->n_head = m->cfg.n_head;
    pk->n_ctx = m->cfg.n_ctx;
    pk->append_eos = append_eos;
    pk->roles = m->roles;
    if (append_eos && pk->roles.end < 0) sapo_die("supervised training: the model has no end token to train");
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
        for (int c = 0; c < groups[g].n; c++) total += kept_completion(&groups[g], c, n_ctx, append_eos) + append_eos;
    return total;
}

/* What completion c of g adds to a micro-batch whose prompt segment p is (prompt_here) or is
 * not yet in it: tokens, attention weights (all heads) and segments. */
typedef struct {
    long tokens, att;
    int segs;
} PackAdd;
static PackAdd pack_add(long n, long p, int prompt_here, int n_head) {
    int with_prompt = !prompt_here && p > 0;
    return (PackAdd){.tokens = n + (with_prompt ? p : 0), .att = n_head * (n * (p + n) + (with_prompt ? p * p : 0)),
                     .segs = 1 + with_prompt};
}

void pack_size(const TrainGroup* groups, int n, const TokenRoles* roles, int n_head, int n_ctx, int append_eos,
               long* tokens, long* att) {
    *tokens = *att = 0;
    for (int gi = 0; gi < n; gi++) {
        const TrainGroup* g = &groups[gi];
        GroupCut cut = cut_group(g, roles, n_ctx, append_eos);
        int prompt_here = 0;
        for (int c = 0; c < g->n; c++) {
            long k = kept_completion(g, c, n_ctx, append_eos) + append_eos;
            if (k == 0) continue;
            PackAdd add = pack_add(k, cut.seg, prompt_here, n_head);
            *tokens += add.tokens;
            *att += add.att;
            prompt_here = 1;
        }
    }
}

/* Appends the prompt segment of a group: [start] and the kept prompt but its last token. */
static void put_prompt(Packer* pk, const TrainGroup* g, const GroupCut* cut) {
    PackedBatch* pb = &pk->pb;
    int start = pb->n_tokens, n = cut->seg;
    for (int i = 0; i < n; i++) {
        pk->inputs[start + i] = framed_prompt_token(g, cut, &pk->roles, i);
        pk->targets[start + i] = pk->roles.none;
        pk->weight[start + i] = 0.0f;
        pk->behaviour[start + i] = NAN;
        pk->loss_id[start + i] = -1;
    }
    pk->segs[pb->n_segments++] = (Segment){.start = start, .len = n, .prefix = -1};
    pb->n_tokens += n;
}

/* Appends completion c of g as a segment continuing prompt segment `prefix` (-1 = none). */
static void put_completion(Packer* pk, const TrainGroup* g, const GroupCut* cut, int c, const float* behaviour,
                           int kept, float w, int prefix, PackCursor* cur) {
    PackedBatch* pb = &pk->pb;
    int start = pb->n_tokens, eos = pk->append_eos, n = kept + eos;
    for (int i = 0; i < n; i++) {
        /* input: the last token of [start] prompt, then the completion */
        int in = i > 0 ? completion_token(g, c, i - 1) : framed_prompt_token(g, cut, &pk->roles, cut->seg);
        pk->inputs[start + i] = in;
        pk->targets[start + i] = i < kept ? completion_token(g, c, i) : pk->roles.end;
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
        GroupCut cut = cut_group(g, &pk->roles, pk->n_ctx, eos);
        long p = cut.seg;
        int prompt_here = 0, prefix = -1;
        for (int c = cur->completion; c < g->n; c++) {
            int kept = kept_completion(g, c, pk->n_ctx, eos);
            long n = kept + eos;
            if (n == 0) { /* nothing to learn from: an empty completion without EOS */
                cur->completion = c + 1;
                continue;
            }
            PackAdd add = pack_add(n, p, prompt_here, pk->n_head);
            if (pb->n_tokens + add.tokens > pk->cap_tokens || att + add.att > pk->cap_att ||
                pb->n_segments + add.segs > pk->cap_segments) {
                if (pb->n_tokens > 0) return 1; /* the micro-batch is full; continue from here */
                sapo_die("training: a prompt of %ld tokens with a completion of %ld does not fit the model's capacity "
                         "(%d tokens, %ld attention weights per layer)",
                         p, n, pk->cap_tokens, pk->cap_att);
            }
            if (!prompt_here && p > 0) {
                prefix = pb->n_segments;
                put_prompt(pk, g, &cut);
            }
            prompt_here = 1;
            put_completion(pk, g, &cut, c, g->behaviour ? g->behaviour[c] : NULL, kept, g->weights ? g->weights[c] : 1.0f,
                           prefix, cur);
            att += add.att;
            cur->completion = c + 1;
        }
    }
    return pb->n_tokens > 0;
}
