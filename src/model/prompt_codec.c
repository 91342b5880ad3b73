/* Prompt and completion framing per tokenizer (see prompt_codec.h). */
#include "model/prompt_codec.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "model/text/chat_prompt.h"
#include "model/text/utf8_text.h"

PromptCodec prompt_codec_byte(void) {
    PromptCodec c = {.tok = NULL, .system = NULL, .stops = {-1, -1}};
    return c;
}

PromptCodec prompt_codec_chat(const Tokenizer* tok, const char* system) {
    PromptCodec c = {.tok = tok, .system = system,
                     .stops = {tokenizer_token_id(tok, "<|im_end|>"), tokenizer_token_id(tok, "<|endoftext|>")}};
    return c;
}

int prompt_codec_is_stop(const PromptCodec* c, int id) { return id >= 0 && (id == c->stops[0] || id == c->stops[1]); }

int prompt_codec_encode(const PromptCodec* c, const char* prompt, int* out, int max_tokens) {
    if (!c->tok) return tok_encode_prompt(prompt, out, max_tokens);
    char* chat = chatml_prompt(c->system, prompt);
    int *ids = NULL, n = 0;
    char err[256];
    if (tokenizer_encode(c->tok, chat, strlen(chat), &ids, &n, err, sizeof err)) sapo_die("prompt: %s", err);
    int keep = n < max_tokens ? n : max_tokens;
    memcpy(out, ids + (n - keep), (size_t)keep * sizeof(int));
    free(ids);
    free(chat);
    return keep;
}

int prompt_codec_count(const PromptCodec* c, const char* prompt) {
    if (!c->tok) return 1 + (int)strlen(prompt);
    char* chat = chatml_prompt(c->system, prompt);
    int *ids = NULL, n = 0;
    char err[256];
    if (tokenizer_encode(c->tok, chat, strlen(chat), &ids, &n, err, sizeof err)) sapo_die("prompt: %s", err);
    free(ids);
    free(chat);
    return n;
}

char* prompt_codec_text(const PromptCodec* c, const int* ids, int n) {
    if (!c->tok) return tok_decode(ids, n);
    int k = 0;
    while (k < n && !prompt_codec_is_stop(c, ids[k])) k++;
    return tokenizer_decode(c->tok, ids, k);
}

void prompt_codec_encode_text(const PromptCodec* c, const char* text, int** ids, int* n) {
    size_t len = strlen(text);
    if (!c->tok) {
        *ids = mallocCheck((len ? len : 1) * sizeof(int));
        *n = tok_encode(text, *ids, (int)len);
        return;
    }
    /* a byte-level peer may send any bytes: invalid UTF-8 reads as U+FFFD, as the tokenizers
     * library sees text decoded from bytes */
    size_t clean_len;
    char* clean = utf8_lossy(text, len, &clean_len);
    char err[256];
    if (tokenizer_encode(c->tok, clean, clean_len, ids, n, err, sizeof err)) sapo_die("completion text: %s", err);
    free(clean);
}
