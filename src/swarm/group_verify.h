/* A received group is trusted for nothing: the receiver regenerates the question from
 * (task, seed, index, config) with its own generator, rejects the group when the question,
 * ground truth or metadata differ, and scores every completion with its own verifier. */
#ifndef SAPO_SWARM_GROUP_VERIFY_H
#define SAPO_SWARM_GROUP_VERIFY_H

#include <stddef.h>

#include "swarm/net/message.h"

typedef enum {
    GROUP_OK = 0,
    GROUP_UNKNOWN_TASK,  /* task id not ported here */
    GROUP_BAD_CONFIG,    /* config is not one of the task's presets, or the generator refuses it */
    GROUP_MISMATCH,      /* question, answer or metadata differ from the regenerated item */
    GROUP_BAD_SIZE,      /* no completions, or more than the receiver trains on */
} GroupVerdict;

/* Verifies g; on GROUP_OK writes the receiver's reward of each completion into rewards
 * (g->n_completions floats). max_completions bounds the group size. why (may be NULL)
 * receives a one-line reason otherwise. */
GroupVerdict group_verify(const RolloutGroup* g, int max_completions, float* rewards, char* why, size_t whylen);

#endif
