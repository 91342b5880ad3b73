/* The tasks a swarm works on (tasks.names at tasks.preset), each with its generator config,
 * and how a node turns a task item into a question prompt and a reward. */
#ifndef SAPO_SWARM_TASKSET_H
#define SAPO_SWARM_TASKSET_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "core/config_enums.h" /* TaskPreset: tasks.preset */
#include "core/rng.h"
#include "tasks/infra/task.h"

typedef struct {
    int task_id;            /* fixed id (src/tasks/registry.h) */
    const TaskSpec* spec;
    cJSON* config;          /* the preset's generator config */
    char* config_json;      /* the same, as compact JSON text (what messages carry) */
} TaskSlot;

typedef struct {
    int n;
    TaskSlot slots[16];
} TaskSet;

/* names: "all" or a comma-separated list of task names, at preset. Returns 0, or -1 with err
 * naming the unknown task (or a task without that preset). */
int taskset_build(TaskSet* ts, const char* names, TaskPreset preset, char* err, size_t errlen);
void taskset_free(TaskSet* ts);
/* The slot of a task id, or NULL when the set does not hold it. */
const TaskSlot* taskset_find(const TaskSet* ts, int task_id);

/* A question a node asks: item `index` of the dataset (task, seed, config). */
typedef struct {
    const TaskSlot* slot;
    int64_t seed;
    int64_t index;
    cJSON* entry;  /* {"question", "answer", "metadata"} */
    char* prompt;  /* what the policy sees */
} Question;

/* Draws a task uniformly (specialties with replacement) and a fresh 48-bit dataset seed
 * from rng, and generates the item. Returns 0 or -1 with err. */
int question_draw(const TaskSet* ts, RngStream* rng, Question* q, char* err, size_t errlen);
void question_free(Question* q);
/* What a question shares, read from its item: its text, its ground truth (NULL where the
 * dataset stores None) and its metadata as compact JSON text (heap: the caller frees it). */
const char* question_text(const Question* q);
const char* question_answer(const Question* q);
char* question_metadata_json(const Question* q);

/* The prompt for a question text: the question, then a newline; the policy answers
 * "<answer>...</answer>" (what the warm-up demonstrates). Heap string. */
char* question_prompt(const char* question);
/* The tail of a prompt that generation keeps: tok_encode_prompt gives prompts at most
 * n_ctx - max_new_tokens tokens, BOS included, keeping the end. Training packs the same
 * tail, so the policy is trained on what it sees when it answers. */
const char* prompt_tail(const char* prompt, int n_ctx, int max_new_tokens);
/* The prompt bytes that tail keeps: n_ctx - max_new_tokens - 1 (the BOS token), 0 when
 * that is negative. */
size_t prompt_room(int n_ctx, int max_new_tokens);

/* The completion a perfect policy writes for an answer text: "<answer>ANSWER</answer>". */
char* answer_demonstration(const char* answer);

/* The stop string that ends a completion. */
#define COMPLETION_STOP "</answer>"

#endif
