/* `sapo run`: the swarm. Under `mpirun -np N`, every rank is one node running SAPO rounds
 * (src/swarm/node.c); rank 0 prints progress and the summary. The run directory holds the
 * swarm size (NODES), the numerics version (NUMERICS: a resume by a sapo of another is
 * refused), the resolved config, each node's model.init kept with its digest (init/, so a
 * resume never needs the original; swarm/init_record.h), one HDF5 log per node, run.h5
 * linking them, run.log, summary.json and a DONE marker written last; every marker is written
 * atomically.
 *
 * Failures never end in MPI_Abort: a check before any work (config, model.init, a resume
 * this launch cannot do) stops every rank with one line from rank 0 and exit 2, before
 * anything is touched; an I/O failure during the run (a log append, a checkpoint, a marker)
 * marks its rank failed, which stops logging and writing but keeps taking part in the
 * rounds until the next agreement point (a checkpoint, the end), where every rank stops
 * with one line naming the file and exit 1, the logs closed and the run resumable from its
 * last good checkpoint. */
#include <cblas.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/blas_select.h"
#include "cli/commands.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/host_info.h"
#include "core/mem_usage.h"
#include "core/stage.h"
#include "io/atomic_file.h"
#include "io/h5log.h"
#include "io/files.h"
#include "io/run_dir.h"
#include "model/numerics.h"
#include "swarm/budget_check.h"
#include "swarm/init_record.h"
#include "swarm/node.h"
#include "swarm/node_checkpoint.h"
#include "swarm/node_config.h"
#include "swarm/node_log.h"
#include "tasks/infra/registry.h"

static const CliOption OPTIONS[] = {
    {"out", "RUN_DIR", "run directory (default run.out, else results/runs/NAME-DATE-TIME)"},
    {"resume", "RUN_DIR", "continue a killed or requeued run from its last checkpoint\n"
                          "(run.checkpoint_every), with the config it was started with; its\n"
                          "model.init files are read from RUN_DIR/init/ or, checked against\n"
                          "their recorded digest, from model.init=PATH given with it"},
    {"quiet", NULL, "no progress lines (the summary is still printed)"},
    {NULL, NULL, NULL},
};
enum { OPT_OUT, OPT_RESUME, OPT_QUIET };

static void usage(FILE* out) {
    fprintf(out,
            "usage: mpirun -np N sapo run CONFIG.ini [section.key=value ...] [--out RUN_DIR] [--quiet]\n"
            "       mpirun -np N sapo run --resume RUN_DIR [model.init=PATH | node.K.model.init=PATH ...] [--quiet]\n"
            "Runs a SAPO swarm: each MPI rank is one node (docs/SWARM.md; keys: docs/CONFIG.md, `sapo info`).\n");
    cli_print_options(out, OPTIONS);
    fprintf(out,
            "Writes RUN_DIR/config.ini, node_NNNN.h5 per node, run.h5, run.log, summary.json, DONE.\n");
}

/* Every rank's verdict, collectively. When some rank failed and msg is given (on every
 * rank), rank 0 prints the message of the lowest failing rank as one line after prefix.
 * Returns 1 when every rank is ok. */
