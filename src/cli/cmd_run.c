/* `sapo run`: the swarm. Under `mpirun -np N`, every rank is one node running SAPO rounds
 * (src/swarm/node.c); rank 0 prints progress and the summary. The run directory holds the
 * swarm size (NODES), the resolved config, one HDF5 log per node, run.h5 linking them,
 * run.log, summary.json and a DONE marker written last; every marker is written atomically.
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

#include "bench/bench_timer.h"
#include "cli/blas_select.h"
#include "cli/commands.h"
#include "core/check.h"
#include "core/config.h"
#include "io/atomic_file.h"
#include "io/h5log.h"
#include "io/run_dir.h"
#include "swarm/budget_check.h"
#include "swarm/node.h"
#include "swarm/node_checkpoint.h"
#include "swarm/node_log.h"
#include "model/model_from_config.h"

static const CliOption OPTIONS[] = {
    {"out", "RUN_DIR", "run directory (default run.out, else results/runs/NAME-DATE-TIME)"},
    {"resume", "RUN_DIR", "continue a killed or requeued run from its last checkpoint\n"
                          "(run.checkpoint_every), with the config it was started with"},
    {"quiet", NULL, "no progress lines (the summary is still printed)"},
    {NULL, NULL, NULL},
};
enum { OPT_OUT, OPT_RESUME, OPT_QUIET };

static void usage(FILE* out) {
    fprintf(out,
            "usage: mpirun -np N sapo run CONFIG.ini [section.key=value ...] [--out RUN_DIR] [--quiet]\n"
            "       mpirun -np N sapo run --resume RUN_DIR [--quiet]\n"
            "Runs a SAPO swarm: each MPI rank is one node (see README and `sapo info` for keys).\n");
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
static int memory_fits(const Config* cfg, int rank, MPI_Comm comm) {
    MPI_Comm host;
    int host_rank, host_size, fits = 1;
    mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host));
    mpiCheck(MPI_Comm_rank(host, &host_rank));
    mpiCheck(MPI_Comm_size(host, &host_size));
    double mine = node_memory_estimate(cfg, rank), sum = 0, most = 0;
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

/* Per-node totals gathered for the summary. */
enum { S_OWN, S_TRAIN, S_EXT, S_SHORT, S_REJ, S_EVAL_SUM, S_EVAL_N, S_EVAL_LAST, S_TIME, S_BYTES, S_COUNT };

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
    if ((*start = checkpoint_latest_read(dir)) < 0) return set_error(err, errlen, "%s/ckpt/LATEST is malformed", dir);
    return 0;
}

/* Every rank, before any node file is opened: after `start` > 0 rounds its log must be
 * there to continue and its checkpoint whole (model and state file). */
static int resume_verify_node(const char* dir, int rank, int start, const Config* cfg, char* err, size_t errlen) {
    if (start == 0) return 0; /* no checkpoint yet: every log restarts from round 0 */
    char leaf[32], why[1024];
    snprintf(leaf, sizeof leaf, "node_%04d.h5", rank);
    char* log = path_join(dir, leaf);
    struct stat st;
    int there = stat(log, &st) == 0;
    if (!there) set_error(err, errlen, "node %d: %s is missing (the checkpoint after round %d continues it)", rank, log, start);
    free(log);
    if (!there) return -1;
    GPTConfig shape = gpt_config_from(cfg, rank);
    if (node_checkpoint_verify(dir, rank, start, &shape, S_COUNT, why, sizeof why))
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
    if (!fault->failed && node_checkpoint_save(node, dir, done, totals, S_COUNT, err, sizeof err))
        fault_set(fault, "node %d: checkpoint after round %d: %s", node->rank, done, err);
    runlog_check(log, fault, 0);
    if (!agree_report(!fault->failed, fault->msg, "sapo run: ", comm)) return -1;
    if (node->rank == 0 && checkpoint_latest_write(dir, done, err, sizeof err))
        fault_set(fault, "checkpoint after round %d: %s", done, err);
    if (!agree_report(!fault->failed, fault->msg, "sapo run: ", comm)) return -1;
    node_checkpoint_prune(dir, node->rank, done - every);
    return 0;
}

/* summary.json (atomically, through atomic_file_write): per node the totals and learning
 * windows, then the sums. Built with cJSON: a NaN (no evaluation, no window) is null, and
 * every number reads back as the very double it was; seconds keeps its three decimals. */
