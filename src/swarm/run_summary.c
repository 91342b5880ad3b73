/* The end of a swarm run (see run.h): every rank's verdict, the totals, learning windows,
 * memory and hosts gathered to rank 0, which prints the summary table (stdout and run.log)
 * and writes summary.json, then DONE. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/check.h"
#include "core/clock.h"
#include "core/host_info.h"
#include "core/mem_usage.h"
#include "io/atomic_file.h"
#include "io/files.h"
#include "io/h5log.h"
#include "model/numerics.h"
#include "swarm/node_config.h"
#include "swarm/run.h"

/* The learning window of the summary: a node's mean own reward over its first and last
 * `window` rounds (a fifth of the run, at most 50 rounds), read back from its own log, so a
 * reader sees whether own reward rose rather than only a cumulative total. */
static int summary_window(int rounds) {
    int w = rounds / 5;
    return w < 1 ? 1 : w > 50 ? 50 : w;
}

static void own_reward_window(const char* log_path, int rounds, double first_last[2]) {
    first_last[0] = first_last[1] = NAN;
    double* col = mallocCheck(sizeof(double) * (rounds > 0 ? rounds : 1));
    int64_t n = 0;
    char err[256];
    if (rounds > 0 && !h5log_read_column(log_path, "reward_own", col, rounds, &n, err, sizeof err) && n > 0) {
        int w = summary_window((int)n);
        double a = 0, b = 0;
        for (int i = 0; i < w; i++) {
            a += col[i];
            b += col[n - w + i];
        }
        first_last[0] = a / w;
        first_last[1] = b / w;
    }
    free(col);
}

/* A host name's room in the summary's gather (gethostname's names are at most 64 bytes). */
#define SUMMARY_HOST_LEN 256

/* summary.json (atomically, through atomic_file_write): per node the host it ran on, the totals, learning
 * windows and memory (peak_private_mb, mem_private_peak, beside private_estimate_mb,
 * node_memory_terms' private_total: memory holds the 2 per node, in bytes), then the sums.
 * Built with cJSON: a NaN (no evaluation, no window) is null, and every number reads back as
 * the very double it was; seconds keeps its three decimals. */
static int summary_json_write(const char* path, int size, int rounds, double wall, const double* all,
                              const double* windows, int window, const double* memory, const char* hosts,
                              char* err, size_t errlen) {
    char secs[48];
    snprintf(secs, sizeof secs, "%.3f", wall);
    cJSON* root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "nodes", size);
    cJSON_AddNumberToObject(root, "rounds", rounds);
    cJSON_AddNumberToObject(root, "seconds", strtod(secs, NULL));
    cJSON_AddNumberToObject(root, "numerics_version", SAPO_NUMERICS_VERSION);
    cJSON* per_node = cJSON_AddArrayToObject(root, "per_node");
    double sum_own = 0, sum_train = 0;
    for (int k = 0; k < size; k++) {
        const double *t = all + (size_t)k * RT_COUNT, *wk = windows + 2 * (size_t)k;
        sum_own += t[RT_OWN];
        sum_train += t[RT_TRAIN];
        cJSON* e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "node", k);
        cJSON_AddStringToObject(e, "host", hosts + (size_t)k * SUMMARY_HOST_LEN);
        cJSON_AddNumberToObject(e, "cum_reward_own", t[RT_OWN]);
        cJSON_AddNumberToObject(e, "cum_reward_train", t[RT_TRAIN]);
        cJSON_AddNumberToObject(e, "external_per_round", rounds ? t[RT_EXT] / rounds : 0.0);
        cJSON_AddNumberToObject(e, "rejected", t[RT_REJ]);
        cJSON_AddNumberToObject(e, "eval_last", t[RT_EVAL_LAST]); /* cJSON prints NaN as null */
        cJSON_AddNumberToObject(e, "own_first_window", wk[0]);
        cJSON_AddNumberToObject(e, "own_last_window", wk[1]);
        cJSON_AddNumberToObject(e, "peak_private_mb", round(memory[2 * k] / (1024.0 * 1024.0) * 10) / 10);
        cJSON_AddNumberToObject(e, "private_estimate_mb", round(memory[2 * k + 1] / (1024.0 * 1024.0) * 10) / 10);
        cJSON_AddItemToArray(per_node, e);
    }
    cJSON_AddNumberToObject(root, "cum_reward_own", sum_own);
    cJSON_AddNumberToObject(root, "cum_reward_train", sum_train);
    cJSON_AddNumberToObject(root, "window_rounds", window);
    int rc = atomic_file_write_json(path, root, err, errlen);
    cJSON_Delete(root);
    return rc;
}

/* Rank 0 after the last round: the summary table (stdout and run.log), summary.json, run.log
 * closed, then DONE, each only when everything before it was written. */
