/* `sapo run`: the swarm. Under `mpirun -np N`, every rank is one node running SAPO rounds
 * (src/swarm/node.c); rank 0 prints progress and the summary. This file reads the options
 * and the config and prints the progress lines; the run's life (agreement, faults, the run
 * directory, resume, checkpoints, summary.json and DONE) is src/swarm/run.c's. */
#include <cblas.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/blas_select.h"
#include "cli/commands.h"
#include "core/check.h"
#include "core/clock.h"
#include "core/stage.h"
#include "io/h5log.h"
#include "swarm/init_record.h"
#include "swarm/run.h"
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

/* ---- the options and the config ------------------------------------------------- */

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
    if (parsed == 0 && run->resume && (resume_other_args(&args) || run->out_dir)) {
        if (run->rank == 0)
            fprintf(stderr, "sapo run: --resume takes no config or overrides but model.init=PATH: the run keeps its "
                            "config.ini\n");
    } else if (parsed == 0 && run->resume) {
        run->cfg = run_resume_load(run, where);
    } else if (parsed == 0) { /* checked now; a resume's config after its model.init files (swarm_run_check) */
        run->cfg = cli_args_settings("run", &args, run->size, 1, &run->set);
    }
    int ok = run->cfg != NULL;
    if (ok && run->resume) run_resume_inits(run, &args);
    cli_args_free(&args);
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
    if (!run_agree(run_read_config(run, argc, argv, where), run->comm)) return stage_exit(2);
    return swarm_run_check(run, where);
}

/* Rank 0, once the run directory is there: the run's first lines. */
static void run_print_start(SwarmRun* run) {
    if (run->resume)
        run_log_printf(&run->log, "sapo run: resuming %s after round %d of %d (%d nodes)\n", run->dir, run->start,
                       run->rounds, run->size);
    else
        run_log_printf(&run->log, "sapo run: %d nodes, %d rounds, run directory %s\n", run->size, run->rounds,
                       run->dir);
    char blas[256];
    blas_describe(blas, sizeof blas);
    run_log_printf(&run->log, "sapo run: %s\n", blas);
}

/* ---- the progress lines ---------------------------------------------------------- */

/* Rank 0, unless --quiet: what node 0 is and what the evaluation asks. */
static void run_print_node0(SwarmRun* run) {
    const SwarmNode* node = run->node;
    const SwarmSettings* sw = &run->set.sw;
    run_log_printf(&run->log, "node 0: I=%d J=%d L=%d, %zu parameters, tasks %s at preset %s\n", node->set.n_local,
                   node->set.n_external, node->set.n_completions, node->policy->num_params, sw->tasks_names,
                   task_preset_name(sw->tasks_preset));
    run_log_printf(&run->log, "node 0: backend %s, %s\n", node->policy->backend->name, node->exchange_info);
    if (node->eval.n > 0)
        run_log_printf(&run->log,
                       "evaluation: %d fixed held-out questions (run.eval_seed %lld, digest %016llx) every %d rounds\n",
                       node->eval.n, (long long)sw->eval_seed, (unsigned long long)node->eval.digest, sw->eval_every);
}

static void format_duration(double s, char* buf, size_t n) {
    if (s < 0 || !isfinite(s)) snprintf(buf, n, "?");
    else if (s < 120) snprintf(buf, n, "%.0fs", s);
    else if (s < 7200) snprintf(buf, n, "%.0fm%02.0fs", floor(s / 60), fmod(s, 60));
    else snprintf(buf, n, "%.0fh%02.0fm", floor(s / 3600), fmod(s / 60, 60));
}

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
    run_log_printf(&run->log, "round %5d/%d  reward own %.3f  train %.3f  external %.1f  %.2f rounds/s  ETA %s\n",
                   r + 1, run->rounds, mean[0] / run->size, mean[1] / run->size, mean[2] / run->size, rate, eta);
    *last_print = now;
}

/* Rounds start..rounds-1 (swarm_run_round), each followed by its progress line. Sets run->end. */
static void run_rounds(SwarmRun* run) {
    int log_every = run->set.sw.log_every;
    double last_print = run->t_start = clock_now();
    RoundRecord rec;
    run->end = run->rounds;
    for (int r = run->start; r < run->rounds; r++) {
        if (swarm_run_round(run, r, &rec)) break;
        run_progress(run, r, &rec, log_every, &last_print);
    }
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
    if (stage_goes_on(stage)) stage = swarm_run_open_dir(&run);
    if (stage_goes_on(stage) && run.rank == 0) run_print_start(&run);
    if (stage_goes_on(stage)) stage = swarm_run_open_node(&run);
    if (stage_goes_on(stage) && run.rank == 0 && !run.quiet) run_print_node0(&run);
    if (stage_goes_on(stage)) {
        run_rounds(&run);
        stage = stage_exit(swarm_run_finish(&run));
    }
    return swarm_run_end(&run, stage.exit_code);
}
