/* The ChatML prompt of instruction-tuned models (Qwen2.5, SmolLM2) as plain text: the
 * special tokens are written as their text, which the BPE tokenizer turns into their ids. */
#ifndef SAPO_MODEL_CHAT_PROMPT_H
#define SAPO_MODEL_CHAT_PROMPT_H

/* "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n",
 * without the system block when system is NULL; a heap string. */
char* chatml_prompt(const char* system, const char* user);

#endif
