/* A swarm run's life on one rank, from the checks before any work to summary.json and DONE
 * (`sapo run`: src/cli/cmd_run.c keeps its options and progress lines and calls the stages
 * below in order). The run directory holds the swarm size (NODES), the numerics version
 * (NUMERICS: a resume by a sapo of another is refused), the resolved config, each node's
 * model.init kept with its digest (init/, so a resume never needs the original;
 * swarm/init_record.h), one HDF5 log per node, run.h5 linking them, run.log, summary.json and
 * a DONE marker written last; every marker is written atomically.
 *
 * Failures never end in MPI_Abort: a check before any work (config, model.init, a resume
 * this launch cannot do) stops every rank with one line from rank 0 and exit 2, before
 * anything is touched; an I/O failure during the run (a log append, a checkpoint, a marker)
 * marks its rank failed, which stops logging and writing but keeps taking part in the
 * rounds until the next agreement point (a checkpoint, the end), where every rank stops
 * with one line naming the file and exit 1, the logs closed and the run resumable from its
 * last good checkpoint. */
#ifndef SAPO_SWARM_RUN_H
#define SAPO_SWARM_RUN_H

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#include "core/config.h"
#include "core/stage.h"
#include "io/h5log.h"
#include "swarm/node.h"
#include "swarm/node_settings.h"
#include "swarm/round_record.h"

/* This rank's first failure during the run, kept for the next agreement point. */
typedef struct {
    int failed;
    char msg[1024];
} RunFault;

void run_fault_set(RunFault* f, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* run.log (rank 0; f is NULL elsewhere): every progress line goes to stdout and there. The
 * first write error stops the writing and is reported at the next agreement point. */
typedef struct {
    FILE* f;
    char* path;
    int error;
} RunLog;

void run_log_printf(RunLog* log, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* Closes run.log (checked) when close_it; moves a write or close error into the rank's fault. */
void run_log_check(RunLog* log, RunFault* fault, int close_it);

/* A node's running totals over its rounds: the one list of them (name and meaning), in the
 * order its checkpoints store them (f64[RT_COUNT] of the state file) and the summary
 * gathers them. swarm_run_round adds a round to them. */
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

/* What one rank's run holds, from set-up to the end; swarm_run_end releases all of it. */
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

/* Every rank's verdict, collectively. When some rank failed and msg is given (on every
 * rank), rank 0 prints the message of the lowest failing rank as one line after prefix.
 * Returns 1 when every rank is ok. */
int run_agree_report(int ok, const char* msg, const char* prefix, MPI_Comm comm);
/* Rank 0 has printed what is wrong; every rank learns the verdict. */
int run_agree(int ok_here, MPI_Comm comm);

/* ---- the stages, in order (run.c; the summary's run_summary.c) ------------------------ */

/* Every check before work, collectively, once each rank has read its config and settings
 * (where: rank 0's verdict on a resume, rounds done and 1 when complete). */
StageResult swarm_run_check(SwarmRun* run, int where[2]);
/* The directory on every rank (created fresh, or checked node by node on a resume), run.log
 * opened on rank 0. */
StageResult swarm_run_open_dir(SwarmRun* run);
/* Every node built, its log opened (or cut back to the checkpoint), its checkpoint loaded;
 * rank 0 writes run.h5. */
StageResult swarm_run_open_node(SwarmRun* run);
/* Round r played, logged and added to the totals, then the checkpoint after it when one is
 * due. Returns 1 when the run stops there (a rank failed at the checkpoint; run->end is set). */
int swarm_run_round(SwarmRun* run, int r, RoundRecord* rec);
/* After the rounds: every rank's verdict, then rank 0's summary table, summary.json and DONE.
 * Returns the exit status. */
int swarm_run_finish(SwarmRun* run);
/* The one way out of `sapo run`, whatever happened: closes what the run opened, ends MPI,
 * returns `code` (0 done, 1 an I/O failure during the run, 2 a check before any work). */
int swarm_run_end(SwarmRun* run, int code);

/* ---- resuming (run_resume.c) --------------------------------------------------------- */

/* A resumed run's config.ini and its settings (every rank), and rank 0's verdict on the run
 * directory: where[0] = rounds done, where[1] = 1 when it is complete. NULL after printing a
 * line. */
Config* run_resume_load(SwarmRun* run, int where[2]);
/* Resume, this rank's node: the model.init it reads is the one the run started from. */
int run_resume_init_check(SwarmRun* run);
/* Every rank, before any node file is opened: after `start` > 0 rounds its log must be
 * there to continue and its checkpoint whole (model and state file). */
int run_resume_verify_node(const char* dir, int rank, int start, const NodeSettings* ns, char* err, size_t errlen);

#endif
