/* Reward path of rl-swarm / genrl: the answer is what reasoning_gym.utils.extract_answer
 * finds in a completion (the LAST <answer>...</answer>, stripped), and the reward is the
 * task verifier's score of it, 0 when the completion holds no answer. */
#ifndef SAPO_TASKS_ANSWER_H
#define SAPO_TASKS_ANSWER_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "tasks/infra/task.h"

/* Python's re.finditer(r"<answer>\s?(.*?)\s?</answer>", completion, re.DOTALL), last
 * match's group 1, then str.strip(). Equivalently: pair each "<answer>" with the first
 * "</answer>" after it, resume the search after that closing tag, keep the last pair, and
 * strip Python whitespace (str.isspace code points, UTF-8 decoded; an invalid byte is never
 * whitespace) from both ends. Returns a heap string (caller frees), or NULL when the
 * completion holds no "<answer>" followed later by "</answer>". Works on `len` bytes, so an
 * embedded NUL is ordinary text; the result is NUL-terminated and *out_len (may be NULL)
 * receives its length. */
char* answer_extract_n(const char* completion, size_t len, size_t* out_len);
/* The same on a NUL-terminated completion (NULL gives NULL). */
char* answer_extract(const char* completion);

/* reward = spec->score(answer_extract(completion), entry), and 0 when nothing is extracted
 * (the definition). rl-swarm instead hands None to the scorer; that differs only for
 * fraction_simplification, whose scorer gives None 0.01 (spec->score(NULL, 0, entry) keeps that).
 * The completion is the `len` bytes at `completion`; U+0000 in it is ordinary text. */
double task_reward_n(const TaskSpec* spec, const char* completion, size_t len, const cJSON* entry);
/* The same on a NUL-terminated completion (NULL gives 0). */
double task_reward(const TaskSpec* spec, const char* completion, const cJSON* entry);

#endif
