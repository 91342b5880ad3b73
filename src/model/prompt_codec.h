/* How a model reads a task prompt and how its sampled tokens become the text that is scored
 * and shared, one codec per tokenizer: the byte-level GPT reads TOK_BOS and the prompt's
 * bytes; a Llama/Qwen2 model a ChatML conversation (a system message asking for the final
 * answer in <answer> tags, the prompt as the user's message, the assistant header) through
 * its BPE tokenizer. Both keep the end of a prompt that does not fit, so the question's tail
 * survives. */
#ifndef SAPO_MODEL_PROMPT_CODEC_H
#define SAPO_MODEL_PROMPT_CODEC_H

#include <stddef.h>

#include "model/tokenizer.h"

/* The system message of the chat form: the paper's answer format. */
#define PROMPT_CODEC_SYSTEM                                                                                      \
    "You are a helpful assistant. Solve the user's problem and give only the final answer inside "              \
    "<answer> </answer> tags, for example <answer>42</answer>."

typedef struct {
    const Tokenizer* tok; /* NULL: byte-level */
    const char* system;   /* the chat form's system message (NULL: none) */
    int stops[2];         /* ids that end a completion (not part of its text); -1 = none */
} PromptCodec;

/* The byte-level codec. */
PromptCodec prompt_codec_byte(void);
/* The chat codec of a BPE tokenizer: ends at <|im_end|> and <|endoftext|>. */
PromptCodec prompt_codec_chat(const Tokenizer* tok, const char* system);

/* The tokens the model reads for a task prompt, at most max_tokens (the tail that fits);
 * returns the count. */
int prompt_codec_encode(const PromptCodec* c, const char* prompt, int* out, int max_tokens);
/* The tokens the model would read for a task prompt with no limit (byte-level: TOK_BOS and
 * its bytes; chat: the whole ChatML conversation); prompt_codec_encode keeps the last
 * min(count, max_tokens) of them. */
int prompt_codec_count(const PromptCodec* c, const char* prompt);
/* The text of a completion's tokens (heap): an end token and anything after it is not text. */
char* prompt_codec_text(const PromptCodec* c, const int* ids, int n);
/* A received completion's text as this model's tokens (heap *ids, *n; byte-level: its bytes;
 * a BPE tokenizer reads invalid UTF-8 as U+FFFD, like text decoded lossily from bytes). */
void prompt_codec_encode_text(const PromptCodec* c, const char* text, int** ids, int* n);
/* Whether id ends a completion. */
int prompt_codec_is_stop(const PromptCodec* c, int id);

#endif
