/* CONFIG_SCHEMA: every configuration key, its type, default, bounds and help, grouped by
 * INI section. To add a key, add one line to its section's group (or a new group with a
 * comment); the parser, `sapo info` and config_write pick it up from here. */
#include "core/config.h"

#define PER_NODE 1 /* may be overridden in [node.K] */
#define GLOBAL 0   /* one value for the whole swarm */
#define TWO_62 4611686018427387904.0 /* 2^62: seeds stay clear of signed overflow when mixed */

#define INT(key, def, lo, hi, node, help) {key, CFG_INT, def, lo, hi, NULL, node, help, 0, 0}
#define FLOAT(key, def, lo, hi, node, help) {key, CFG_FLOAT, def, lo, hi, NULL, node, help, 0, 0}
/* A float whose upper bound is excluded: [lo, hi). */
#define FLOAT_HI_OPEN(key, def, lo, hi, node, help) {key, CFG_FLOAT, def, lo, hi, NULL, node, help, 0, 1}
/* A float whose lower bound is excluded: (lo, hi]. */
#define FLOAT_LO_OPEN(key, def, lo, hi, node, help) {key, CFG_FLOAT, def, lo, hi, NULL, node, help, 1, 0}
#define BOOL(key, def, node, help) {key, CFG_BOOL, def, 0, 0, NULL, node, help, 0, 0}
#define STRING(key, def, node, help) {key, CFG_STRING, def, 0, 0, NULL, node, help, 0, 0}
#define ENUM(key, def, choices, node, help) {key, CFG_ENUM, def, 0, 0, choices, node, help, 0, 0}

