/* Continuing a killed or requeued run (see run.h): the run directory's verdict (complete,
 * or the checkpoint to continue from), its config.ini read back, and each rank's check of
 * what it will continue from (its log, its checkpoint, its model.init). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "core/check.h"
#include "io/files.h"
#include "io/run_dir.h"
#include "model/numerics.h"
#include "swarm/init_record.h"
#include "swarm/node_checkpoint.h"
#include "swarm/run.h"
#include "swarm/settings_load.h"

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

Config* run_resume_load(SwarmRun* run, int where[2]) {
    char* path = path_join(run->resume, "config.ini");
    SettingsRequest req = {.path = path, .n_nodes = run->size};
    Config* cfg = settings_load(&req, &run->set, run->err, sizeof run->err);
    if (!cfg && run->rank == 0) fprintf(stderr, "sapo run: cannot resume %s: %s\n", run->resume, run->err);
    free(path);
    /* Another swarm size is refused before the config is checked against this one. */
    int rc = cfg && run->rank == 0 ? resume_check(run->resume, run->size, &where[0], run->err, sizeof run->err) : 0;
    if (rc < 0) {
        fprintf(stderr, "sapo run: cannot resume %s: %s\n", run->resume, run->err);
        run_settings_free(&run->set);
        config_free(cfg);
        cfg = NULL;
    }
    where[1] = rc > 0;
    return cfg;
}

int run_resume_init_check(SwarmRun* run) {
    if (run->init_given_unrecorded)
        return set_error(run->err, sizeof run->err,
                         "node %d: model.init=%s given, but the run recorded no model.init for it to check against",
                         run->rank, run->set.node[run->rank].init);
    return init_record_verify(run->resume, run->rank, run->set.node[run->rank].init, run->err, sizeof run->err);
}

int run_resume_verify_node(const char* dir, int rank, int start, const NodeSettings* ns, char* err, size_t errlen) {
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
