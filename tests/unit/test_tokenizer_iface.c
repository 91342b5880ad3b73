/* The Tokenizer interface (model/tokenizer.h): the byte tokenizer through it equals the tok_*
 * functions; a tiny BPE tokenizer.json written here encodes and decodes as the `tokenizers`
 * library would (merge order, added tokens, bytes cut inside a character); unsupported or
 * broken files give one-line errors; the ChatML prompt text. The comparison with the library
 * itself on real files is tests/reference/test_bpe_tokenizer.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test_assert.h"
#include "io/files.h"
#include "model/text/chat_prompt.h"
#include "model/model.h"
#include "model/tokenizer.h"

static char dir[] = "/tmp/sapo_tok_XXXXXX";

static const char* write_file(const char* name, const char* text) {
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE* f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

/* A tokenizer.json whose pre_tokenizer is PRE (a JSON object), the rest fixed: a vocabulary of
 * a few characters (printable ASCII and Latin-1 bytes stand for themselves in the byte-level
 * alphabet), merges building "hello", one added special token. */
static const char* tiny_json(const char* name, const char* pre, const char* merges) {
    static char text[4096];
    snprintf(
        text, sizeof text,
        "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null,\n"
        " \"added_tokens\": [{\"id\": 11, \"content\": \"<|im_end|>\", \"single_word\": false, \"lstrip\": false,\n"
        "   \"rstrip\": false, \"normalized\": false, \"special\": true}],\n"
        " \"normalizer\": {\"type\": \"NFC\"},\n"
        " \"pre_tokenizer\": %s,\n"
        " \"post_processor\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false},\n"
        " \"decoder\": {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false},\n"
        " \"model\": {\"type\": \"BPE\", \"dropout\": null, \"unk_token\": null, \"fuse_unk\": false,\n"
        "   \"byte_fallback\": false, \"ignore_merges\": false,\n"
        "   \"vocab\": {\"h\": 0, \"e\": 1, \"l\": 2, \"o\": 3, \"he\": 4, \"ll\": 5, \"hell\": 6, \"hello\": 7,\n"
        "             \"\\u00c3\": 8, \"\\u00a9\": 9, \"\\u0120\": 10},\n"
        "   \"merges\": %s}}\n",
        pre, merges);
    return write_file(name, text);
}

static const char* BYTE_LEVEL = "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}";
static const char* MERGES = "[\"h e\", [\"l\", \"l\"], \"he ll\", [\"hell\", \"o\"]]";

static int ids_equal(const int* a, int na, const int* b, int nb) {
    return na == nb && (na == 0 || !memcmp(a, b, (size_t)na * sizeof *a));
}

static void check_byte(void) {
    Tokenizer* t = tokenizer_byte();
    const char* text = "Hi \xC3\xA9 <|im_end|>\n";
    int want[64], *ids = NULL, n = -1;
    int nw = tok_encode(text, want, 64);
    char err[256] = "";
    EXPECT(tokenizer_encode(t, text, strlen(text), &ids, &n, err, sizeof err) == 0, "byte encode: %s", err);
    EXPECT(ids_equal(ids, n, want, nw), "byte encode through the interface differs from tok_encode (%d vs %d ids)", n,
           nw);
    char* a = tokenizer_decode(t, ids, n);
    char* b = tok_decode(want, nw);
    EXPECT(!strcmp(a, b) && !strcmp(a, text), "byte decode: '%s' vs '%s'", a, b);
    free(a);
    free(b);
    int with_specials[] = {TOK_BOS, 'o', 'k', TOK_EOS, TOK_PAD};
    a = tokenizer_decode(t, with_specials, 5);
    EXPECT(!strcmp(a, "ok"), "byte decode skips specials: '%s'", a);
    free(a);
    EXPECT(tokenizer_vocab(t) == GPT_VOCAB, "byte vocab %d", tokenizer_vocab(t));
    EXPECT(!strcmp(tokenizer_kind(t), "byte"), "kind %s", tokenizer_kind(t));
    EXPECT(tokenizer_token_id(t, "<|im_end|>") == -1, "byte tokenizer names no specials");
    Tokenizer* t2 = tokenizer_byte();
    EXPECT(tokenizer_fingerprint(t) == tokenizer_fingerprint(t2) && tokenizer_fingerprint(t) != 0, "byte fingerprint");
    free(ids);
    tokenizer_free(t);
    tokenizer_free(t2);
}

static void expect_encode(const Tokenizer* t, const char* text, const int* want, int nw) {
    int *ids = NULL, n = -1;
    char err[256] = "";
    EXPECT(tokenizer_encode(t, text, strlen(text), &ids, &n, err, sizeof err) == 0, "encode '%s': %s", text, err);
    EXPECT(ids && ids_equal(ids, n, want, nw), "encode '%s': %d ids, first %d", text, n, n > 0 ? ids[0] : -1);
    free(ids);
}