static int summary_json_write(const char* path, int size, int rounds, double wall, const double* all,
                              const double* windows, int window, char* err, size_t errlen) {
    char secs[48];
    snprintf(secs, sizeof secs, "%.3f", wall);
    cJSON* root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "nodes", size);
    cJSON_AddNumberToObject(root, "rounds", rounds);
    cJSON_AddNumberToObject(root, "seconds", strtod(secs, NULL));
    cJSON* per_node = cJSON_AddArrayToObject(root, "per_node");
    double sum_own = 0, sum_train = 0;
    for (int k = 0; k < size; k++) {
        const double *t = all + (size_t)k * S_COUNT, *wk = windows + 2 * (size_t)k;
        sum_own += t[S_OWN];
        sum_train += t[S_TRAIN];
        cJSON* e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "node", k);
        cJSON_AddNumberToObject(e, "cum_reward_own", t[S_OWN]);
        cJSON_AddNumberToObject(e, "cum_reward_train", t[S_TRAIN]);
        cJSON_AddNumberToObject(e, "external_per_round", rounds ? t[S_EXT] / rounds : 0.0);
        cJSON_AddNumberToObject(e, "rejected", t[S_REJ]);
        cJSON_AddNumberToObject(e, "eval_last", t[S_EVAL_LAST]); /* cJSON prints NaN as null */
        cJSON_AddNumberToObject(e, "own_first_window", wk[0]);
        cJSON_AddNumberToObject(e, "own_last_window", wk[1]);
        cJSON_AddItemToArray(per_node, e);
    }
    cJSON_AddNumberToObject(root, "cum_reward_own", sum_own);
    cJSON_AddNumberToObject(root, "cum_reward_train", sum_train);
    cJSON_AddNumberToObject(root, "window_rounds", window);
    char* text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return set_error(err, errlen, "cannot write %s: out of memory", path);
    size_t n = strlen(text);
    char* line = mallocCheck(n + 2);
    memcpy(line, text, n);
    memcpy(line + n, "\n", 2);
    cJSON_free(text);
    int rc = atomic_file_write(path, line, err, errlen);
    free(line);
    return rc;
}

/* Rank 0 after the last round: the summary table (stdout and run.log), summary.json, run.log
 * closed, then DONE, each only when everything before it was written. */
static void run_summarize(const Config* cfg, const char* dir, int size, int rounds, double wall, const double* all,
                          const double* windows, RunLog* log, RunFault* fault) {
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
        const double *t = all + (size_t)k * S_COUNT, *wk = windows + 2 * (size_t)k;
        sum_own += t[S_OWN];
        sum_train += t[S_TRAIN];
        first += wk[0] / size;
        last += wk[1] / size;
        logf_both(log, "%-6d %4ld %4ld %12.2f %12.2f %10.3f %11.3f %9.2f %9.0f %9.3f %10.3f\n", k,
                  config_node_int(cfg, k, "sampling.local"), config_node_int(cfg, k, "sampling.external"), t[S_OWN],
                  t[S_TRAIN], wk[0], wk[1], rounds ? t[S_EXT] / rounds : 0.0, t[S_REJ], t[S_EVAL_LAST],
                  rounds ? t[S_TIME] / rounds : 0.0);
    }
    char* path = path_join(dir, "summary.json");
    if (!fault->failed && summary_json_write(path, size, rounds, wall, all, windows, w, err, sizeof err))
        fault_set(fault, "%s", err);
    free(path);
    logf_both(log, "%-6s %9s %12.2f %12.2f %10.3f %11.3f\n", "total", "", sum_own, sum_train, first, last);
    logf_both(log, "own reward, mean of the nodes: %.3f over rounds 1-%d, %.3f over the last %d rounds (%+.3f)\n", first,
              w, last, w, last - first);
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

/* Rank 0 creates a fresh run's directory and its first markers: NODES, config.ini. Returns
 * the directory, or NULL after printing one line. */
