/* C enums for the schema's CFG_ENUM keys, in the order of the schema's choices, so that
 * config_enum / config_node_enum return one of them directly. Each enum is written once as
 * an X-macro list X(CONSTANT, "name"); config_new checks at startup that the names agree,
 * in order, with the choices in config_schema.c (see config_enums_check), so they cannot
 * drift. The names are printed through tables built from the same lists (CONFIG_ENUM_NAME):
 * model_backend_choice_name (model/gpt.h) and task_preset_name (tasks/registry.h). */
#ifndef SAPO_CORE_CONFIG_ENUMS_H
#define SAPO_CORE_CONFIG_ENUMS_H

#define CONFIG_ENUM_CONSTANT(c, name) c,
#define CONFIG_ENUM_NAME(c, name) name,

/* model.backend: auto = cuda when built and a GPU is visible, else cpu (model_backend_for) */
#define BACKEND_CHOICE_VALUES(X) X(BACKEND_CPU, "cpu") X(BACKEND_CUDA, "cuda") X(BACKEND_AUTO, "auto")
typedef enum { BACKEND_CHOICE_VALUES(CONFIG_ENUM_CONSTANT) } BackendChoice;

/* model.family: the byte-level GPT trained from scratch, or the Llama/Qwen2 family loaded from
 * a Hugging Face directory (model/family.h) */
#define MODEL_FAMILY_VALUES(X) X(MODEL_FAMILY_BYTE_GPT, "byte_gpt") X(MODEL_FAMILY_LLAMA, "llama")
typedef enum { MODEL_FAMILY_VALUES(CONFIG_ENUM_CONSTANT) } ModelFamilyId;

/* tasks.preset: the task registry's difficulty presets */
#define TASK_PRESET_VALUES(X) X(TASK_PRESET_PAPER, "paper") X(TASK_PRESET_SMALL, "small") X(TASK_PRESET_TINY, "tiny")
typedef enum { TASK_PRESET_VALUES(CONFIG_ENUM_CONSTANT) } TaskPreset;

/* net.transport */
#define NET_TRANSPORT_VALUES(X) X(NET_TRANSPORT_ALLGATHER, "allgather") X(NET_TRANSPORT_P2P, "p2p")
typedef enum { NET_TRANSPORT_VALUES(CONFIG_ENUM_CONSTANT) } NetTransport;

/* net.clock */
#define NET_CLOCK_VALUES(X) X(NET_CLOCK_VIRTUAL, "virtual") X(NET_CLOCK_WALL, "wall")
typedef enum { NET_CLOCK_VALUES(CONFIG_ENUM_CONSTANT) } NetClock;

/* net.latency_dist */
#define LATENCY_DIST_VALUES(X) X(LATENCY_CONSTANT, "constant") X(LATENCY_UNIFORM, "uniform") X(LATENCY_LOGNORMAL, "lognormal")
typedef enum { LATENCY_DIST_VALUES(CONFIG_ENUM_CONSTANT) } LatencyDist;

/* net.fault */
#define NODE_FAULT_VALUES(X)                                                                                    \
    X(FAULT_NONE, "none") X(FAULT_GARBAGE, "garbage") X(FAULT_TRUNCATE, "truncate") X(FAULT_LIE, "lie")        \
    X(FAULT_LIE_LOGPROBS, "lie_logprobs")
typedef enum { NODE_FAULT_VALUES(CONFIG_ENUM_CONSTANT) } NodeFault;

/* sampling.filter */
#define SAMPLING_FILTER_VALUES(X) X(FILTER_ZERO_ADV, "zero_adv") X(FILTER_NONE, "none")
typedef enum { SAMPLING_FILTER_VALUES(CONFIG_ENUM_CONSTANT) } SamplingFilter;

/* grpo.external */
#define EXTERNAL_WEIGHTING_VALUES(X)                                                                            \
    X(EXTERNAL_RATIO1, "ratio1") X(EXTERNAL_POSITIVE_ONLY, "positive_only") X(EXTERNAL_TIS, "tis")             \
    X(EXTERNAL_FTIS, "ftis")
typedef enum { EXTERNAL_WEIGHTING_VALUES(CONFIG_ENUM_CONSTANT) } ExternalWeighting;

/* grpo.local */
#define LOCAL_WEIGHTING_VALUES(X) X(LOCAL_ALL, "all") X(LOCAL_POSITIVE_ONLY, "positive_only")
typedef enum { LOCAL_WEIGHTING_VALUES(CONFIG_ENUM_CONSTANT) } LocalWeighting;

/* grpo.train_temperature */
#define TRAIN_TEMPERATURE_VALUES(X) X(TRAIN_TEMPERATURE_GEN, "gen") X(TRAIN_TEMPERATURE_ONE, "one")
typedef enum { TRAIN_TEMPERATURE_VALUES(CONFIG_ENUM_CONSTANT) } TrainTemperature;

/* pretrain.format_decoy: whose answer a format-only demonstration shows (cli/cmd_pretrain.c) */
#define FORMAT_DECOY_VALUES(X) X(FORMAT_DECOY_SAME_TASK, "same_task") X(FORMAT_DECOY_OTHER_TASK, "other_task")
typedef enum { FORMAT_DECOY_VALUES(CONFIG_ENUM_CONSTANT) } FormatDecoy;

/* sync.method: weight synchronisation beside the shared rollouts (swarm/weight_sync.h) */
#define SYNC_METHOD_VALUES(X) X(SYNC_NONE, "none") X(SYNC_DILOCO, "diloco") X(SYNC_NOLOCO, "noloco")
typedef enum { SYNC_METHOD_VALUES(CONFIG_ENUM_CONSTANT) } SyncMethod;

/* Every key above with its list: config_enums_check walks this. */
#define CONFIG_ENUM_KEYS(K)                                                                                     \
    K("model.backend", BACKEND_CHOICE_VALUES)                                                                  \
    K("model.family", MODEL_FAMILY_VALUES)                                                                     \
    K("tasks.preset", TASK_PRESET_VALUES)                                                                      \
    K("net.transport", NET_TRANSPORT_VALUES)                                                                   \
    K("net.clock", NET_CLOCK_VALUES)                                                                           \
    K("net.latency_dist", LATENCY_DIST_VALUES)                                                                 \
    K("net.fault", NODE_FAULT_VALUES)                                                                          \
    K("sampling.filter", SAMPLING_FILTER_VALUES)                                                               \
    K("grpo.external", EXTERNAL_WEIGHTING_VALUES)                                                              \
    K("grpo.local", LOCAL_WEIGHTING_VALUES)                                                                    \
    K("grpo.train_temperature", TRAIN_TEMPERATURE_VALUES)                                                      \
    K("pretrain.format_decoy", FORMAT_DECOY_VALUES)                                                            \
    K("sync.method", SYNC_METHOD_VALUES)

#endif
