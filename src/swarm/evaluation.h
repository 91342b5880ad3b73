/* The one evaluation of a policy on the fixed held-out set (swarm/evalset.h): every
 * question answered once with the given sampler settings, scored by the task verifiers,
 * pass@1 overall and per task. `sapo run` (each node, every run.eval_every rounds) and
 * `sapo pretrain` (the warm-up's report) both measure through evaluation_run. */
#ifndef SAPO_SWARM_EVALUATION_H
#define SAPO_SWARM_EVALUATION_H

#include "core/rng.h"
#include "model/generate.h"
#include "model/prompt_codec.h"
#include "model/model.h"
#include "swarm/evalset.h"

/* Answers es's questions with m (all of them in one call, the model splitting them into
 * chunks of its capacity), sampling from rng with gen (gen->stop as the swarm sets it).
 * The model reads each prompt and its answers are read back through codec (its tokenizer's).
 * Returns pass@1, the mean reward over the questions (NaN for an empty set); by_task gets
 * the mean per task id (NaN for a task the set does not ask); tagged_by_task, when not NULL,
 * the share of answers per task id holding an <answer> tag. */
double evaluation_run(Model* m, const PromptCodec* codec, const GenConfig* gen, const EvalSet* es, RngStream* rng,
                      double by_task[TASK_N_IDS], double tagged_by_task[TASK_N_IDS]);

#endif
