/* What a node records about one round: one row of its HDF5 log. The metric table below is
 * the single list of logged columns (name and meaning), used by the logger and the summary. */
#ifndef SAPO_SWARM_ROUND_RECORD_H
#define SAPO_SWARM_ROUND_RECORD_H

#include <stdint.h>

#include "tasks/infra/registry.h"

#define ROUND_METRICS(X)                                                                          \
    X(REWARD_OWN, "reward_own", "mean reward of the node's own completions this round")           \
    X(REWARD_TRAIN, "reward_train", "mean reward over the training batch, own + external (genrl's)") \
    X(EXTERNAL_USED, "external_used", "external groups in the training batch")                    \
    X(SHORTFALL, "shortfall", "J minus the external groups the pool could provide")               \
    X(EXTERNAL_FLAT, "external_flat", "external groups used whose rewards were all equal")        \
    X(EXTERNAL_REENCODED, "external_reencoded", "external groups a BPE node trained from re-encoded text (another tokenizer, or a byte node's): ratio 1, never an importance weight") \
    X(EXTERNAL_AGE_MIN, "external_age_min", "the smallest age of the external groups used: this node's round minus the round its sender sent it in (wall clock: rounds since this node took it off the network, never negative); NaN if none. On the virtual clock beside nodes of another net.slowdown the age also holds the skew of their rounds: a slow node's rounds lag, so a group from a faster peer can have a negative age, and a group from a slower peer an age above the delay") \
    X(EXTERNAL_AGE_MAX, "external_age_max", "the largest age of the external groups used (as external_age_min); NaN if none") \
    X(EXTERNAL_AGE_MEAN, "external_age_mean", "the mean age over the external groups used (as external_age_min); NaN if none") \
    X(TRAIN_ROWS, "train_rows", "sequences in the training batch ((I + external_used) x L)")      \
    X(POOL_SIZE, "pool_size", "verified external groups received this round")                     \
    X(POOL_ELIGIBLE, "pool_eligible", "pool groups the filter kept")                              \
    X(ONLINE, "online", "1 when the node was online this round (churn), else 0")                 \
    X(MSGS_SENT, "msgs_sent", "messages sent")                                                    \
    X(MSGS_RECEIVED, "msgs_received", "messages received")                                        \
    X(MSGS_DROPPED, "msgs_dropped", "messages this node did not send: lost by netem or to an offline peer")                      \
    X(MSGS_OFFLINE, "msgs_offline", "messages that reached this node while it was offline (churn), discarded unread; their senders count them in msgs_dropped (virtual clock) or msgs_sent (wall clock)") \
    X(MSGS_LATE, "msgs_late", "messages that arrived after the round that sampled")               \
    X(MSGS_REJECTED, "msgs_rejected", "received messages that failed to decode")                  \
    X(GROUPS_REJECTED, "groups_rejected", "received groups that failed verification")             \
    X(BYTES_SENT, "bytes_sent", "encoded bytes sent")                                             \
    X(BYTES_RECEIVED, "bytes_received", "encoded bytes received")                                 \
    X(T_GENERATE, "t_generate", "seconds generating and scoring own completions")                 \
    X(T_EXCHANGE, "t_exchange", "seconds encoding, exchanging, decoding and verifying")           \
    X(T_TRAIN, "t_train", "seconds in the GRPO step")                                             \
    X(T_WAIT, "t_wait", "seconds blocked waiting for peers")                                      \
    X(T_EVAL, "t_eval", "seconds evaluating")                                                     \
    X(T_ROUND, "t_round", "wall seconds of the whole round, a straggler's sleep included")        \
    X(LOSS, "loss", "GRPO surrogate loss (first epoch)")                                          \
    X(GRAD_NORM, "grad_norm", "gradient norm before clipping (last epoch)")                       \
    X(KL, "kl", "mean per-token KL to the reference policy (0 without one)")                      \
    X(FORMAT_RATE, "format_rate", "share of own completions with an extractable answer")          \
    X(COMPLETION_LEN, "completion_len", "mean own completion length in bytes")                    \
    X(TRAIN_TOKENS, "train_tokens", "completion tokens in the training batch")                    \
    X(OFFPOLICY_WEIGHT, "offpolicy_weight", "mean importance weight min(pi/mu, grpo.tis_cap) over external tokens (grpo.external = tis); NaN when none") \
    X(OFFPOLICY_CAPPED, "offpolicy_capped", "share of those external tokens whose weight was capped at grpo.tis_cap; NaN when none") \
    X(OFFPOLICY_DROPPED, "offpolicy_dropped", "share of the external completions the F-TIS filter dropped (grpo.external = ftis); NaN otherwise") \
    X(TRAIN_IN_EVAL, "train_in_eval", "own questions asked this round that the held-out set also asks (0 with tasks.exclude_eval, which draws them again)") \
    X(EVAL_PASS1, "eval_pass1", "pass@1 on the fixed held-out set (run.eval_questions from run.eval_seed); NaN when not evaluated") \
    X(SYNC_PEERS, "sync_peers", "other nodes whose weights entered this round's outer step (sync.method); 0 without one") \
    X(SYNC_AGE, "sync_age", "rounds since the stalest of those weights was computed (0: synchronous); NaN without an outer step") \
    X(SYNC_DROPPED, "sync_dropped", "weight messages this node did not send (net.transport = p2p): lost by netem or to an offline peer") \
    X(SYNC_REJECTED, "sync_rejected", "received weight messages that failed to decode (shape, count, a value not finite, checksum), dropped")

#define ROUND_METRIC_ENUM(id, name, help) RM_##id,
typedef enum { ROUND_METRICS(ROUND_METRIC_ENUM) RM_COUNT } RoundMetric;
#undef ROUND_METRIC_ENUM

extern const char* const ROUND_METRIC_NAMES[RM_COUNT];
extern const char* const ROUND_METRIC_HELP[RM_COUNT];

typedef struct {
    int64_t round;
    double m[RM_COUNT];
    double reward_by_task[TASK_N_IDS]; /* mean own reward per task id; NaN when not asked */
    double eval_by_task[TASK_N_IDS];   /* pass@1 per task id on the held-out set; NaN when not evaluated or not asked */
    int64_t weights_digest;            /* model_weights_digest at the end of the round (its bits) */
} RoundRecord;

/* Zeroes the metrics, NaN for eval_pass1 and every task of both by-task arrays. */
void round_record_clear(RoundRecord* r, int64_t round);

#endif
