/* A BPE node trains exactly the ids a peer with its tokenizer sampled, not the ids its text
 * re-encodes to: a completion sampled as single letters ("h","e","l","l","o") decodes to
 * "hello", which the tokenizer encodes differently. With the sender's fingerprint equal to
 * ours the packed targets are the sent ids and the behaviour log-probs come along for tis;
 * with another fingerprint, or an id outside our vocabulary, the text is re-encoded and no
 * behaviour log-prob is attached. Uses SmolLM2's tokenizer.json (scripts/get-model.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/family.h"
#include "model/prompt_codec.h"
#include "rl/pack.h"
#include "swarm/token_groups.h"
#include "../test_assert.h"

static Tokenizer* smollm2_tokenizer(void) {
    const char* src = getenv("SAPO_SOURCE_DIR");
    char cmd[1024], dir[800] = "", path[900];
    snprintf(cmd, sizeof cmd, "bash %s/scripts/get-model.sh smollm2-135m-instruct", src ? src : ".");
    FILE* p = popen(cmd, "r");
    if (!p || !fgets(dir, sizeof dir, p)) {
        printf("FAIL: %s printed no directory\n", cmd);
        exit(1);
    }
    pclose(p);
    dir[strcspn(dir, "\n")] = '\0';
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    char err[512];
    Tokenizer* t = tokenizer_load(path, err, sizeof err);
    if (!t) {
        printf("FAIL: %s\n", err);
        exit(1);
    }
    return t;
}

static int one_id(const Tokenizer* t, const char* text) {
    int *ids = NULL, n = 0;
    char err[256];
    if (tokenizer_encode(t, text, strlen(text), &ids, &n, err, sizeof err) || n != 1) {
        printf("FAIL: '%s' is not one token\n", text);
        exit(1);
    }
    int id = ids[0];
    free(ids);
    return id;
}

int main(void) {
    Tokenizer* tok = smollm2_tokenizer();
    PromptCodec codec = prompt_codec_chat(tok, PROMPT_CODEC_SYSTEM);
    uint64_t fp = tokenizer_fingerprint(tok);
    int vocab = tokenizer_vocab(tok);
    int32_t sent[5] = {one_id(tok, "h"), one_id(tok, "e"), one_id(tok, "l"), one_id(tok, "l"), one_id(tok, "o")};
    char* text = tokenizer_decode(tok, (const int*)sent, 5);
    EXPECT(!strcmp(text, "hello"), "the letters decode to '%s'", text);
    int *re = NULL, n_re = 0;
    prompt_codec_encode_text(&codec, text, &re, &n_re);
    EXPECT(n_re != 5 || memcmp(re, sent, sizeof sent), "'hello' re-encodes to the letters: the test shows nothing");
    float lps[5] = {-0.5f, -1.0f, -0.25f, -2.0f, -0.125f};
    char* comps[1] = {text};
    int32_t n_tok[1] = {5};
    int32_t* ids[1] = {sent};
    float* lpv[1] = {lps};
    RolloutGroup rg = {.n_completions = 1, .completions = comps, .tokenizer = fp, .vocab = vocab, .n_tokens = n_tok,
                       .token_ids = ids, .token_logprobs = lpv};
    /* a tiny llama model of this vocabulary, to pack the groups as training would */
    ModelShape c = {.family = MODEL_FAMILY_LLAMA, .n_layer = 1, .n_head = 2, .n_kv_head = 1, .head_dim = 4,
                   .d_model = 8, .d_ff = 8, .n_ctx = 256, .vocab = vocab, .rope_theta = 1e4f, .norm_eps = 1e-5f};
    ModelCapacity cap = model_capacity_dense(&c, 1);
    Model* m = model_create_empty(&c, model_backend_find("cpu"), &cap);
    m->roles.end = tokenizer_token_id(tok, "<|im_end|>");
    for (int variant = 0; variant < 3; variant++) { /* as sent; another tokenizer; an id beyond our vocabulary */
        TokenGroups tg;
        token_groups_init(&tg, 1, 1);
        GrpoGroup g = {.n = 1};
        int our_vocab = variant == 2 ? sent[0] : vocab; /* the first id is then out of range */
        uint64_t ours = variant == 1 ? fp + 1 : fp;
        int reenc = token_group_external(&tg, 0, &codec, ours, our_vocab, "What is 2 + 2?\n", c.n_ctx, 200, &rg, 1, &g);
        const int* want = variant == 0 ? (const int*)sent : re;
        int want_n = variant == 0 ? 5 : n_re;
        EXPECT(reenc == (variant != 0), "variant %d: re-encoded %d", variant, reenc);
        EXPECT(g.completion_lens[0] == want_n && !memcmp(g.completion_ids[0], want, sizeof(int) * want_n),
               "variant %d: the group's ids are not the %s ones", variant, variant == 0 ? "sent" : "re-encoded");
        EXPECT(variant == 0 ? g.behaviour && g.behaviour[0] == lps : g.behaviour == NULL,
               "variant %d: behaviour log-probs %s", variant, g.behaviour ? "attached" : "missing");
        /* what the packer trains: the completion segment's targets */
        Packer pk;
        packer_init(&pk, m, 0, 0);
        PackCursor cur = {0};
        EXPECT(pack_next(&pk, &g, 1, &cur) == 1, "variant %d: nothing packed", variant);
        const Segment* s = &pk.pb.segs[pk.pb.n_segments - 1];
        int same = s->len == want_n;
        for (int j = 0; same && j < want_n; j++) same = pk.pb.targets[s->start + j] == want[j];
        EXPECT(same, "variant %d: the trained targets are not the expected ids", variant);
        EXPECT(pk.pb.inputs[s->start] == g.prompt_ids[g.prompt_len - 1], "the completion does not continue the prompt");
        packer_free(&pk);
        token_groups_free(&tg);
    }
    /* a byte-level peer's text need not be UTF-8: it is re-encoded lossily, never fatal */
    char bad[] = "\xff\xfe<answer>4</answer>";
    char* bad_comps[1] = {bad};
    RolloutGroup byte_peer = {.n_completions = 1, .completions = bad_comps};
    TokenGroups tg;
    token_groups_init(&tg, 1, 1);
    GrpoGroup g = {.n = 1};
    EXPECT(token_group_external(&tg, 0, &codec, fp, vocab, "2 + 2?\n", c.n_ctx, 200, &byte_peer, 1, &g) == 1,
           "a byte peer's group was not re-encoded");
    EXPECT(g.completion_lens[0] > 0 && g.behaviour == NULL, "a byte peer's group: %d ids", g.completion_lens[0]);
    token_groups_free(&tg);
    model_free(m);
    free(re);
    free(text);
    tokenizer_free(tok);
    return test_finish("token groups");
}
