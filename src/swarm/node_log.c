/* The node's HDF5 round log (see node_log.h). */
#include "swarm/node_log.h"

#include <stdio.h>

#include "core/host_info.h"

/* The column list: every metric (float64), then reward_by_task and eval_pass1_by_task (one
 * float64 per task id each), then weights_digest (int64). */
#define NODE_LOG_COLUMNS (RM_COUNT + 3)
static void node_log_columns(H5LogColumn* cols, const char** labels) {
    for (int i = 0; i < RM_COUNT; i++)
        cols[i] = (H5LogColumn){.name = ROUND_METRIC_NAMES[i], .kind = H5LOG_F64, .help = ROUND_METRIC_HELP[i]};
    for (int t = 0; t < TASK_N_IDS; t++) labels[t] = task_id_name(t);
    cols[RM_COUNT] = (H5LogColumn){.name = "reward_by_task",
                                   .kind = H5LOG_F64_VEC,
                                   .length = TASK_N_IDS,
                                   .help = "mean own reward per task id (NaN when the task was not asked)",
                                   .labels = labels};
    cols[RM_COUNT + 1] = (H5LogColumn){.name = "eval_pass1_by_task",
                                       .kind = H5LOG_F64_VEC,
                                       .length = TASK_N_IDS,
                                       .help = "pass@1 per task id on the fixed held-out set (NaN when not evaluated or "
                                               "the task is not asked)",
                                       .labels = labels};
    cols[RM_COUNT + 2] = (H5LogColumn){.name = "weights_digest",
                                       .kind = H5LOG_I64,
                                       .help = "64-bit digest of the node's weights at the end of the round (FNV-1a "
                                               "over their 64-bit words, as int64): equal digests, equal weights"};
}

H5Log* node_log_create(const char* path, const char* config_ini, const NodeSettings* ns, int rank, int n_nodes,
                       const EvalSet* eval, char* err, size_t errlen) {
    H5LogColumn cols[NODE_LOG_COLUMNS];
    const char* labels[TASK_N_IDS];
    node_log_columns(cols, labels);
    H5Log* log = h5log_create(path, cols, NODE_LOG_COLUMNS, err, errlen);
    if (!log) return NULL;
    ModelShape g = ns->model;
    int rc = h5log_set_attr_string(log, "config", config_ini, err, errlen) ||
             h5log_set_attr_int(log, "rank", rank, err, errlen) ||
             h5log_set_attr_int(log, "n_nodes", n_nodes, err, errlen) ||
             h5log_set_attr_int(log, "n_layer", g.n_layer, err, errlen) ||
             h5log_set_attr_int(log, "d_model", g.d_model, err, errlen) ||
             h5log_set_attr_int(log, "local", ns->n_local, err, errlen) ||
             h5log_set_attr_int(log, "external", ns->n_external, err, errlen);
    if (!rc) { /* the host, hardware, BLAS kernel and CUDA math mode: replays elsewhere may differ in the last bits */
        char cpu[512], blas[512], kernel[64], host[256];
        host_name(host, sizeof host);
        host_cpu_model(cpu, sizeof cpu);
        host_blas_library(blas, sizeof blas);
        host_blas_kernel(kernel, sizeof kernel);
        rc = h5log_set_attr_string(log, "host", host, err, errlen) ||
             h5log_set_attr_string(log, "cpu_model", cpu, err, errlen) ||
             h5log_set_attr_string(log, "blas_library", blas, err, errlen) ||
             h5log_set_attr_string(log, "blas_kernel", kernel, err, errlen) ||
             h5log_set_attr_int(log, "cuda_tf32", host_cuda_tf32(), err, errlen);
    }
    if (!rc && eval) {
        char digest[17];
        snprintf(digest, sizeof digest, "%016llx", (unsigned long long)eval->digest);
        rc = h5log_set_attr_int(log, "eval_questions", eval->n, err, errlen) ||
             h5log_set_attr_string(log, "eval_set_digest", digest, err, errlen);
    }
    if (rc) {
        h5log_close(log);
        return NULL;
    }
    return log;
}

H5Log* node_log_reopen(const char* path, int64_t keep_through_round, char* err, size_t errlen) {
    H5LogColumn cols[NODE_LOG_COLUMNS];
    const char* labels[TASK_N_IDS];
    node_log_columns(cols, labels);
    int64_t last = -1;
    H5Log* log = h5log_open_append(path, cols, NODE_LOG_COLUMNS, keep_through_round, &last, err, errlen);
    if (!log) return NULL;
    /* `host` says where the rank ran last: a resume may run it on another host (an attribute,
     * set before the first append while SWMR allows it; no dataset changes) */
    char host[256];
    host_name(host, sizeof host);
    if (h5log_set_attr_string(log, "host", host, err, errlen)) {
        h5log_close(log);
        return NULL;
    }
    return log;
}

int node_log_append(H5Log* log, const RoundRecord* rec, char* err, size_t errlen) {
    H5LogValue values[NODE_LOG_COLUMNS];
    for (int i = 0; i < RM_COUNT; i++) values[i].f = rec->m[i];
    values[RM_COUNT].v = rec->reward_by_task;
    values[RM_COUNT + 1].v = rec->eval_by_task;
    values[RM_COUNT + 2].i = rec->weights_digest;
    return h5log_append(log, rec->round, values, err, errlen);
}
