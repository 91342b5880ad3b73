/* The swarm layer's settings read from the configuration (see node_settings.h). */
#include "swarm/node_settings.h"

#include <stdlib.h>

#include "core/check.h"
#include "model/policy.h"

SwarmSettings swarm_settings_read(const Config* cfg) {
    SwarmSettings s = {
        .seed = (uint64_t)config_int(cfg, "swarm.seed"),
        .rounds = (int)config_int(cfg, "swarm.rounds"),
        .tasks_names = config_string(cfg, "tasks.names"),
        .tasks_preset = (TaskPreset)config_enum(cfg, "tasks.preset"),
        .max_unanswerable = config_float(cfg, "tasks.max_unanswerable"),
        .eval_every = (int)config_int(cfg, "run.eval_every"),
        .eval_questions = (int)config_int(cfg, "run.eval_questions"),
        .eval_first = config_bool(cfg, "run.eval_first"),
        .exclude_eval = config_bool(cfg, "tasks.exclude_eval"),
        .eval_seed = (uint64_t)config_int(cfg, "run.eval_seed"),
        .dump_messages = config_string(cfg, "run.dump_messages"),
        .run_out = config_string(cfg, "run.out"),
        .run_name = config_string(cfg, "run.name"),
        .log_every = (int)config_int(cfg, "run.log_every"),
        .checkpoint_every = (int)config_int(cfg, "run.checkpoint_every"),
        .init_seed = (uint64_t)config_int(cfg, "model.init_seed"),
        .kl = (float)config_float(cfg, "grpo.kl"),
        .ppo_epochs = (int)config_int(cfg, "grpo.ppo_epochs"),
        .net = {.transport = (NetTransport)config_enum(cfg, "net.transport"),
                .wall_clock = config_enum(cfg, "net.clock") == NET_CLOCK_WALL,
                .latency = config_float(cfg, "net.latency"),
                .sigma = config_float(cfg, "net.latency_sigma"),
                .cross_region = config_float(cfg, "net.cross_region"),
                .dist = (LatencyDist)config_enum(cfg, "net.latency_dist"),
                .regions = (int)config_int(cfg, "net.regions"),
                .drop = config_float(cfg, "net.drop"),
                .fanout = (int)config_int(cfg, "net.fanout"),
                .offline = config_float(cfg, "net.offline"),
                .offline_len = config_float(cfg, "net.offline_len"),
                .bandwidth = config_float(cfg, "net.bandwidth")},
        .sync = {.method = (SyncMethod)config_enum(cfg, "sync.method"),
                 .every = (int)config_int(cfg, "sync.every"),
                 .outer_lr = (float)config_float(cfg, "sync.outer_lr"),
                 .outer_momentum = (float)config_float(cfg, "sync.outer_momentum"),
                 .group = (int)config_int(cfg, "sync.group"),
                 .pull = (float)config_float(cfg, "sync.pull")},
        .pretrain = {.steps = (int)config_int(cfg, "pretrain.steps"),
                     .batch = (int)config_int(cfg, "pretrain.batch"),
                     .lr = (float)config_float(cfg, "pretrain.lr"),
                     .out = config_string(cfg, "pretrain.out"),
                     .tasks = config_string(cfg, "pretrain.tasks"),
                     .format_tasks = config_string(cfg, "pretrain.format_tasks"),
                     .format_share = config_float(cfg, "pretrain.format_share"),
                     .format_other_task = config_enum(cfg, "pretrain.format_decoy") == FORMAT_DECOY_OTHER_TASK},
    };
    return s;
}