static void check_bpe(void) {
    char err[256] = "";
    Tokenizer* t = tokenizer_load(tiny_json("tiny.json", BYTE_LEVEL, MERGES), err, sizeof err);
    EXPECT(t != NULL, "tiny tokenizer.json: %s", err);
    if (!t) return;
    EXPECT(!strcmp(tokenizer_kind(t), "bpe"), "kind %s", tokenizer_kind(t));
    EXPECT(tokenizer_vocab(t) == 12, "vocab %d", tokenizer_vocab(t));
    EXPECT(tokenizer_token_id(t, "<|im_end|>") == 11 && tokenizer_token_id(t, "hello") == 7 &&
               tokenizer_token_id(t, "<|im_start|>") == -1,
           "token ids");
    /* "hellohe" is one word: h+e merges first (both places), then l+l, he+ll, hell+o. */
    expect_encode(t, "hellohe<|im_end|>", (const int[]){7, 4, 11}, 3);
    /* A space is its own word (GPT-2 regex: " hello" is one word, but the vocabulary has no
     * " h", so Ġ stays alone); 'x' has no token and no unk_token: dropped, as the library does. */
    expect_encode(t, " hello", (const int[]){10, 7}, 2);
    expect_encode(t, "hex", (const int[]){4}, 1);
    /* é (C3 A9) decomposed (e + U+0301) is first composed by NFC. */
    expect_encode(t, "\xC3\xA9", (const int[]){8, 9}, 2);
    expect_encode(t, "e\xCC\x81", (const int[]){8, 9}, 2);
    int *ids = NULL, n = 0;
    EXPECT(tokenizer_encode(t, "\xC3(", 2, &ids, &n, err, sizeof err) == -1 && strstr(err, "not valid UTF-8"),
           "invalid UTF-8 refused: %s", err);
    free(ids);

    size_t len = 0;
    char* s = tokenizer_decode_n(t, (const int[]){7, 11, 10, 4, 8, 9}, 6, &len);
    EXPECT(!strcmp(s, "hello<|im_end|> he\xC3\xA9") && len == strlen(s), "decode: '%s'", s);
    free(s);
    /* A sequence that stops inside a character: U+FFFD, as from_utf8_lossy; unknown ids skipped. */
    s = tokenizer_decode(t, (const int[]){7, 8, 99, -1}, 4);
    EXPECT(!strcmp(s, "hello\xEF\xBF\xBD"), "decode of a cut character: '%s'", s);
    free(s);
    s = tokenizer_decode(t, (const int[]){9, 8, 8, 9}, 4);
    EXPECT(!strcmp(s, "\xEF\xBF\xBD\xEF\xBF\xBD\xC3\xA9"), "decode of stray bytes: '%s'", s);
    free(s);

    /* Another merge order is another tokenizer: a different fingerprint. */
    Tokenizer* t2 = tokenizer_load(tiny_json("tiny2.json", BYTE_LEVEL, "[\"l l\", \"h e\", \"he ll\", \"hell o\"]"),
                                   err, sizeof err);
    EXPECT(t2 && tokenizer_fingerprint(t2) != tokenizer_fingerprint(t), "fingerprints of different merges");
    Tokenizer* t3 = tokenizer_load(tiny_json("tiny3.json", BYTE_LEVEL, MERGES), err, sizeof err);
    EXPECT(t3 && tokenizer_fingerprint(t3) == tokenizer_fingerprint(t), "fingerprint of the same file");
    Tokenizer* b = tokenizer_byte();
    EXPECT(tokenizer_fingerprint(b) != tokenizer_fingerprint(t), "byte and BPE fingerprints");
    tokenizer_free(b);
    tokenizer_free(t2);
    tokenizer_free(t3);
    tokenizer_free(t);
}

static void expect_load_error(const char* path, const char* fragment) {
    char err[512] = "";
    Tokenizer* t = tokenizer_load(path, err, sizeof err);
    EXPECT(t == NULL, "%s loaded, expected an error with '%s'", path, fragment);
    EXPECT_MSG(err, fragment);
    EXPECT(!strchr(err, '\n'), "error is one line: %s", err);
    tokenizer_free(t);
}

static void check_errors(void) {
    char missing[300];
    snprintf(missing, sizeof missing, "%s/absent.json", dir);
    expect_load_error(missing, "cannot read");
    expect_load_error(write_file("notjson.json", "{\"model\": [1, 2"), "not valid JSON");
    expect_load_error(tiny_json("meta.json", "{\"type\": \"Metaspace\", \"replacement\": \"_\"}", MERGES),
                      "tokenizer.json: pre_tokenizer type 'Metaspace' is not supported");
    expect_load_error(tiny_json("nobl.json", "{\"type\": \"Digits\", \"individual_digits\": true}", MERGES),
                      "pre_tokenizer without ByteLevel");
    expect_load_error(tiny_json("merge.json", BYTE_LEVEL, "[\"h q\"]"),
                      "model.merges[0]: 'q' is not in the vocabulary");
    expect_load_error(tiny_json("merge2.json", BYTE_LEVEL, "[\"hello\"]"), "model.merges[0]: expected \"A B\"");
    expect_load_error(tiny_json("rx.json",
                                "{\"type\": \"Split\", \"pattern\": {\"Regex\": \"[a\"}, \"behavior\": \"Isolated\"}",
                                MERGES),
                      "pre_tokenizer Split: pattern does not compile");
}

static void check_chatml(void) {
    char* p = chatml_prompt("You are terse.", "What is 2+2?");
    EXPECT(!strcmp(p, "<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                      "<|im_start|>assistant\n"),
           "chatml with system: %s", p);
    free(p);
    p = chatml_prompt(NULL, "hi");
    EXPECT(!strcmp(p, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"), "chatml without system: %s", p);
    free(p);
}

int main(void) {
    if (!mkdtemp(dir)) {
        printf("cannot make a temporary folder\n");
        return 1;
    }
    check_byte();
    check_bpe();
    check_errors();
    check_chatml();
    if (remove_tree(dir) != 0) printf("note: could not remove %s\n", dir);
    return test_finish("test_tokenizer_iface");
}