static int agree_report(int ok, const char* msg, const char* prefix, MPI_Comm comm) {
    int rank, size;
    mpiCheck(MPI_Comm_rank(comm, &rank));
    mpiCheck(MPI_Comm_size(comm, &size));
    int mine = ok ? size : rank, first = size;
    mpiCheck(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
    if (first == size) return 1;
    if (msg) {
        char line[1024] = "";
        if (rank == first) snprintf(line, sizeof line, "%s", msg);
        mpiCheck(MPI_Bcast(line, sizeof line, MPI_CHAR, first, comm));
        if (rank == 0) {
            fprintf(stderr, "%s%s\n", prefix, line);
            fflush(stderr);
        }
    }
    return 0;
}

/* Rank 0 has printed what is wrong; every rank learns the verdict. */
static int agree(int ok_here, MPI_Comm comm) { return agree_report(ok_here, NULL, "", comm); }

/* A string from rank 0 to everyone (NULL on rank 0's side means failure). */
static char* broadcast_string(const char* s, int rank, MPI_Comm comm) {
    int len = rank == 0 ? (s ? (int)strlen(s) : -1) : 0;
    mpiCheck(MPI_Bcast(&len, 1, MPI_INT, 0, comm));
    if (len < 0) return NULL;
    char* out = mallocCheck((size_t)len + 1);
    if (rank == 0) memcpy(out, s, (size_t)len + 1);
    mpiCheck(MPI_Bcast(out, len + 1, MPI_CHAR, 0, comm));
    return out;
}

/* Host memory in bytes: MemTotal, or a cgroup's limit when lower. */
static double host_memory_bytes(void) {
    double total = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    FILE* f = fopen("/sys/fs/cgroup/memory.max", "r");
    if (f) {
        double limit;
        if (fscanf(f, "%lf", &limit) == 1 && limit > 0 && limit < total) total = limit;
        fclose(f);
    }
    return total;
}

/* Prints the estimated memory per rank and stops the run before any work when the ranks on
 * one host would need more than it has. Collective. Returns 1 when it fits. */
static int memory_fits(const RunSettings* rs, int rank, MPI_Comm comm) {
    MPI_Comm host;
    int host_rank, host_size, fits = 1;
    mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host));
    mpiCheck(MPI_Comm_rank(host, &host_rank));
    mpiCheck(MPI_Comm_size(host, &host_size));
    double mine = node_memory_estimate(&rs->sw, &rs->node[rank], rs->n_nodes), sum = 0, most = 0;
    mpiCheck(MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, host));
    mpiCheck(MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, host));
    double have = host_memory_bytes(), MB = 1024.0 * 1024.0;
    if (host_rank == 0 && sum > have) {
        fprintf(stderr,
                "sapo run: memory: %d ranks on this host need an estimated %.0f MB (up to %.0f MB each) but it has "
                "%.0f MB; lower model.micro_tokens, run.eval_questions, sampling.groups or the model size, or run "
                "fewer ranks per host\n",
                host_size, sum / MB, most / MB, have / MB);
        fits = 0;
    } else if (rank == 0) {
        printf("sapo run: estimated memory %.0f MB per rank (%.0f MB for the %d ranks on this host of %.0f MB)\n",
               most / MB, sum / MB, host_size, have / MB);
    }
    mpiCheck(MPI_Comm_free(&host));
    return fits;
}

/* This rank's first failure during the run, kept for the next agreement point. */
typedef struct {
    int failed;
    char msg[1024];
} RunFault;

