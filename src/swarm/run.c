/* A swarm run's life on one rank (see run.h): the agreement of every rank, the fault
 * protocol, the host memory check, the run directory, the node and its log, the rounds with
 * their checkpoints, and the end. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "core/clock.h"
#include "io/atomic_file.h"
#include "io/files.h"
#include "io/run_dir.h"
#include "model/numerics.h"
#include "swarm/budget_check.h"
#include "swarm/init_record.h"
#include "swarm/node_checkpoint.h"
#include "swarm/node_config.h"
#include "swarm/node_log.h"
#include "swarm/run.h"

/* ---- agreement, faults and run.log ------------------------------------------------- */

int run_agree_report(int ok, const char* msg, const char* prefix, MPI_Comm comm) {
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

int run_agree(int ok_here, MPI_Comm comm) { return run_agree_report(ok_here, NULL, "", comm); }

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

void run_fault_set(RunFault* f, const char* fmt, ...) {
    if (f->failed) return; /* the first failure is the one to report */
    f->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
}

void run_log_printf(RunLog* log, const char* fmt, ...) {
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

void run_log_check(RunLog* log, RunFault* fault, int close_it) {
    if (close_it && log->f) {
        if (fclose(log->f) != 0 && !log->error) log->error = errno ? errno : EIO;
        log->f = NULL;
    }
    if (log->error) run_fault_set(fault, "cannot write %s: %s", log->path, strerror(log->error));
}

/* ---- set-up and checks: every check before any rank starts work --------------------- */

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

StageResult swarm_run_check(SwarmRun* run, int where[2]) {
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
        if (!run_agree_report(!run_resume_init_check(run), run->err, prefix, run->comm)) return stage_exit(2);
        int checked = run->rank != 0 || !swarm_config_check(&run->set, run->err, sizeof run->err);
        if (!checked) fprintf(stderr, "sapo run: config error: %s\n", run->err);
        if (!run_agree(checked, run->comm)) return stage_exit(2);
    }
    /* Every node's model.init read through (each rank its own), before any run directory. */
    int ok = !node_init_verify(&run->set.node[run->rank], run->rank, run->err, sizeof run->err);
    if (!run_agree_report(ok, run->err, "sapo run: config error: ", run->comm)) return stage_exit(2);
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
    if (!run_agree(ok, run->comm) || !run_agree(memory_fits(&run->set, run->rank, run->comm), run->comm))
        return stage_exit(2);
    run->rounds = run->set.sw.rounds;
    return stage_go_on();
}

/* ---- the run directory: created (fresh) or checked node by node (resume) ------------ */

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

StageResult swarm_run_open_dir(SwarmRun* run) {
    char* dir0 = NULL;
    if (run->rank == 0)
        dir0 = run->resume ? strdup(run->resume) : run_dir_start(run->cfg, &run->set.sw, run->out_dir, run->size);
    run->dir = broadcast_string(dir0, run->rank, run->comm);
    free(dir0);
    if (!run->dir) return stage_exit(1);
    if (run->resume) {
        char prefix[1200];
        snprintf(prefix, sizeof prefix, "sapo run: cannot resume %s: ", run->dir);
        int ok = !run_resume_verify_node(run->dir, run->rank, run->start, &run->set.node[run->rank], run->err,
                                         sizeof run->err);
        if (!run_agree_report(ok, run->err, prefix, run->comm)) return stage_exit(2);
    } else if (init_record_keep(run->dir, run->rank, run->set.node[run->rank].init, run->err, sizeof run->err)) {
        run_fault_set(&run->fault, "node %d: keeping model.init in the run directory: %s", run->rank, run->err);
    }
    if (run->rank == 0) {
        run->log.path = path_join(run->dir, "run.log");
        run->log.f = fopen(run->log.path, run->resume ? "a" : "w");
        if (!run->log.f) run_fault_set(&run->fault, "cannot open %s: %s", run->log.path, strerror(errno));
    }
    if (!run_agree_report(!run->fault.failed, run->fault.msg, "sapo run: ", run->comm)) return stage_exit(1);
    return stage_go_on();
}

/* ---- the node ------------------------------------------------------------------------ */

/* Rank 0: run.h5, the index linking every node's log. */
static void run_write_index(SwarmRun* run) {
    char** rel = mallocCheck(sizeof(char*) * run->size);
    for (int r = 0; r < run->size; r++) {
        rel[r] = mallocCheck(32);
        snprintf(rel[r], 32, "node_%04d.h5", r);
    }
    char* index = path_join(run->dir, "run.h5");
    if (h5log_write_run_index(index, run->size, (const char* const*)rel, run->err, sizeof run->err))
        run_fault_set(&run->fault, "%s", run->err);
    free(index);
    for (int r = 0; r < run->size; r++) free(rel[r]);
    free(rel);
}

StageResult swarm_run_open_node(SwarmRun* run) {
    int rank = run->rank, start = run->start;
    run->totals[RT_EVAL_LAST] = NAN;
    run->node = node_create(&run->set, rank, run->comm, run->err, sizeof run->err);
    if (!run->node) run_fault_set(&run->fault, "node %d: %s", rank, run->err);
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
    if (run->node && !run->h5) run_fault_set(&run->fault, "node %d: %s", rank, run->err);
    if (run->h5 && h5log_rows(run->h5) != start)
        run_fault_set(&run->fault, "node %d: %s holds %lld of the %d rounds before the checkpoint", rank, log_path,
                      (long long)h5log_rows(run->h5), start);
    free(log_path);
    if (run->h5 && start > 0 && !run->fault.failed &&
        node_checkpoint_load(run->node, run->dir, start, run->totals, RT_COUNT, run->err, sizeof run->err))
        run_fault_set(&run->fault, "node %d: resuming from the checkpoint after round %d: %s", rank, start, run->err);
    if (rank == 0 && !run->fault.failed) run_write_index(run);
    run_log_check(&run->log, &run->fault, 0);
    if (!run_agree_report(!run->fault.failed, run->fault.msg, "sapo run: ", run->comm)) return stage_exit(1);
    return stage_go_on();
}

/* ---- the rounds ---------------------------------------------------------------------- */

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

/* The checkpoint after `done` rounds: every node writes its own; once all have (the first
 * agreement), rank 0 records it in ckpt/LATEST; once that is written (the second), older ones
 * go. Returns 0, or -1 when a rank failed (rank 0 printed it): the run stops, LATEST still
 * names the last good checkpoint. */
static int run_checkpoint(SwarmNode* node, const char* dir, int done, int every, const double* totals, RunLog* log,
                          RunFault* fault, MPI_Comm comm) {
    char err[1024];
    if (!fault->failed && node_checkpoint_save(node, dir, done, totals, RT_COUNT, err, sizeof err))
        run_fault_set(fault, "node %d: checkpoint after round %d: %s", node->rank, done, err);
    run_log_check(log, fault, 0);
    if (!run_agree_report(!fault->failed, fault->msg, "sapo run: ", comm)) return -1;
    if (node->rank == 0 && checkpoint_latest_write(dir, done, err, sizeof err))
        run_fault_set(fault, "checkpoint after round %d: %s", done, err);
    if (!run_agree_report(!fault->failed, fault->msg, "sapo run: ", comm)) return -1;
    node_checkpoint_prune(dir, node->rank, done - every);
    return 0;
}

/* Rounds start..rounds-1 come here one at a time from the command's loop. */
int swarm_run_round(SwarmRun* run, int r, RoundRecord* rec) {
    int checkpoint_every = run->set.sw.checkpoint_every;
    double tr = clock_now();
    node_round(run->node, r, rec);
    if (!run->fault.failed && node_log_append(run->h5, rec, run->err, sizeof run->err))
        run_fault_set(&run->fault, "node %d: logging round %d: %s", run->rank, r, run->err);
    run_accumulate(run->totals, rec, clock_now() - tr);
    if (checkpoint_every > 0 && (r + 1) % checkpoint_every == 0 && r + 1 < run->rounds &&
        run_checkpoint(run->node, run->dir, r + 1, checkpoint_every, run->totals, &run->log, &run->fault,
                       run->comm)) {
        run->end = r + 1;
        return 1;
    }
    return 0;
}

/* ---- the end -------------------------------------------------------------------------- */

int swarm_run_end(SwarmRun* run, int code) {
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