const CfgField CONFIG_SCHEMA[] = {
    /* [model] the byte-level GPT each node trains. Nodes may differ in size and backend. */
    INT("model.n_layer", "2", 1, 64, PER_NODE, "transformer blocks"),
    INT("model.n_head", "4", 1, 64, PER_NODE, "attention heads per block"),
    INT("model.d_model", "64", 8, 4096, PER_NODE, "embedding width; a multiple of n_head"),
    INT("model.n_ctx", "128", 8, 4096, PER_NODE, "context length in the family's tokens (byte_gpt: bytes), prompt + completion"),
    ENUM("model.family", "byte_gpt", "byte_gpt|llama", PER_NODE,
         "byte_gpt = the byte-level GPT above; llama = a Llama/Qwen2 model read from model.hf_dir (docs/MODELS.md)"),
    STRING("model.hf_dir", "", PER_NODE,
           "llama family: a Hugging Face directory (config.json, model.safetensors, tokenizer.json)"),
    ENUM("model.backend", "cpu", "cpu|cuda|auto", PER_NODE, "where the node computes; auto = cuda when built and a GPU is visible"),
    STRING("model.init", "", PER_NODE, "checkpoint to start from; empty = random init"),
    INT("model.init_seed", "1337", 0, TWO_62, GLOBAL, "seed of the random init"),
    INT("model.micro_tokens", "4096", 64, 1 << 24, PER_NODE,
        "tokens per forward/backward micro-batch (training, prefill); bounds activation memory, results unchanged"),
    BOOL("model.deterministic", "false", PER_NODE,
         "fixed-order numerics of our own (no BLAS, no libm exp/log): the same bits on any CPU, BLAS, thread count or GPU; slower"),

    /* [optim] AdamW, shared by warm-up and GRPO. */
    FLOAT("optim.lr", "3e-4", 0, 1, PER_NODE, "learning rate"),
    FLOAT_HI_OPEN("optim.beta1", "0.9", 0, 1, GLOBAL, "first-moment decay"),
    FLOAT_HI_OPEN("optim.beta2", "0.999", 0, 1, GLOBAL, "second-moment decay"),
    FLOAT("optim.eps", "1e-8", 0, 1, GLOBAL, "denominator guard"),
    FLOAT("optim.weight_decay", "0", 0, 1, GLOBAL, "decoupled weight decay"),
    FLOAT("optim.grad_clip", "1.0", 0, 1e6, PER_NODE, "global gradient-norm clip; 0 = off"),
    INT("optim.warmup_steps", "0", 0, 1e7, GLOBAL, "GRPO steps over which the lr rises linearly from lr/warmup to lr; 0 = none"),

    /* [gen] sampling of completions. */
    FLOAT("gen.temperature", "1.0", 0, 10, PER_NODE, "sampling temperature; 0 = greedy"),
    FLOAT_LO_OPEN("gen.top_p", "1.0", 0, 1, PER_NODE, "nucleus probability mass; 1 = off"),
    INT("gen.max_new_tokens", "48", 1, 4096, PER_NODE, "completion length limit in bytes"),

    /* [swarm] the run as a whole. */
    INT("swarm.seed", "42", 0, TWO_62, GLOBAL, "run seed; every random stream derives from (seed, rank, round, purpose)"),
    INT("swarm.rounds", "100", 0, 1e7, GLOBAL, "training rounds"),
    INT("swarm.nodes", "8", 1, CONFIG_MAX_NODES, GLOBAL, "expected swarm size (informational: the MPI size decides)"),

    /* [sampling] the paper's I local / J external split and the pool filter. */
    INT("sampling.local", "8", 0, 256, PER_NODE, "I: own questions answered per round"),
    INT("sampling.external", "0", 0, 256, PER_NODE, "J: groups drawn from the swarm pool per round"),
    INT("sampling.groups", "8", 1, 256, PER_NODE, "groups trained on per round; local + external must equal it"),
    ENUM("sampling.filter", "zero_adv", "zero_adv|none", GLOBAL, "pool filter; zero_adv drops groups whose advantages are all zero"),

    /* [grpo] the policy-gradient step (the learning rate is optim.lr). */
    INT("grpo.completions", "8", 2, 256, PER_NODE,
        "L: completions per question (group size); at least 2, since a group of one has advantage 0 and teaches nothing"),
    INT("grpo.ppo_epochs", "1", 1, 16, GLOBAL, "optimizer steps per batch; the clip only acts above 1"),
    FLOAT("grpo.eps_low", "0.2", 0, 1, GLOBAL, "clip the ratio from below at 1 - eps_low"),
    FLOAT("grpo.eps_high", "0.28", 0, 1, GLOBAL, "clip the ratio from above at 1 + eps_high"),
    FLOAT("grpo.kl", "0", 0, 10, GLOBAL, "KL penalty weight to the initial policy; the paper uses 0"),
    ENUM("grpo.external", "ratio1", "ratio1|positive_only|tis|ftis", PER_NODE,
         "how received groups are trained: ratio1 as if self-sampled (the paper), positive_only drops their "
         "negative advantages, tis weights each token by min(pi/mu, grpo.tis_cap) with the sender's log-probs mu, "
         "ftis is tis that also drops a negative-advantage completion whose KL estimate exceeds grpo.ftis_kl"),
    FLOAT_LO_OPEN("grpo.tis_cap", "2", 0, 1000, GLOBAL, "cap c of the truncated importance weight (grpo.external = tis or ftis)"),
    FLOAT_LO_OPEN("grpo.ftis_kl", "0.1", 0, 1000, GLOBAL,
                  "F-TIS (grpo.external = ftis): a received completion with a negative advantage is dropped when the "
                  "mean over its tokens of rho - 1 - log rho, rho = pi/mu, exceeds this (k3: KL(sender || policy) per token)"),
    ENUM("grpo.local", "all", "all|positive_only", PER_NODE,
         "how the node's own groups are trained: all advantages (GRPO), or positive_only drops their negative "
         "advantages (the control that separates peers' data from dropping negatives)"),
    BOOL("grpo.frozen", "false", PER_NODE,
         "skip the GRPO step: the policy keeps its initial weights but still generates, shares, is evaluated and "
         "logs (loss, grad_norm, kl NaN): the control that measures what the pool filter alone lifts"),
    ENUM("grpo.train_temperature", "gen", "gen|one", GLOBAL,
         "training log-probs of softmax(logits / T): gen = gen.temperature, as sampled (genrl), one = T of 1"),

    /* [net] how rollouts travel between nodes (netem decides delay and loss). */
    ENUM("net.transport", "p2p", "allgather|p2p", GLOBAL, "p2p = nonblocking sends with netem; allgather = the paper's synchronous exchange"),
    ENUM("net.clock", "virtual", "virtual|wall", GLOBAL, "virtual = deterministic rounds; wall = real asynchrony"),
    FLOAT("net.latency", "0", 0, 1e6, GLOBAL, "mean message delay (rounds with clock = virtual, seconds with wall)"),
    ENUM("net.latency_dist", "constant", "constant|uniform|lognormal", GLOBAL, "delay distribution: constant, uniform on [0, 2 x mean], lognormal with that mean"),
    FLOAT("net.latency_sigma", "0.5", 0, 10, GLOBAL, "lognormal shape (sigma of the log)"),
    INT("net.regions", "1", 1, CONFIG_MAX_NODES, GLOBAL, "nodes split round-robin into regions (node k in region k mod regions)"),
    FLOAT("net.cross_region", "0", 0, 1e6, GLOBAL, "extra delay between nodes of different regions (same unit as latency)"),
    FLOAT("net.drop", "0", 0, 1, GLOBAL, "probability that a message is lost"),
    INT("net.fanout", "0", 0, CONFIG_MAX_NODES, GLOBAL, "peers each node sends to per round, drawn at random; 0 = all"),
    FLOAT_HI_OPEN("net.offline", "0", 0, 1, GLOBAL, "churn: long-run share of rounds a node is offline (sends and receives nothing)"),
    FLOAT("net.offline_len", "5", 1, 1e6, GLOBAL, "churn: mean length of an offline spell, in rounds"),
    FLOAT("net.bandwidth", "0", 0, 1e15, GLOBAL, "bytes each node's link carries per round (clock = virtual) or per second (wall); a message's delay gains its size over it, queued behind the sender's earlier copies; 0 = unlimited"),
    FLOAT("net.slowdown", "1", 1, 1000, PER_NODE, "this node's round takes slowdown x as long (virtual time, or real sleep with clock = wall)"),
    ENUM("net.fault", "none", "none|garbage|truncate|lie|lie_logprobs", PER_NODE,
         "corrupt this node's outgoing messages (tests, adversarial nodes); lie_logprobs claims -1e30 for every behaviour log-prob"),

    /* [tasks] which ReasoningGYM tasks, at which difficulty. */
    ENUM("sync.method", "none", "none|diloco|noloco", GLOBAL, "weight synchronisation beside the shared rollouts (docs/SYNC.md): none = rollouts only; diloco = every sync.every rounds an outer Nesterov step on the swarm's mean pseudo-gradient; noloco = the same within a random group of sync.group nodes, pulled toward the group's mean weights; with sampling.external = 0 on every node, weights alone (messages carry no rollout)"),
    INT("sync.every", "10", 1, 10000000, GLOBAL, "H: rounds (local GRPO steps) between outer steps"),
    FLOAT("sync.outer_lr", "0.7", 0, 10, GLOBAL, "outer learning rate (DiLoCo's eta, NoLoCo's beta)"),
    FLOAT_HI_OPEN("sync.outer_momentum", "0.9", 0, 1, GLOBAL, "outer momentum (DiLoCo's Nesterov mu, NoLoCo's alpha); 0 = none"),
    INT("sync.group", "2", 1, CONFIG_MAX_NODES, GLOBAL, "noloco: nodes per averaging group, drawn at random each outer step from swarm.seed (the last group takes the remainder)"),
    FLOAT("sync.pull", "0", 0, 10, GLOBAL, "noloco: gamma, the pull of a node's outer weights toward its group's mean outer weights"),
    ENUM("tasks.preset", "small", "paper|small|tiny", GLOBAL, "difficulty preset; paper = rl-swarm's settings"),
    STRING("tasks.names", "all", GLOBAL, "comma-separated task names, or all"),
    BOOL("tasks.exclude_eval", "false", GLOBAL,
         "never ask a node, nor demonstrate in `sapo pretrain`, a question of the held-out set (run.eval_questions): "
         "such a draw is drawn again; the train_in_eval column counts the held-out questions asked either way"),
    FLOAT("tasks.max_unanswerable", "0.25", 0, 1, GLOBAL,
          "largest share of a task's items whose answer, tags included, may exceed gen.max_new_tokens; run and pretrain stop above it"),

    /* [pretrain] the supervised warm-up on task demonstrations (`sapo pretrain`). */
    INT("pretrain.steps", "2000", 0, 1e7, GLOBAL, "optimizer steps of the warm-up"),
    INT("pretrain.batch", "32", 1, 4096, GLOBAL, "demonstrations per step"),
    FLOAT("pretrain.lr", "1e-3", 0, 1, GLOBAL, "warm-up learning rate (AdamW, optim.* otherwise)"),
    STRING("pretrain.out", "", GLOBAL, "checkpoint the warm-up writes; empty = RUN_DIR/warmup.ckpt"),
    STRING("pretrain.tasks", "", GLOBAL,
           "the tasks the warm-up demonstrates, a comma-separated subset of tasks.names (a specialist's warm-up); "
           "empty = tasks.names. The held-out set and the pass@1 table stay those of tasks.names"),
    STRING("pretrain.format_tasks", "", GLOBAL,
           "tasks demonstrated format-only, a comma-separated subset of tasks.names: each question is shown with the "
           "answer of another question of its task (the tags and the answer's shape, not the mapping); needs "
           "pretrain.format_share > 0"),
    FLOAT("pretrain.format_share", "0", 0, 1, GLOBAL,
          "the share of each step's demonstrations that are format-only (of pretrain.format_tasks, rounded to whole "
          "demonstrations); the rest demonstrate pretrain.tasks. 1 = a format-only warm-up"),
    ENUM("pretrain.format_decoy", "same_task", "same_task|other_task", GLOBAL,
         "whose answer a format-only demonstration shows: another question's of the same task (the answer's shape "
         "is learned, and guessing from it scores a task's chance level), or of another task of "
         "pretrain.format_tasks (the tags alone)"),

    /* [run] where results go and how often to evaluate and log. */
    STRING("run.out", "", GLOBAL, "run directory; empty = results/runs/NAME"),
    STRING("run.name", "", GLOBAL, "run name"),
    STRING("run.specialty", "", PER_NODE,
           "a label for what this node was made to know (e.g. the task its warm-up demonstrated); "
           "kept in config.ini for the analysis (node/specialty in summaries), not used by the run"),
    STRING("run.dump_messages", "", GLOBAL,
           "directory where every node writes the message it sends each round (node_NNNN.rRRRRRRR.msg, for sapo verify); empty = none"),
    INT("run.eval_every", "20", 0, 1e7, GLOBAL, "rounds between evaluations on the held-out set; 0 = never"),
    INT("run.eval_questions", "256", 0, 100000, GLOBAL,
        "size of the fixed held-out evaluation set (question i asks task i mod the tasks asked); 0 = no evaluation"),
    BOOL("run.eval_first", "false", GLOBAL,
         "also evaluate the initial policy, before round 0 trains (in round 0's row, in place of its own evaluation)"),
    INT("run.eval_seed", "1", 0, TWO_62, GLOBAL,
        "seed of the held-out evaluation set; independent of swarm.seed: same questions on every node and run"),
    INT("run.log_every", "1", 1, 1e7, GLOBAL, "rounds between progress lines"),
    INT("run.checkpoint_every", "10", 0, 1e7, GLOBAL, "rounds between node checkpoints (model, optimizer, messages in flight); 0 = never"),
    BOOL("run.resume", "false", GLOBAL, "continue from the run directory's last checkpoint when there is one"),
};

const int CONFIG_SCHEMA_LEN = (int)(sizeof CONFIG_SCHEMA / sizeof CONFIG_SCHEMA[0]);