static void run_summarize(const RunSettings* rs, const char* dir, int size, int rounds, double wall, const double* all,
                          const double* windows, const double* memory, const char* hosts, RunLog* log,
                          RunFault* fault) {
    run_log_printf(log, "\n# summary: %d nodes x %d rounds in %.1fs; cumulative = sum over rounds of the round mean\n",
                   size, rounds, wall);
    int w = summary_window(rounds);
    char first_h[24], last_h[24], err[1024];
    snprintf(first_h, sizeof first_h, "own 1-%d", w);
    snprintf(last_h, sizeof last_h, "own last %d", w);
    run_log_printf(log, "%-6s %4s %4s %12s %12s %10s %11s %9s %9s %9s %10s\n", "node", "I", "J", "cum own", "cum train",
                   first_h, last_h, "ext/round", "rejected", "eval last", "s/round");
    double sum_own = 0, sum_train = 0, first = 0, last = 0;
    for (int k = 0; k < size; k++) {
        const double *t = all + (size_t)k * RT_COUNT, *wk = windows + 2 * (size_t)k;
        sum_own += t[RT_OWN];
        sum_train += t[RT_TRAIN];
        const NodeSettings* ns = &rs->node[k];
        first += wk[0] / size;
        last += wk[1] / size;
        run_log_printf(log, "%-6d %4ld %4ld %12.2f %12.2f %10.3f %11.3f %9.2f %9.0f %9.3f %10.3f\n", k,
                       (long)ns->n_local, (long)ns->n_external, t[RT_OWN], t[RT_TRAIN], wk[0], wk[1],
                       rounds ? t[RT_EXT] / rounds : 0.0, t[RT_REJ], t[RT_EVAL_LAST],
                       rounds ? t[RT_TIME] / rounds : 0.0);
    }
    char* path = path_join(dir, "summary.json");
    if (!fault->failed && summary_json_write(path, size, rounds, wall, all, windows, w, memory, hosts, err, sizeof err))
        run_fault_set(fault, "%s", err);
    free(path);
    run_log_printf(log, "%-6s %9s %12.2f %12.2f %10.3f %11.3f\n", "total", "", sum_own, sum_train, first, last);
    run_log_printf(log, "own reward, mean of the nodes: %.3f over rounds 1-%d, %.3f over the last %d rounds (%+.3f)\n",
                   first, w, last, w, last - first);
    double peak = 0, estimate = 0;
    for (int k = 0; k < size; k++)
        if (memory[2 * k] > peak) peak = memory[2 * k], estimate = memory[2 * k + 1];
    run_log_printf(log, "peak private memory %.0f MB per rank (the largest; estimated %.0f MB private)\n",
                   peak / (1024.0 * 1024.0), estimate / (1024.0 * 1024.0));
    run_log_printf(log, "run directory: %s (run.h5, node_NNNN.h5, config.ini, run.log, summary.json)\n", dir);
    run_log_check(log, fault, 1);
    if (fault->failed) return;
    char done[96];
    snprintf(done, sizeof done, "completed %d rounds on %d nodes\n", rounds, size);
    path = path_join(dir, "DONE");
    if (atomic_file_write(path, done, err, sizeof err)) run_fault_set(fault, "%s", err);
    free(path);
}

int swarm_run_finish(SwarmRun* run) {
    node_finish(run->node, run->end);
    if (h5log_close_checked(run->h5, run->err, sizeof run->err))
        run_fault_set(&run->fault, "node %d: %s", run->rank, run->err);
    run->h5 = NULL;
    if (run->end < run->rounds) return 1; /* printed at the checkpoint */
    run_log_check(&run->log, &run->fault, 0);
    if (!run_agree_report(!run->fault.failed, run->fault.msg, "sapo run: ", run->comm)) return 1;
    int rank = run->rank, size = run->size;
    double* all = rank == 0 ? mallocCheck(sizeof(double) * RT_COUNT * size) : NULL;
    mpiCheck(MPI_Gather(run->totals, RT_COUNT, MPI_DOUBLE, all, RT_COUNT, MPI_DOUBLE, 0, run->comm));
    double window[2], *windows = rank == 0 ? mallocCheck(sizeof(double) * 2 * size) : NULL;
    char* own_log = path_join(run->dir, run->log_name);
    own_reward_window(own_log, run->rounds, window);
    free(own_log);
    mpiCheck(MPI_Gather(window, 2, MPI_DOUBLE, windows, 2, MPI_DOUBLE, 0, run->comm));
    mem_private_sample();
    double memory[2] = {mem_private_peak(), node_memory_terms(&run->set.sw, &run->set.node[rank], size).private_total};
    double* memories = rank == 0 ? mallocCheck(sizeof(double) * 2 * size) : NULL;
    mpiCheck(MPI_Gather(memory, 2, MPI_DOUBLE, memories, 2, MPI_DOUBLE, 0, run->comm));
    char host[SUMMARY_HOST_LEN], *hosts = rank == 0 ? mallocCheck((size_t)SUMMARY_HOST_LEN * size) : NULL;
    host_name(host, sizeof host);
    mpiCheck(MPI_Gather(host, SUMMARY_HOST_LEN, MPI_CHAR, hosts, SUMMARY_HOST_LEN, MPI_CHAR, 0, run->comm));
    if (rank == 0)
        run_summarize(&run->set, run->dir, size, run->rounds, clock_now() - run->t_start, all, windows, memories,
                      hosts, &run->log, &run->fault);
    free(hosts);
    free(all);
    free(windows);
    free(memories);
    return run_agree_report(!run->fault.failed, run->fault.msg, "sapo run: ", run->comm) ? 0 : 1;
}
