/* One swarm node (one MPI rank): its policy, tasks, settings and the SAPO round:
 * ask I questions, generate L completions each, score them, share every group, verify what
 * peers shared, draw J external groups from the filtered pool, take a GRPO step on the
 * I + J groups, with sync.method every sync.every rounds an outer step on its weights
 * (docs/SYNC.md), evaluate now and then, and fill a RoundRecord. */
#ifndef SAPO_SWARM_NODE_H
#define SAPO_SWARM_NODE_H

#include <mpi.h>
#include <stddef.h>

#include "core/config_enums.h" /* ExternalWeighting: how received groups are trained */
#include "model/generate.h"
#include "model/model.h"
#include "rl/grpo.h"
#include "swarm/evalset.h"
#include "swarm/net/netem.h"
#include "swarm/net/transport.h"
#include "swarm/node_fault.h"
#include "swarm/node_settings.h"
#include "model/prompt_codec.h"
#include "swarm/pool.h"
#include "swarm/round_record.h"
#include "swarm/taskset.h"
#include "swarm/weight_sync.h"

typedef struct {
    int rank, n_nodes;
    MPI_Comm comm;
    SwarmSettings sw;       /* swarm.seed, run.eval_*, ...: its strings (the Config's) are not read after node_create */
    NodeSettings set;       /* this node's I, J, L, optimizer, sampling, GRPO, fault; set.gen.stop = COMPLETION_STOP */
    EvalSet eval;           /* the fixed held-out set (run.eval_questions from run.eval_seed), built once */
    TaskSet tasks;
    Model* policy;
    Model* ref;             /* frozen initial policy, only when grpo.kl > 0 */
    Tokenizer* tok;         /* a llama node's BPE tokenizer (model.hf_dir); NULL: byte-level */
    PromptCodec codec;      /* how the policy reads prompts and how its tokens become text */
    GrpoTrainer* trainer;
    Pool pool;
    Transport* transport;   /* net.transport: the all-gather (NCCL or MPI) or p2p (net/transport.h) */
    char exchange_info[192]; /* which transport and why, for the run log */
    Netem* netem;
    WeightSync* sync;       /* sync.method's outer state (weight_sync.h); NULL with none */
    struct SyncP2P* sync_p2p; /* with sync.method over p2p: the weight messages' transport (sync_exchange.h) */
    int ship_rollouts;        /* 0: weights-only sharing (sync on, no node draws external groups): messages carry no group */
    double slowdown;        /* this node's net.slowdown (real sleep with clock = wall) */
    ModelCapacity cap;      /* what the policy (and ref) allocate: node_model_capacity */
    int max_prompts;        /* prompts generated for at once: max(I, eval_questions) */
    int max_rows;           /* completions generated at once: max(I * L, eval_questions) */
    int* prompt_tokens;     /* (max_prompts, n_ctx) */
    int* prompt_lens;
    int* out_tokens;        /* (max_rows, max_new_tokens) */
    int* out_lens;
    int** own_rows;         /* (max_rows) views of out_tokens rows, for a BPE node's training */
    float* out_logprobs;    /* (max_rows, max_new_tokens) the sampler's log-prob of each token */
    char dump_dir[512];     /* run.dump_messages: where each round's sent message is written; "" = none */
} SwarmNode;

/* Builds node `rank` of the swarm of rs->n_nodes from its settings (the init checkpoint
 * loaded when model.init is set). Returns NULL with err on failure. */
SwarmNode* node_create(const RunSettings* rs, int rank, MPI_Comm comm, char* err, size_t errlen);
void node_free(SwarmNode* node);
/* When every node stops after round end_round - 1 (normally the last round): completes the
 * node's sends and drains what is still addressed to it, so MPI can finalize. Collective in
 * effect: every node calls it with the same end_round. */
void node_finish(SwarmNode* node, int end_round);

/* Runs round `round` (0-based) and fills rec. Collective: every node calls it each round. */
void node_round(SwarmNode* node, int round, RoundRecord* rec);

#endif