NodeSettings node_settings_read(const Config* cfg, int k) {
    NodeSettings n = {
        .model = {.n_layer = (int)config_node_int(cfg, k, "model.n_layer"),
                  .n_head = (int)config_node_int(cfg, k, "model.n_head"),
                  .d_model = (int)config_node_int(cfg, k, "model.d_model"),
                  .n_ctx = (int)config_node_int(cfg, k, "model.n_ctx"),
                  .vocab = GPT_VOCAB,
                  .deterministic = config_node_bool(cfg, k, "model.deterministic")},
        .backend = (BackendChoice)config_node_enum(cfg, k, "model.backend"),
        .init = config_node_string(cfg, k, "model.init"),
        .family = (ModelFamilyId)config_node_enum(cfg, k, "model.family"),
        .hf_dir = config_node_string(cfg, k, "model.hf_dir"),
        .micro_tokens = (int)config_node_int(cfg, k, "model.micro_tokens"),
        .adamw = {.lr = (float)config_node_float(cfg, k, "optim.lr"),
                  .beta1 = (float)config_node_float(cfg, k, "optim.beta1"),
                  .beta2 = (float)config_node_float(cfg, k, "optim.beta2"),
                  .eps = (float)config_node_float(cfg, k, "optim.eps"),
                  .weight_decay = (float)config_node_float(cfg, k, "optim.weight_decay")},
        .grad_clip = (float)config_node_float(cfg, k, "optim.grad_clip"),
        .gen = {.sampler = {.temperature = (float)config_node_float(cfg, k, "gen.temperature"),
                            .top_p = (float)config_node_float(cfg, k, "gen.top_p")},
                .max_new_tokens = (int)config_node_int(cfg, k, "gen.max_new_tokens"),
                .stop = NULL},
        .n_local = (int)config_node_int(cfg, k, "sampling.local"),
        .n_external = (int)config_node_int(cfg, k, "sampling.external"),
        .n_groups = (int)config_node_int(cfg, k, "sampling.groups"),
        .n_completions = (int)config_node_int(cfg, k, "grpo.completions"),
        .filter_zero_adv = config_enum(cfg, "sampling.filter") == FILTER_ZERO_ADV,
        .weighting = {.local = (LocalWeighting)config_node_enum(cfg, k, "grpo.local"),
                      .external = (ExternalWeighting)config_node_enum(cfg, k, "grpo.external"),
                      .tis_cap = (float)config_float(cfg, "grpo.tis_cap"),
                      .ftis_kl = (float)config_float(cfg, "grpo.ftis_kl")},
        .frozen = config_node_bool(cfg, k, "grpo.frozen"),
        .fault = (NodeFault)config_node_enum(cfg, k, "net.fault"),
        .slowdown = config_node_float(cfg, k, "net.slowdown"),
    };
    n.model.family = n.family; /* a family that reads hf_dir takes its shape in run_settings_read_model_shapes */
    float temperature = n.gen.sampler.temperature;
    int at_gen_temperature = config_enum(cfg, "grpo.train_temperature") == TRAIN_TEMPERATURE_GEN && temperature > 0.0f;
    n.grpo = (GrpoConfig){.eps_low = (float)config_float(cfg, "grpo.eps_low"),
                          .eps_high = (float)config_float(cfg, "grpo.eps_high"),
                          .kl = (float)config_float(cfg, "grpo.kl"),
                          .ppo_epochs = (int)config_int(cfg, "grpo.ppo_epochs"),
                          .logit_scale = at_gen_temperature ? 1.0f / temperature : 1.0f,
                          .warmup_steps = (int)config_int(cfg, "optim.warmup_steps")};
    weighting_grpo_config(&n.weighting, &n.grpo);
    return n;
}

RunSettings run_settings_read(const Config* cfg, int n_nodes) {
    if (n_nodes < 1) n_nodes = 1;
    RunSettings rs = {.sw = swarm_settings_read(cfg), .n_nodes = n_nodes, .max_node_section = config_max_node(cfg)};
    rs.node = mallocCheck(sizeof *rs.node * (size_t)n_nodes);
    for (int k = 0; k < n_nodes; k++) rs.node[k] = node_settings_read(cfg, k);
    return rs;
}

void run_settings_read_model_shapes(RunSettings* rs) {
    for (int k = 0; k < rs->n_nodes; k++) {
        NodeSettings* n = &rs->node[k];
        PolicySpec spec = node_policy_spec(n);
        ModelShape h;
        char err[512];
        if (policy_reads_hf_dir(&spec) && *n->hf_dir && policy_shape(&spec, &h, err, sizeof err) == 0) n->model = h;
    }
}

void run_settings_free(RunSettings* rs) {
    free(rs->node);
    rs->node = NULL;
    rs->n_nodes = 0;
}

PolicySpec node_policy_spec(const NodeSettings* ns) {
    return (PolicySpec){.family = ns->family,
                        .hf_dir = ns->hf_dir,
                        .init = ns->init,
                        .backend = ns->backend,
                        .shape = ns->model,
                        .micro_tokens = ns->micro_tokens};
}

Netem* run_settings_netem(const RunSettings* rs) {
    double* slowdown = mallocCheck(sizeof(double) * (size_t)rs->n_nodes);
    for (int k = 0; k < rs->n_nodes; k++) slowdown[k] = rs->node[k].slowdown;
    Netem* ne = netem_create(rs->sw.seed, rs->sw.rounds, &rs->sw.net, rs->n_nodes, slowdown);
    if (rs->sw.sync.method == SYNC_NOLOCO) netem_set_weight_groups(ne, rs->sw.sync.group, rs->sw.sync.every);
    free(slowdown);
    return ne;
}
