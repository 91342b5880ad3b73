/* The fixed held-out evaluation set: run.eval_questions questions generated once from
 * run.eval_seed alone, the same on every node of every run that asks the same tasks at the
 * same preset, whatever swarm.seed, rank, round or the rest of the configuration.
 *
 * Balanced: the asked tasks are taken in task-id (registry) order, whatever the order of
 * tasks.names, and question i asks task i mod n_tasks, so each task gets floor(n / n_tasks)
 * or one more questions. The k-th question of a task is item 0 of the dataset
 * (task, seed, preset config) with the 48-bit seed drawn from the stream
 * (eval_seed, task id, k, RNG_EVAL_SET); when the generator refuses an item the next seed of
 * the same stream is taken. So a task's k-th question is also the same in a set over other
 * tasks (a run over all nine tasks and one over five share those five tasks' questions). */
#ifndef SAPO_SWARM_EVALSET_H
#define SAPO_SWARM_EVALSET_H

#include <stddef.h>
#include <stdint.h>

#include "swarm/taskset.h"
#include "tasks/infra/registry.h"

typedef struct {
    uint64_t key; /* FNV-1a of the task id and the question text */
    int index;    /* the question's place in the set */
} EvalKey;

typedef struct {
    int n;                       /* questions */
    Question* qs;                /* the questions, entries and prompts kept */
    char** prompts;              /* prompts[i] = qs[i].prompt */
    int n_by_task[TASK_N_IDS];   /* questions per task id */
    uint64_t digest;             /* FNV-1a over every question's task, seed, text and answer */
    EvalKey* keys;               /* [n], sorted by key: what evalset_contains looks up */
} EvalSet;

/* Builds the set of n questions (n >= 0) over ts's tasks. Returns 0, or -1 with err (a
 * generator that refused 100 seeds in a row). */
int evalset_build(EvalSet* es, const TaskSet* ts, uint64_t eval_seed, int n, char* err, size_t errlen);
void evalset_free(EvalSet* es);

/* 1 when the set asks q: the same task and the same question text (a training question that
 * the held-out set also asks), else 0. */
int evalset_contains(const EvalSet* es, const Question* q);

/* Draws in a row that may all be held-out questions (tasks.exclude_eval draws them again, in a
 * node's round and in the warm-up) before the command stops: the question space is too small. */
#define EVALSET_EXCLUDE_TRIES 1000

/* pass@1 of one answer per question (texts[i] answers question i): the mean reward, and per
 * task id the mean reward over that task's questions in by_task (NaN for a task the set does
 * not ask). NaN when the set is empty. */
double evalset_score(const EvalSet* es, char* const* texts, double by_task[TASK_N_IDS]);

#endif