static void fault_set(RunFault* f, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void fault_set(RunFault* f, const char* fmt, ...) {
    if (f->failed) return; /* the first failure is the one to report */
    f->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
}

/* run.log (rank 0; f is NULL elsewhere): every progress line goes to stdout and there. The
 * first write error stops the writing and is reported at the next agreement point. */
typedef struct {
    FILE* f;
    char* path;
    int error;
} RunLog;

static void logf_both(RunLog* log, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_both(RunLog* log, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
    if (log->f && !log->error) {
        va_start(ap, fmt);
        vfprintf(log->f, fmt, ap);
        va_end(ap);
        if (fflush(log->f) != 0 || ferror(log->f)) log->error = errno ? errno : EIO;
    }
}

/* Closes run.log (checked); moves a write or close error into the rank's fault. */
static void runlog_check(RunLog* log, RunFault* fault, int close_it) {
    if (close_it && log->f) {
        if (fclose(log->f) != 0 && !log->error) log->error = errno ? errno : EIO;
        log->f = NULL;
    }
    if (log->error) fault_set(fault, "cannot write %s: %s", log->path, strerror(log->error));
}

static void format_duration(double s, char* buf, size_t n) {
    if (s < 0 || !isfinite(s)) snprintf(buf, n, "?");
    else if (s < 120) snprintf(buf, n, "%.0fs", s);
    else if (s < 7200) snprintf(buf, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else snprintf(buf, n, "%.0fh%02.0fm", floor(s / 3600), fmod(s / 60, 60));
}

/* A node's running totals over its rounds: the one list of them (name and meaning), in the
 * order its checkpoints store them (f64[RT_COUNT] of the state file) and the summary
 * gathers them. run_accumulate adds a round to them. */
#define RUN_TOTALS(X)                                                                  \
    X(OWN, "sum of reward_own")                                                        \
    X(TRAIN, "sum of reward_train")                                                    \
    X(EXT, "sum of external_used")                                                     \
    X(SHORT, "sum of shortfall")                                                       \
    X(REJ, "sum of msgs_rejected + groups_rejected")                                   \
    X(EVAL_SUM, "sum of eval_pass1 over the evaluated rounds")                         \
    X(EVAL_N, "evaluated rounds")                                                      \
    X(EVAL_LAST, "the last eval_pass1; NaN before the first evaluation")               \
    X(TIME, "seconds in node_round and its logging")                                   \
    X(BYTES, "sum of bytes_sent")

#define RUN_TOTAL_ENUM(id, help) RT_##id,
typedef enum { RUN_TOTALS(RUN_TOTAL_ENUM) RT_COUNT } RunTotal;
#undef RUN_TOTAL_ENUM

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

/* ---- resuming ---------------------------------------------------------------------- */

/* Rank 0, before anything of the run is touched: 1 when it is complete (DONE, never empty
 * since it is written atomically; an empty one is what an older sapo left on a full disk);
 * 0 with *start = the checkpoint round to continue from; -1 with err when this launch cannot
 * continue it (another swarm size, a malformed marker). */
static int resume_check(const char* dir, int size, int* start, char* err, size_t errlen) {
    char* done = path_join(dir, "DONE");
    struct stat st;
    int complete = stat(done, &st) == 0 && st.st_size > 0;
    free(done);
    if (complete) return 1;
    int started = run_dir_read_nodes(dir);
    if (started < 0) return set_error(err, errlen, "%s/NODES is malformed", dir);
    if (started > 0 && started != size)
        return set_error(err, errlen, "it was started with %d nodes, this launch has %d (mpirun -np %d)", started, size,
                         started);
    int numerics = run_dir_read_numerics(dir);
    if (numerics < 0) return set_error(err, errlen, "%s/NUMERICS is malformed", dir);
    if (numerics != SAPO_NUMERICS_VERSION)
        return set_error(err, errlen,
                         "it was made with numerics version %d and this sapo computes version %d, so the continued run "
                         "would not replay (docs/PERFORMANCE.md, 'A change of numerics'): resume it with a sapo of "
                         "numerics %d",
                         numerics, SAPO_NUMERICS_VERSION, numerics);
    if ((*start = checkpoint_latest_read(dir)) < 0) return set_error(err, errlen, "%s/ckpt/LATEST is malformed", dir);
    return 0;
}

/* Every rank, before any node file is opened: after `start` > 0 rounds its log must be
 * there to continue and its checkpoint whole (model and state file). */
static int resume_verify_node(const char* dir, int rank, int start, const NodeSettings* ns, char* err, size_t errlen) {
    if (start == 0) return 0; /* no checkpoint yet: every log restarts from round 0 */
    char leaf[32], why[1024];
    snprintf(leaf, sizeof leaf, "node_%04d.h5", rank);
    char* log = path_join(dir, leaf);
    struct stat st;
    int there = stat(log, &st) == 0;
    if (!there) set_error(err, errlen, "node %d: %s is missing (the checkpoint after round %d continues it)", rank, log, start);
    free(log);
    if (!there) return -1;
    if (node_checkpoint_verify(dir, rank, start, &ns->model, RT_COUNT, why, sizeof why))
        return set_error(err, errlen, "node %d: %s", rank, why);
    return 0;
}

/* ---- during the run ---------------------------------------------------------------- */

/* The checkpoint after `done` rounds: every node writes its own; once all have (the first
 * agreement), rank 0 records it in ckpt/LATEST; once that is written (the second), older ones
 * go. Returns 0, or -1 when a rank failed (rank 0 printed it): the run stops, LATEST still
 * names the last good checkpoint. */
static int run_checkpoint(SwarmNode* node, const char* dir, int done, int every, const double* totals, RunLog* log,
                          RunFault* fault, MPI_Comm comm) {
    char err[1024];
    if (!fault->failed && node_checkpoint_save(node, dir, done, totals, RT_COUNT, err, sizeof err))
        fault_set(fault, "node %d: checkpoint after round %d: %s", node->rank, done, err);
    runlog_check(log, fault, 0);
    if (!agree_report(!fault->failed, fault->msg, "sapo run: ", comm)) return -1;
    if (node->rank == 0 && checkpoint_latest_write(dir, done, err, sizeof err))
        fault_set(fault, "checkpoint after round %d: %s", done, err);
    if (!agree_report(!fault->failed, fault->msg, "sapo run: ", comm)) return -1;
    node_checkpoint_prune(dir, node->rank, done - every);
    return 0;
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
    logf_both(log, "\n# summary: %d nodes x %d rounds in %.1fs; cumulative = sum over rounds of the round mean\n", size,
              rounds, wall);
    int w = summary_window(rounds);
    char first_h[24], last_h[24], err[1024];
    snprintf(first_h, sizeof first_h, "own 1-%d", w);
    snprintf(last_h, sizeof last_h, "own last %d", w);
    logf_both(log, "%-6s %4s %4s %12s %12s %10s %11s %9s %9s %9s %10s\n", "node", "I", "J", "cum own", "cum train",
              first_h, last_h, "ext/round", "rejected", "eval last", "s/round");
    double sum_own = 0, sum_train = 0, first = 0, last = 0;
    for (int k = 0; k < size; k++) {
        const double *t = all + (size_t)k * RT_COUNT, *wk = windows + 2 * (size_t)k;
        sum_own += t[RT_OWN];
        sum_train += t[RT_TRAIN];
        const NodeSettings* ns = &rs->node[k];
        first += wk[0] / size;
        last += wk[1] / size;
        logf_both(log, "%-6d %4ld %4ld %12.2f %12.2f %10.3f %11.3f %9.2f %9.0f %9.3f %10.3f\n", k,
                  (long)ns->n_local, (long)ns->n_external, t[RT_OWN],
                  t[RT_TRAIN], wk[0], wk[1], rounds ? t[RT_EXT] / rounds : 0.0, t[RT_REJ], t[RT_EVAL_LAST],
                  rounds ? t[RT_TIME] / rounds : 0.0);
    }
    char* path = path_join(dir, "summary.json");
    if (!fault->failed && summary_json_write(path, size, rounds, wall, all, windows, w, memory, hosts, err, sizeof err))
        fault_set(fault, "%s", err);
    free(path);
    logf_both(log, "%-6s %9s %12.2f %12.2f %10.3f %11.3f\n", "total", "", sum_own, sum_train, first, last);
    logf_both(log, "own reward, mean of the nodes: %.3f over rounds 1-%d, %.3f over the last %d rounds (%+.3f)\n", first,
              w, last, w, last - first);
    double peak = 0, estimate = 0;
    for (int k = 0; k < size; k++)
        if (memory[2 * k] > peak) peak = memory[2 * k], estimate = memory[2 * k + 1];
    logf_both(log, "peak private memory %.0f MB per rank (the largest; estimated %.0f MB private)\n",
              peak / (1024.0 * 1024.0), estimate / (1024.0 * 1024.0));
    logf_both(log, "run directory: %s (run.h5, node_NNNN.h5, config.ini, run.log, summary.json)\n", dir);
    runlog_check(log, fault, 1);
    if (fault->failed) return;
    char done[96];
    snprintf(done, sizeof done, "completed %d rounds on %d nodes\n", rounds, size);
    path = path_join(dir, "DONE");
    if (atomic_file_write(path, done, err, sizeof err)) fault_set(fault, "%s", err);
    free(path);
}

/* ---- the command ------------------------------------------------------------------- */

/* The resolved config as config_write prints it (what config.ini and each node log hold);
 * the caller frees it. */
static char* config_text(const Config* cfg) {
    char* text = NULL;
    size_t len = 0;
    FILE* mem = open_memstream(&text, &len);
    if (!mem) sapo_die("open_memstream failed");
    config_write(cfg, mem);
    fclose(mem);
    return text;
}

/* Rank 0 creates a fresh run's directory and its first markers: NODES, NUMERICS, config.ini.
 * Returns the directory, or NULL after printing one line. */
static char* run_dir_start(const Config* cfg, const SwarmSettings* sw, const char* requested, int size) {
    char err[1024];
    if (!requested) requested = sw->run_out;
    char* probe = requested && *requested ? path_join(requested, "node_0000.h5") : NULL;
    struct stat st;
    int taken = probe && stat(probe, &st) == 0;
    free(probe);
    if (taken) {
        fprintf(stderr, "sapo run: %s already holds a run; choose another --out (or remove it)\n", requested);
        return NULL;
    }
    char* dir = run_dir_create(requested, "swarm", sw->run_name, err, sizeof err);
    int ok = dir && !run_dir_write_nodes(dir, size, err, sizeof err) &&
             !run_dir_write_numerics(dir, SAPO_NUMERICS_VERSION, err, sizeof err);
    if (ok) {
        char* path = path_join(dir, "config.ini");
        FILE* f = atomic_file_begin(path, err, sizeof err);
        if (f) config_write(cfg, f);
        ok = f && !atomic_file_commit(f, path, err, sizeof err);
        free(path);
    }
    if (!ok) {
        fprintf(stderr, "sapo run: %s\n", err);
        free(dir);
        return NULL;
    }
    return dir;
}

/* ---- the command's state ---------------------------------------------------------- */

/* What one rank's run holds, from set-up to the end; run_end releases all of it. */
typedef struct {
    MPI_Comm comm;
    int rank, size, quiet;
    const char* resume;  /* --resume RUN_DIR, else NULL */
    const char* out_dir; /* --out RUN_DIR, else NULL */
    Config* cfg;
    RunSettings set;     /* read once from cfg, for the swarm of `size` nodes */
    char* dir;           /* the run directory, the same on every rank */
    char log_name[32];   /* node_NNNN.h5 of this rank */
    int start, rounds;   /* rounds done before this launch (resume), rounds in all */
    int end;             /* the rounds every node ran: fewer when a checkpoint failed */
    char** init_paths;   /* resume: node k's model.init as init_record_path resolved it, or NULL */
    int init_given_unrecorded; /* resume: model.init= given for this node, which the run has no record of */
    SwarmNode* node;
    H5Log* h5;
    RunLog log;
    RunFault fault;
    double totals[RT_COUNT];
    double t_start;
    char err[1024];
} SwarmRun;

/* The one way out of `sapo run`, whatever happened: closes what the run opened, ends MPI,
 * returns `code` (0 done, 1 an I/O failure during the run, 2 a check before any work). */
static int run_end(SwarmRun* run, int code) {
    h5log_close(run->h5);
    if (run->log.f) fclose(run->log.f);
    free(run->log.path);
    node_free(run->node);
    for (int k = 0; run->init_paths && k < run->size; k++) free(run->init_paths[k]);
    free(run->init_paths);
    run_settings_free(&run->set);
    config_free(run->cfg);
    free(run->dir);
    MPI_Finalize();
    return code;
}

/* ---- set-up and checks: every check before any rank starts work --------------------- */

/* A resumed run's config.ini (every rank) and rank 0's verdict on the run directory:
 * where[0] = rounds done, where[1] = 1 when it is complete. NULL after printing a line. */
static Config* run_resume_config(SwarmRun* run, int extra, int where[2]) {
    Config* cfg = NULL;
    char* path = path_join(run->resume, "config.ini");
    if (extra) {
        if (run->rank == 0)
            fprintf(stderr, "sapo run: --resume takes no config or overrides but model.init=PATH: the run keeps its "
                            "config.ini\n");
    } else {
        cfg = config_new();
        if (config_load_all(cfg, path, 0, NULL, run->err, sizeof run->err)) {
            if (run->rank == 0) fprintf(stderr, "sapo run: cannot resume %s: %s\n", run->resume, run->err);
            config_free(cfg);
            cfg = NULL;
        }
    }
    free(path);
    /* Another swarm size is refused before the config is checked against this one. */
    int rc = cfg && run->rank == 0 ? resume_check(run->resume, run->size, &where[0], run->err, sizeof run->err) : 0;
    if (rc < 0) {
        fprintf(stderr, "sapo run: cannot resume %s: %s\n", run->resume, run->err);
        config_free(cfg);
        cfg = NULL;
    }
    where[1] = rc > 0;
    return cfg;
}

/* A resume's model.init=PATH or node.K.model.init=PATH for node k (the latter first), or NULL. */
static const char* resume_init_given(const CliArgs* a, int k) {
    const char* any = NULL;
    char key[48];
    int n = snprintf(key, sizeof key, "node.%d.model.init=", k);
    for (int i = 0; i < a->n_pos; i++) {
        if (!strncmp(a->pos[i], key, (size_t)n)) return a->pos[i] + n;
        if (!strncmp(a->pos[i], "model.init=", 11)) any = a->pos[i] + 11;
    }
    return any;
}

/* A resume's positional arguments other than those. */
static int resume_other_args(const CliArgs* a) {
    int others = 0;
    for (int i = 0; i < a->n_pos; i++) {
        int node, end = 0;
        if (!strncmp(a->pos[i], "model.init=", 11)) continue;
        if (sscanf(a->pos[i], "node.%d.model.init=%n", &node, &end) == 1 && end > 0) continue;
        others++;
    }
    return others;
}

/* A resume reads every node's model.init where the run directory says (init_record.h). */
static void run_resume_inits(SwarmRun* run, const CliArgs* a) {
    run->init_paths = callocCheck((size_t)run->size, sizeof(char*));
    for (int k = 0; k < run->size; k++) {
        const char* given = resume_init_given(a, k);
        run->init_paths[k] = init_record_path(run->resume, k, given);
        if (run->init_paths[k]) run->set.node[k].init = run->init_paths[k];
        else if (given && k == run->rank) run->init_given_unrecorded = 1;
    }
}

/* Resume, this rank's node: the model.init it reads is the one the run started from. */
static int run_resume_init_check(SwarmRun* run) {
    if (run->init_given_unrecorded)
        return set_error(run->err, sizeof run->err,
                         "node %d: model.init=%s given, but the run recorded no model.init for it to check against",
                         run->rank, run->set.node[run->rank].init);
    return init_record_verify(run->resume, run->rank, run->set.node[run->rank].init, run->err, sizeof run->err);
}

/* The options, the config (fresh or resumed) and its check against the swarm size, with
 * stderr silenced on ranks other than 0 (one copy of an error is enough). Returns 1 when
 * this rank found nothing wrong; not collective. */
static int run_read_config(SwarmRun* run, int argc, char** argv, int where[2]) {
    int saved_stderr = -1;
    if (run->rank != 0) {
        fflush(stderr);
        saved_stderr = dup(2);
        if (!freopen("/dev/null", "w", stderr)) saved_stderr = -1;
    }
    CliArgs args;
    int parsed = cli_parse("run", OPTIONS, argc, argv, &args); /* --help was answered before MPI_Init */
    run->resume = parsed == 0 ? args.opt[OPT_RESUME] : NULL;
    run->out_dir = args.opt[OPT_OUT];
    run->quiet = args.opt[OPT_QUIET] != NULL;
    if (parsed == 0 && run->resume) run->cfg = run_resume_config(run, resume_other_args(&args) || run->out_dir, where);
    else if (parsed == 0) run->cfg = cli_args_config("run", &args);
    int ok = run->cfg != NULL;
    if (ok) run->set = run_settings_read(run->cfg, run->size);
    if (ok && run->resume) run_resume_inits(run, &args);
    cli_args_free(&args);
    /* a resume checks its model.init files first (run_setup), then the config */
    if (ok && !where[1] && !run->resume && swarm_config_check(&run->set, run->err, sizeof run->err)) {
        if (run->rank == 0) fprintf(stderr, "sapo run: config error: %s\n", run->err);
        ok = 0;
    }
    if (saved_stderr >= 0) {
        fflush(stderr);
        dup2(saved_stderr, 2);
        close(saved_stderr);
    }
    return ok;
}

/* Every check before work, collectively. */
static StageResult run_setup(SwarmRun* run, int argc, char** argv) {
    int where[2] = {0, 0}; /* rank 0's verdict on a resume: rounds done, and 1 when complete */
    if (!agree(run_read_config(run, argc, argv, where), run->comm)) return stage_exit(2);
    mpiCheck(MPI_Bcast(where, 2, MPI_INT, 0, run->comm));
    run->start = where[0];
    if (where[1]) {
        if (run->rank == 0) printf("sapo run: %s is already complete (DONE); nothing to resume\n", run->resume);
        return stage_exit(0);
    }
    if (run->resume) {
        /* the model.init files the run started from (each rank its own node's), then the config */
        char prefix[1200];
        snprintf(prefix, sizeof prefix, "sapo run: cannot resume %s: ", run->resume);
        if (!agree_report(!run_resume_init_check(run), run->err, prefix, run->comm)) return stage_exit(2);
        int checked = run->rank != 0 || !swarm_config_check(&run->set, run->err, sizeof run->err);
        if (!checked) fprintf(stderr, "sapo run: config error: %s\n", run->err);
        if (!agree(checked, run->comm)) return stage_exit(2);
    }
    /* Every node's model.init read through (each rank its own), before any run directory. */
    int ok = !node_init_verify(&run->set.node[run->rank], run->rank, run->err, sizeof run->err);
    if (!agree_report(ok, run->err, "sapo run: config error: ", run->comm)) return stage_exit(2);
    /* Budget: rank 0 measures the tasks' answer and prompt lengths against every node's
     * n_ctx and max_new_tokens (deterministic, a few milliseconds), prints the table, and
     * stops a fresh run whose task is mostly unanswerable. A resumed run was started with
     * its settings and is only warned. */
    if (run->rank == 0) {
        if (budget_check_settings(&run->set, stdout, "sapo run: ", run->err, sizeof run->err)) {
            if (run->resume) {
                printf("sapo run: warning: %s\n", run->err);
            } else {
                fprintf(stderr, "sapo run: config error: %s\n", run->err);
                ok = 0;
            }
        }
        fflush(stdout);
    }
    if (!agree(ok, run->comm) || !agree(memory_fits(&run->set, run->rank, run->comm), run->comm)) return stage_exit(2);
    run->rounds = run->set.sw.rounds;
    return stage_go_on();
}

/* ---- the run directory: created (fresh) or checked node by node (resume) ------------ */

/* The directory on every rank, run.log opened on rank 0, the first lines printed. */
static StageResult run_open_dir(SwarmRun* run) {
    char* dir0 = NULL;
    if (run->rank == 0)
        dir0 = run->resume ? strdup(run->resume) : run_dir_start(run->cfg, &run->set.sw, run->out_dir, run->size);
    run->dir = broadcast_string(dir0, run->rank, run->comm);
    free(dir0);
    if (!run->dir) return stage_exit(1);
    if (run->resume) {
        char prefix[1200];
        snprintf(prefix, sizeof prefix, "sapo run: cannot resume %s: ", run->dir);
        int ok = !resume_verify_node(run->dir, run->rank, run->start, &run->set.node[run->rank], run->err,
                                     sizeof run->err);
        if (!agree_report(ok, run->err, prefix, run->comm)) return stage_exit(2);
    } else if (init_record_keep(run->dir, run->rank, run->set.node[run->rank].init, run->err, sizeof run->err)) {
        fault_set(&run->fault, "node %d: keeping model.init in the run directory: %s", run->rank, run->err);
    }
    if (run->rank == 0) {
        run->log.path = path_join(run->dir, "run.log");
        run->log.f = fopen(run->log.path, run->resume ? "a" : "w");
        if (!run->log.f) fault_set(&run->fault, "cannot open %s: %s", run->log.path, strerror(errno));
    }
    if (!agree_report(!run->fault.failed, run->fault.msg, "sapo run: ", run->comm)) return stage_exit(1);
    if (run->rank == 0) {
        if (run->resume)
            logf_both(&run->log, "sapo run: resuming %s after round %d of %d (%d nodes)\n", run->dir, run->start,
                      run->rounds, run->size);
        else
            logf_both(&run->log, "sapo run: %d nodes, %d rounds, run directory %s\n", run->size, run->rounds, run->dir);
        char blas[256];
        blas_describe(blas, sizeof blas);
        logf_both(&run->log, "sapo run: %s\n", blas);
    }
    return stage_go_on();
}

/* Rank 0: run.h5, the index linking every node's log. */
static void run_write_index(SwarmRun* run) {
    char** rel = mallocCheck(sizeof(char*) * run->size);
    for (int r = 0; r < run->size; r++) {
        rel[r] = mallocCheck(32);
        snprintf(rel[r], 32, "node_%04d.h5", r);
    }
    char* index = path_join(run->dir, "run.h5");
    if (h5log_write_run_index(index, run->size, (const char* const*)rel, run->err, sizeof run->err))
        fault_set(&run->fault, "%s", run->err);
    free(index);
    for (int r = 0; r < run->size; r++) free(rel[r]);
    free(rel);
}

/* Rank 0, unless --quiet: what node 0 is and what the evaluation asks. */
static void run_print_node0(SwarmRun* run) {
    const SwarmNode* node = run->node;
    const SwarmSettings* sw = &run->set.sw;
    logf_both(&run->log, "node 0: I=%d J=%d L=%d, %zu parameters, tasks %s at preset %s\n", node->set.n_local,
              node->set.n_external, node->set.n_completions, node->policy->num_params, sw->tasks_names,
              task_preset_name(sw->tasks_preset));
    logf_both(&run->log, "node 0: backend %s, %s\n", node->policy->backend->name, node->exchange_info);
    if (node->eval.n > 0)
        logf_both(&run->log,
                  "evaluation: %d fixed held-out questions (run.eval_seed %lld, digest %016llx) every %d rounds\n",
                  node->eval.n, (long long)sw->eval_seed, (unsigned long long)node->eval.digest,
                  sw->eval_every);
}

/* Every node built, its log opened (or cut back to the checkpoint), its checkpoint loaded;
 * rank 0 writes run.h5. */
static StageResult run_open_node(SwarmRun* run) {
    int rank = run->rank, start = run->start;
    run->totals[RT_EVAL_LAST] = NAN;
    run->node = node_create(&run->set, rank, run->comm, run->err, sizeof run->err);
    if (!run->node) fault_set(&run->fault, "node %d: %s", rank, run->err);
    snprintf(run->log_name, sizeof run->log_name, "node_%04d.h5", rank);
    char* log_path = path_join(run->dir, run->log_name);
    /* Resumed after a checkpoint: the log is cut back to it. Without one the run starts
     * again from round 0 and so does its log, whatever state a crash or a full disk left. */
    if (run->resume && start == 0) unlink(log_path);
    if (run->node && start > 0) {
        run->h5 = node_log_reopen(log_path, start - 1, run->err, sizeof run->err);
    } else if (run->node) {
        char* config_ini = config_text(run->cfg);
        run->h5 = node_log_create(log_path, config_ini, &run->set.node[rank], rank, run->size, &run->node->eval,
                                  run->err, sizeof run->err);
        free(config_ini);
    }
    if (run->node && !run->h5) fault_set(&run->fault, "node %d: %s", rank, run->err);
    if (run->h5 && h5log_rows(run->h5) != start)
        fault_set(&run->fault, "node %d: %s holds %lld of the %d rounds before the checkpoint", rank, log_path,
                  (long long)h5log_rows(run->h5), start);
    free(log_path);
    if (run->h5 && start > 0 && !run->fault.failed &&
        node_checkpoint_load(run->node, run->dir, start, run->totals, RT_COUNT, run->err, sizeof run->err))
        fault_set(&run->fault, "node %d: resuming from the checkpoint after round %d: %s", rank, start, run->err);
    if (rank == 0 && !run->fault.failed) run_write_index(run);
    runlog_check(&run->log, &run->fault, 0);
    if (!agree_report(!run->fault.failed, run->fault.msg, "sapo run: ", run->comm)) return stage_exit(1);
    if (rank == 0 && !run->quiet) run_print_node0(run);
    return stage_go_on();
}

/* ---- the rounds loop --------------------------------------------------------------- */

/* One round's record added to this node's totals (the summary's, saved in checkpoints). */
static void run_accumulate(double* totals, const RoundRecord* rec, double seconds) {
    totals[RT_OWN] += rec->m[RM_REWARD_OWN];
    totals[RT_TRAIN] += rec->m[RM_REWARD_TRAIN];
    totals[RT_EXT] += rec->m[RM_EXTERNAL_USED];
    totals[RT_SHORT] += rec->m[RM_SHORTFALL];
    totals[RT_REJ] += rec->m[RM_MSGS_REJECTED] + rec->m[RM_GROUPS_REJECTED];
    if (!isnan(rec->m[RM_EVAL_PASS1])) {
        totals[RT_EVAL_SUM] += rec->m[RM_EVAL_PASS1];
        totals[RT_EVAL_N] += 1;
        totals[RT_EVAL_LAST] = rec->m[RM_EVAL_PASS1];
    }
    totals[RT_TIME] += seconds;
    totals[RT_BYTES] += rec->m[RM_BYTES_SENT];
}

/* ---- the progress line --------------------------------------------------------------- */

/* After round r (0-based), every run.log_every rounds and at the last: the swarm's mean
 * rewards, collectively; rank 0 prints at most one line every 2 seconds (and the first and
 * last). *last_print is rank 0's time of the last line. */
static void run_progress(SwarmRun* run, int r, const RoundRecord* rec, int log_every, double* last_print) {
    if (run->quiet || ((r + 1) % log_every != 0 && r + 1 != run->rounds)) return;
    double now_mean[3] = {rec->m[RM_REWARD_OWN], rec->m[RM_REWARD_TRAIN], rec->m[RM_EXTERNAL_USED]}, mean[3];
    mpiCheck(MPI_Reduce(now_mean, mean, 3, MPI_DOUBLE, MPI_SUM, 0, run->comm));
    double now = clock_now();
    if (run->rank != 0 || !(now - *last_print >= 2.0 || r + 1 == run->rounds || r == 0)) return;
    double rate = (r + 1 - run->start) / (now - run->t_start);
    char eta[32];
    format_duration((run->rounds - r - 1) / rate, eta, sizeof eta);
    logf_both(&run->log, "round %5d/%d  reward own %.3f  train %.3f  external %.1f  %.2f rounds/s  ETA %s\n", r + 1,
              run->rounds, mean[0] / run->size, mean[1] / run->size, mean[2] / run->size, rate, eta);
    *last_print = now;
}

/* Rounds start..rounds-1: play, log, add up, checkpoint, report. Sets run->end. */
static void run_rounds(SwarmRun* run) {
    int log_every = run->set.sw.log_every, checkpoint_every = run->set.sw.checkpoint_every;
    double last_print = run->t_start = clock_now();
    RoundRecord rec;
    run->end = run->rounds;
    for (int r = run->start; r < run->rounds; r++) {
        double tr = clock_now();
        node_round(run->node, r, &rec);
        if (!run->fault.failed && node_log_append(run->h5, &rec, run->err, sizeof run->err))
            fault_set(&run->fault, "node %d: logging round %d: %s", run->rank, r, run->err);
        run_accumulate(run->totals, &rec, clock_now() - tr);
        if (checkpoint_every > 0 && (r + 1) % checkpoint_every == 0 && r + 1 < run->rounds &&
            run_checkpoint(run->node, run->dir, r + 1, checkpoint_every, run->totals, &run->log, &run->fault,
                           run->comm)) {
            run->end = r + 1;
            break;
        }
        run_progress(run, r, &rec, log_every, &last_print);
    }
}

/* ---- the summary: every rank's verdict, then summary.json and DONE ------------------- */

/* Returns the exit status. */
static int run_finish(SwarmRun* run) {
    node_finish(run->node, run->end);
    if (h5log_close_checked(run->h5, run->err, sizeof run->err)) fault_set(&run->fault, "node %d: %s", run->rank, run->err);
    run->h5 = NULL;
    if (run->end < run->rounds) return 1; /* printed at the checkpoint */
    runlog_check(&run->log, &run->fault, 0);
    if (!agree_report(!run->fault.failed, run->fault.msg, "sapo run: ", run->comm)) return 1;
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
    return agree_report(!run->fault.failed, run->fault.msg, "sapo run: ", run->comm) ? 0 : 1;
}

/* ---- the command ------------------------------------------------------------------- */

int cmd_run(int argc, char** argv) {
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    h5log_library_init();
    MPI_Init(&argc, &argv);
    SwarmRun run = {.comm = MPI_COMM_WORLD};
    MPI_Comm_rank(run.comm, &run.rank);
    MPI_Comm_size(run.comm, &run.size);
    openblas_set_num_threads(1);
    StageResult stage = run_setup(&run, argc, argv);
    if (stage_goes_on(stage)) stage = run_open_dir(&run);
    if (stage_goes_on(stage)) stage = run_open_node(&run);
    if (stage_goes_on(stage)) {
        run_rounds(&run);
        stage = stage_exit(run_finish(&run));
    }
    return run_end(&run, stage.exit_code);
}
