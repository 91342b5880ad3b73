/* The run configuration as typed structs for the swarm layer, read once: SwarmSettings (the
 * swarm-wide keys: seeds, rounds, tasks, evaluation, the emulated network) and NodeSettings
 * (one node's keys, [node.K] overrides applied: model, optimizer, sampling, GRPO, faults).
 * node_settings.c is the one file above src/core that looks a key up by name: the CLI and
 * the benchmarks take their model shape, optimizer and sampling settings from here too.
 * A command reads them once (RunSettings) and passes them down: the node, netem, the
 * transports, the checks (node_config.h), the budget check and the node log take these
 * structs, never the Config. */
#ifndef SAPO_SWARM_NODE_SETTINGS_H
#define SAPO_SWARM_NODE_SETTINGS_H

#include <stdint.h>

#include "core/config.h"
#include "core/config_enums.h"
#include "model/generate.h"
#include "model/model.h"
#include "model/policy.h"
#include "rl/grpo.h"
#include "rl/weighting.h"
#include "swarm/net/netem.h" /* NetSettings, Netem */
#include "swarm/weight_sync.h" /* SyncSettings */

typedef struct {
    uint64_t seed;           /* swarm.seed */
    int rounds;
    const char* tasks_names; /* tasks.names: a string owned by the Config */
    TaskPreset tasks_preset;
    double max_unanswerable;
    int eval_every, eval_questions;
    int eval_first;            /* run.eval_first */
    int exclude_eval;          /* tasks.exclude_eval */
    uint64_t eval_seed;
    const char* dump_messages; /* run.dump_messages; "" = none */
    const char* run_out;       /* run.out, run.name; "" = the default */
    const char* run_name;
    int log_every, checkpoint_every;
    uint64_t init_seed;        /* model.init_seed */
    float kl;                  /* grpo.kl, also in NodeSettings.grpo */
    int ppo_epochs;
    NetSettings net;
    SyncSettings sync;         /* [sync]: weight synchronisation */
    struct {
        int steps, batch;
        float lr;
        const char* out;       /* "" = RUN_DIR/warmup.ckpt */
        const char* tasks;     /* the demonstrated tasks; "" = tasks.names */
        const char* format_tasks; /* tasks demonstrated format-only (another question's answer); "" = none */
        double format_share;   /* the share of each step's demonstrations that are format-only */
        int format_other_task; /* pretrain.format_decoy = other_task: the shown answer is another task's */
    } pretrain;                /* [pretrain], for sapo pretrain */
} SwarmSettings;

typedef struct {
    ModelShape model;
    BackendChoice backend;   /* model.backend, for model_backend_for */
    const char* init;        /* model.init; "" = random init */
    ModelFamilyId family;    /* model.family; a llama node's .model: see run_settings_read_model_shapes */
    const char* hf_dir;      /* model.hf_dir; "" = none */
    int micro_tokens;
    AdamWConfig adamw;
    float grad_clip;
    GenConfig gen;           /* stop string left NULL */
    int n_local, n_external, n_groups, n_completions; /* I, J, I + J and L */
    int filter_zero_adv;     /* sampling.filter = zero_adv */
    Weighting weighting;     /* grpo.local, grpo.external and their numbers (rl/weighting.h) */
    int frozen;              /* grpo.frozen: no GRPO step */
    GrpoConfig grpo;         /* tis_cap and ftis_kl by weighting_grpo_config; logit_scale from
                                grpo.train_temperature */
    NodeFault fault;
    double slowdown;
} NodeSettings;

/* What a command reads from the configuration, once, and hands down: the swarm-wide settings
 * and those of nodes 0 .. n_nodes-1 (node[k], [node.K] applied). Its strings are the Config's:
 * the Config outlives it. */
typedef struct {
    SwarmSettings sw;
    int n_nodes;
    NodeSettings* node;   /* [n_nodes] */
    int max_node_section; /* the highest K of a [node.K] section in the config; -1 without one */
} RunSettings;

SwarmSettings swarm_settings_read(const Config* cfg);
/* Node k's settings (k < 0: the swarm-wide values). */
NodeSettings node_settings_read(const Config* cfg, int k);
/* The settings of a swarm of n_nodes (at least 1); run_settings_free releases them. Reading
 * does no file I/O: a node whose family reads a Hugging Face directory keeps the configured
 * shape until run_settings_read_model_shapes. */
RunSettings run_settings_read(const Config* cfg, int n_nodes);
/* The one step of the settings that reads files: each node whose family reads a Hugging Face
 * directory takes the directory's shape (policy_shape: its config.json, the context cut to
 * model.n_ctx). A directory that is missing or unreadable leaves the configured shape, and
 * swarm_config_check (policy_check) names what is wrong with it. */
void run_settings_read_model_shapes(RunSettings* rs);
void run_settings_free(RunSettings* rs);

/* Node's policy as model/policy.h takes it: family, hf_dir, init, backend, shape, micro_tokens. */
PolicySpec node_policy_spec(const NodeSettings* ns);

/* The run's emulated network: netem_create on swarm.seed, swarm.rounds, [net] and every
 * node's net.slowdown. */
Netem* run_settings_netem(const RunSettings* rs);

#endif
