/* Budget check of a task set: before any work, how many of a task's items cannot be answered
 * within gen.max_new_tokens (the reference completion "<answer>ANSWER</answer>" is longer),
 * and how many prompts lose their beginning to the n_ctx - max_new_tokens room that
 * generation keeps. Each node is measured in its own tokens: a byte-level node in bytes
 * (its prompt is TOK_BOS and the prompt's bytes), a llama node in the tokens of its
 * model.hf_dir's tokenizer.json (its prompt is the whole ChatML conversation of
 * prompt_codec_chat, no BOS). Items come from the node's own drawing path (question_draw) on a
 * fixed stream of this check's own, so the numbers are the same for every run and swarm.seed. */
#ifndef SAPO_SWARM_BUDGET_CHECK_H
#define SAPO_SWARM_BUDGET_CHECK_H

#include <stddef.h>
#include <stdio.h>

#include "model/tokenizer.h"
#include "swarm/node_settings.h"
#include "swarm/taskset.h"

/* Items sampled per task by budget_check_settings. */
#define BUDGET_ITEMS 200

/* The check's own stream seed: item i of task T is draw i of rng_stream(BUDGET_SEED, T, 0,
 * RNG_BUDGET) through question_draw; the items do not depend on swarm.seed. */
#define BUDGET_SEED 0x5a9b0d6e7ULL

/* One task's sampled lengths in one unit, independent of n_ctx and max_new_tokens. */
typedef struct {
    const TaskSlot* slot;
    const Tokenizer* tok; /* NULL: bytes (a byte-level node); else tokens of this BPE tokenizer (a llama node) */
    int n_items;
    int* prompt_len; /* bytes: strlen(question_prompt(question)); tokens: prompt_codec_count of the chat codec */
    int* answer_len; /* length of answer_demonstration(answer) (tokens: prompt_codec_encode_text); -1: None */
} BudgetSample;

/* Draws n_items items of every task of ts (stream keyed by the task id) and records their
 * lengths, in bytes (tok NULL) or in tok's tokens, in out[0 .. ts->n). Returns 0, or -1 with
 * err when a task cannot generate. */
int budget_sample_in(const TaskSet* ts, const Tokenizer* tok, int n_items, BudgetSample* out, char* err,
                     size_t errlen);
/* budget_sample_in in bytes. */
int budget_sample(const TaskSet* ts, int n_items, BudgetSample* out, char* err, size_t errlen);
void budget_sample_free(BudgetSample* s, int n);
/* "bytes" or "tokens": the unit of a sample taken with tok. */
const char* budget_unit(const Tokenizer* tok);

/* One task at one (n_ctx, max_new_tokens), every length in the sample's unit. */
typedef struct {
    const char* name;
    int n_items;
    int n_measurable;    /* items with a reference answer (string); 0: no answer column ("-") */
    int n_unanswerable;  /* reference completion, tags included, longer than max_new_tokens */
    int n_cut;           /* prompt longer than the room generation keeps: its beginning is lost */
    int answer_max;      /* longest reference completion (tags included); 0 when unmeasurable */
    double answer_mean;
    int prompt_max;      /* longest prompt (bytes: question + newline; tokens: the ChatML conversation) */
    double prompt_mean;
    int prompt_room;     /* what generation keeps of a prompt, >= 0: bytes n_ctx - max_new_tokens - 1 (BOS),
                          * tokens n_ctx - max_new_tokens */
    const char* unit;    /* budget_unit of the sample */
} TaskBudget;

TaskBudget budget_measure(const BudgetSample* s, int n_ctx, int max_new_tokens);
/* Share of measurable items that are unanswerable; 0 when none is measurable. */
double budget_unanswerable_share(const TaskBudget* b);
double budget_cut_share(const TaskBudget* b);

/* The whole check of a swarm's settings for its nodes 0 .. rs->n_nodes-1: every distinct (unit,
 * model.n_ctx, gen.max_new_tokens) among them, the unit being bytes for a byte-level node and
 * the tokens of model.hf_dir/tokenizer.json for a llama node (each distinct hf_dir's tokenizer
 * loaded once), each task of tasks.names at tasks.preset. Prints the per-task table to `table`
 * (NULL: no table) with `prefix` before each line, its header naming the nodes and the unit.
 * Returns 0, or -1 with one line in err naming the worst task over tasks.max_unanswerable, its
 * share, the threshold, the unit, the nodes and what to change (or why a llama node's
 * tokenizer cannot be read). */
int budget_check_settings(const RunSettings* rs, FILE* table, const char* prefix, char* err, size_t errlen);

#endif