static char* run_dir_start(const Config* cfg, const char* requested, int size) {
    char err[1024];
    if (!requested) requested = config_string(cfg, "run.out");
    char* probe = requested && *requested ? path_join(requested, "node_0000.h5") : NULL;
    struct stat st;
    int taken = probe && stat(probe, &st) == 0;
    free(probe);
    if (taken) {
        fprintf(stderr, "sapo run: %s already holds a run; choose another --out (or remove it)\n", requested);
        return NULL;
    }
    char* dir = run_dir_create(requested, "swarm", config_string(cfg, "run.name"), err, sizeof err);
    int ok = dir && !run_dir_write_nodes(dir, size, err, sizeof err);
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

/* Closes what the run opened and ends MPI; returns `code`. */
static int run_end(int code, SwarmNode* node, H5Log* h5, RunLog* log, Config* cfg, char* dir) {
    h5log_close(h5);
    if (log->f) fclose(log->f);
    free(log->path);
    node_free(node);
    config_free(cfg);
    free(dir);
    MPI_Finalize();
    return code;
}

int cmd_run(int argc, char** argv) {
    if (cli_wants_help(argc, argv)) {
        usage(stdout);
        return 0;
    }
    h5log_library_init();
    MPI_Init(&argc, &argv);
    MPI_Comm comm = MPI_COMM_WORLD;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    openblas_set_num_threads(1);

    /* ---- set-up: every check before any rank starts work ---- */
    int saved_stderr = -1;
    if (rank != 0) { /* one copy of a config error is enough: rank 0 prints it */
        fflush(stderr);
        saved_stderr = dup(2);
        if (!freopen("/dev/null", "w", stderr)) saved_stderr = -1;
    }
    CliArgs args;
    int parsed = cli_parse("run", OPTIONS, argc, argv, &args);
    const char* resume = parsed == 0 ? args.opt[OPT_RESUME] : NULL;
    const char* out_dir = args.opt[OPT_OUT];
    int quiet = args.opt[OPT_QUIET] != NULL;
    Config* cfg = NULL;
    char err[1024] = "";
    int where[2] = {0, 0}; /* rank 0's verdict on a resume: rounds done, and 1 when complete */
    if (parsed != 0) {
        /* printed by cli_parse (--help came before MPI_Init) */
    } else if (resume) {
        int extra = args.n_pos > 0 || out_dir;
        char* path = path_join(resume, "config.ini");
        if (extra) {
            if (rank == 0) fprintf(stderr, "sapo run: --resume takes no config or overrides: the run keeps its config.ini\n");
        } else {
            cfg = config_new();
            if (config_load_all(cfg, path, 0, NULL, err, sizeof err)) {
                if (rank == 0) fprintf(stderr, "sapo run: cannot resume %s: %s\n", resume, err);
                config_free(cfg);
                cfg = NULL;
            }
        }
        free(path);
        /* Another swarm size is refused before the config is checked against this one. */
        int rc = cfg && rank == 0 ? resume_check(resume, size, &where[0], err, sizeof err) : 0;
        if (rc < 0) {
            fprintf(stderr, "sapo run: cannot resume %s: %s\n", resume, err);
            config_free(cfg);
            cfg = NULL;
        }
        where[1] = rc > 0;
    } else {
        cfg = cli_args_config("run", &args);
    }
    cli_args_free(&args);
    int ok = cfg != NULL;
    if (ok && !where[1] && swarm_config_check(cfg, size, err, sizeof err)) {
        if (rank == 0) fprintf(stderr, "sapo run: config error: %s\n", err);
        ok = 0;
    }
    if (saved_stderr >= 0) {
        fflush(stderr);
        dup2(saved_stderr, 2);
        close(saved_stderr);
    }
    RunLog runlog = {0};
    if (!agree(ok, comm)) return run_end(2, NULL, NULL, &runlog, cfg, NULL);
    mpiCheck(MPI_Bcast(where, 2, MPI_INT, 0, comm));
    int start = where[0]; /* rounds already done (resume) */
    if (where[1]) {
        if (rank == 0) printf("sapo run: %s is already complete (DONE); nothing to resume\n", resume);
        return run_end(0, NULL, NULL, &runlog, cfg, NULL);
    }
    /* Every node's model.init read through (each rank its own), before any run directory. */
    ok = !node_init_verify(cfg, rank, err, sizeof err);
    if (!agree_report(ok, err, "sapo run: config error: ", comm)) return run_end(2, NULL, NULL, &runlog, cfg, NULL);
    /* Budget: rank 0 measures the tasks' answer and prompt lengths against every node's
     * n_ctx and max_new_tokens (deterministic, a few milliseconds), prints the table, and
     * stops a fresh run whose task is mostly unanswerable. A resumed run was started with
     * its settings and is only warned. */
    if (rank == 0) {
        if (budget_check_config(cfg, size, stdout, "sapo run: ", err, sizeof err)) {
            if (resume) {
                printf("sapo run: warning: %s\n", err);
            } else {
                fprintf(stderr, "sapo run: config error: %s\n", err);
                ok = 0;
            }
        }
        fflush(stdout);
    }
    if (!agree(ok, comm) || !agree(memory_fits(cfg, rank, comm), comm)) return run_end(2, NULL, NULL, &runlog, cfg, NULL);

    /* ---- the run directory: created (fresh) or checked node by node (resume) ---- */
    char* dir0 = NULL;
    if (rank == 0) dir0 = resume ? strdup(resume) : run_dir_start(cfg, out_dir, size);
    char* dir = broadcast_string(dir0, rank, comm);
    free(dir0);
    if (!dir) return run_end(1, NULL, NULL, &runlog, cfg, NULL);
    if (resume) {
        char prefix[1200];
        snprintf(prefix, sizeof prefix, "sapo run: cannot resume %s: ", dir);
        ok = !resume_verify_node(dir, rank, start, cfg, err, sizeof err);
        if (!agree_report(ok, err, prefix, comm)) return run_end(2, NULL, NULL, &runlog, cfg, dir);
    }
    RunFault fault = {0};
    if (rank == 0) {
        runlog.path = path_join(dir, "run.log");
        runlog.f = fopen(runlog.path, resume ? "a" : "w");
        if (!runlog.f) fault_set(&fault, "cannot open %s: %s", runlog.path, strerror(errno));
    }
    if (!agree_report(!fault.failed, fault.msg, "sapo run: ", comm)) return run_end(1, NULL, NULL, &runlog, cfg, dir);
    int rounds = (int)config_int(cfg, "swarm.rounds"), log_every = (int)config_int(cfg, "run.log_every");
    int checkpoint_every = (int)config_int(cfg, "run.checkpoint_every");
    if (rank == 0 && resume)
        logf_both(&runlog, "sapo run: resuming %s after round %d of %d (%d nodes)\n", dir, start, rounds, size);
    else if (rank == 0)
        logf_both(&runlog, "sapo run: %d nodes, %d rounds, run directory %s\n", size, rounds, dir);
    if (rank == 0) {
        char blas[256];
        blas_describe(blas, sizeof blas);
        logf_both(&runlog, "sapo run: %s\n", blas);
    }

    /* ---- every node: built, its log opened, its checkpoint loaded; rank 0: run.h5 ---- */
    double totals[S_COUNT] = {0};
    totals[S_EVAL_LAST] = NAN;
    SwarmNode* node = node_create(cfg, rank, size, comm, err, sizeof err);
    if (!node) fault_set(&fault, "node %d: %s", rank, err);
    char name[32];
    snprintf(name, sizeof name, "node_%04d.h5", rank);
    char* log_path = path_join(dir, name);
    /* Resumed after a checkpoint: the log is cut back to it. Without one the run starts
     * again from round 0 and so does its log, whatever state a crash or a full disk left. */
    if (resume && start == 0) unlink(log_path);
    H5Log* h5 = !node ? NULL
                : start > 0 ? node_log_reopen(log_path, start - 1, err, sizeof err)
                            : node_log_create(log_path, cfg, rank, size, &node->eval, err, sizeof err);
    if (node && !h5) fault_set(&fault, "node %d: %s", rank, err);
    if (h5 && h5log_rows(h5) != start)
        fault_set(&fault, "node %d: %s holds %lld of the %d rounds before the checkpoint", rank, log_path,
                  (long long)h5log_rows(h5), start);
    free(log_path);
    if (h5 && start > 0 && !fault.failed && node_checkpoint_load(node, dir, start, totals, S_COUNT, err, sizeof err))
        fault_set(&fault, "node %d: resuming from the checkpoint after round %d: %s", rank, start, err);
    if (rank == 0 && !fault.failed) {
        char** rel = mallocCheck(sizeof(char*) * size);
        for (int r = 0; r < size; r++) {
            rel[r] = mallocCheck(32);
            snprintf(rel[r], 32, "node_%04d.h5", r);
        }
        char* index = path_join(dir, "run.h5");
        if (h5log_write_run_index(index, size, (const char* const*)rel, err, sizeof err)) fault_set(&fault, "%s", err);
        free(index);
        for (int r = 0; r < size; r++) free(rel[r]);
        free(rel);
    }
    runlog_check(&runlog, &fault, 0);
    if (!agree_report(!fault.failed, fault.msg, "sapo run: ", comm)) return run_end(1, node, h5, &runlog, cfg, dir);
    if (rank == 0) {
        if (!quiet)
            logf_both(&runlog, "node 0: I=%d J=%d L=%d, %zu parameters, tasks %s at preset %s\n", node->n_local,
                      node->n_external, node->n_completions, node->policy->num_params, config_string(cfg, "tasks.names"),
                      config_string(cfg, "tasks.preset"));
        if (!quiet) logf_both(&runlog, "node 0: backend %s, %s\n", node->policy->backend->name, node->exchange_info);
        if (!quiet && node->eval.n > 0)
            logf_both(&runlog,
                      "evaluation: %d fixed held-out questions (run.eval_seed %lld, digest %016llx) every %d rounds\n",
                      node->eval.n, (long long)config_int(cfg, "run.eval_seed"), (unsigned long long)node->eval.digest,
                      node->eval_every);
    }

    /* ---- the rounds ---- */
    double t_start = bench_now(), last_print = t_start;
    RoundRecord rec;
    int end = rounds; /* the rounds every node ran: fewer when the run stops at a failed checkpoint */
    for (int r = start; r < rounds; r++) {
        double tr = bench_now();
        node_round(node, r, &rec);
        if (!fault.failed && node_log_append(h5, &rec, err, sizeof err))
            fault_set(&fault, "node %d: logging round %d: %s", rank, r, err);
        totals[S_OWN] += rec.m[RM_REWARD_OWN];
        totals[S_TRAIN] += rec.m[RM_REWARD_TRAIN];
        totals[S_EXT] += rec.m[RM_EXTERNAL_USED];
        totals[S_SHORT] += rec.m[RM_SHORTFALL];
        totals[S_REJ] += rec.m[RM_MSGS_REJECTED] + rec.m[RM_GROUPS_REJECTED];
        if (!isnan(rec.m[RM_EVAL_PASS1])) {
            totals[S_EVAL_SUM] += rec.m[RM_EVAL_PASS1];
            totals[S_EVAL_N] += 1;
            totals[S_EVAL_LAST] = rec.m[RM_EVAL_PASS1];
        }
        totals[S_TIME] += bench_now() - tr;
        totals[S_BYTES] += rec.m[RM_BYTES_SENT];
        if (checkpoint_every > 0 && (r + 1) % checkpoint_every == 0 && r + 1 < rounds &&
            run_checkpoint(node, dir, r + 1, checkpoint_every, totals, &runlog, &fault, comm)) {
            end = r + 1;
            break;
        }
        double now_mean[3] = {rec.m[RM_REWARD_OWN], rec.m[RM_REWARD_TRAIN], rec.m[RM_EXTERNAL_USED]}, mean[3];
        int want_line = !quiet && ((r + 1) % log_every == 0 || r + 1 == rounds);
        if (want_line) {
            mpiCheck(MPI_Reduce(now_mean, mean, 3, MPI_DOUBLE, MPI_SUM, 0, comm));
            double now = bench_now();
            if (rank == 0 && (now - last_print >= 2.0 || r + 1 == rounds || r == 0)) {
                double rate = (r + 1 - start) / (now - t_start);
                char eta[32];
                format_duration((rounds - r - 1) / rate, eta, sizeof eta);
                logf_both(&runlog, "round %5d/%d  reward own %.3f  train %.3f  external %.1f  %.2f rounds/s  ETA %s\n",
                          r + 1, rounds, mean[0] / size, mean[1] / size, mean[2] / size, rate, eta);
                last_print = now;
            }
        }
    }

    /* ---- the end: every rank's verdict, then the summary and DONE ---- */
    node_finish(node, end);
    if (h5log_close_checked(h5, err, sizeof err)) fault_set(&fault, "node %d: %s", rank, err);
    h5 = NULL;
    if (end < rounds) return run_end(1, node, NULL, &runlog, cfg, dir); /* printed at the checkpoint */
    runlog_check(&runlog, &fault, 0);
    if (!agree_report(!fault.failed, fault.msg, "sapo run: ", comm)) return run_end(1, node, NULL, &runlog, cfg, dir);
    double* all = rank == 0 ? mallocCheck(sizeof(double) * S_COUNT * size) : NULL;
    mpiCheck(MPI_Gather(totals, S_COUNT, MPI_DOUBLE, all, S_COUNT, MPI_DOUBLE, 0, comm));
    double window[2], *windows = rank == 0 ? mallocCheck(sizeof(double) * 2 * size) : NULL;
    char* own_log = path_join(dir, name);
    own_reward_window(own_log, rounds, window);
    free(own_log);
    mpiCheck(MPI_Gather(window, 2, MPI_DOUBLE, windows, 2, MPI_DOUBLE, 0, comm));
    if (rank == 0) run_summarize(cfg, dir, size, rounds, bench_now() - t_start, all, windows, &runlog, &fault);
    free(all);
    free(windows);
    ok = agree_report(!fault.failed, fault.msg, "sapo run: ", comm);
    return run_end(ok ? 0 : 1, node, NULL, &runlog, cfg, dir);
}
