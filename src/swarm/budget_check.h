/* Budget check of a task set: before any work, how many of a task's items cannot be answered
 * within gen.max_new_tokens (the reference completion "<answer>ANSWER</answer>" is longer),
 * and how many prompts lose their beginning to the n_ctx - max_new_tokens room that
 * generation keeps. Items come from the node's own drawing path (question_draw) on a fixed
 * stream of this check's own, so the numbers are the same for every run and swarm.seed. */
#ifndef SAPO_SWARM_BUDGET_CHECK_H
#define SAPO_SWARM_BUDGET_CHECK_H

#include <stddef.h>
#include <stdio.h>

#include "core/config.h"
#include "swarm/taskset.h"

/* Items sampled per task by budget_check_config. */
#define BUDGET_ITEMS 200

/* One task's sampled lengths, independent of n_ctx and max_new_tokens. */
typedef struct {
    const TaskSlot* slot;
    int n_items;
    int* prompt_bytes; /* strlen(question_prompt(question)) per item */
    int* answer_bytes; /* strlen(answer_demonstration(answer)) per item; -1: the stored answer is None */
} BudgetSample;

/* Draws n_items items of every task of ts (stream keyed by the task id) and records their
 * lengths in out[0 .. ts->n). Returns 0, or -1 with err when a task cannot generate. */
int budget_sample(const TaskSet* ts, int n_items, BudgetSample* out, char* err, size_t errlen);
void budget_sample_free(BudgetSample* s, int n);

/* One task at one (n_ctx, max_new_tokens). */
typedef struct {
    const char* name;
    int n_items;
    int n_measurable;    /* items with a reference answer (string); 0: no answer column ("-") */
    int n_unanswerable;  /* reference completion, tags included, > max_new_tokens bytes */
    int n_cut;           /* prompt longer than the room generation keeps: its beginning is lost */
    int answer_max;      /* longest reference completion in bytes (tags included); 0 when unmeasurable */
    double answer_mean;
    int prompt_max;      /* longest prompt in bytes (question + newline) */
    double prompt_mean;
    int prompt_room;     /* prompt bytes generation keeps: n_ctx - max_new_tokens - 1 (BOS) */
} TaskBudget;

TaskBudget budget_measure(const BudgetSample* s, int n_ctx, int max_new_tokens);
/* Share of measurable items that are unanswerable; 0 when none is measurable. */
double budget_unanswerable_share(const TaskBudget* b);
double budget_cut_share(const TaskBudget* b);

/* The whole check of a configuration for nodes 0 .. n_nodes-1: every distinct (model.n_ctx,
 * gen.max_new_tokens) among them, each task of tasks.names at tasks.preset. Prints the
 * per-task table to `table` (NULL: no table) with `prefix` before each line. Returns 0, or
 * -1 with one line in err naming the worst task over tasks.max_unanswerable, its share, the
 * threshold, and what to change. */
int budget_check_config(const Config* cfg, int n_nodes, FILE* table, const char* prefix, char* err, size_t errlen);

#endif
