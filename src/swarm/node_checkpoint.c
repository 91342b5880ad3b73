/* Node checkpoints (see node_checkpoint.h). State file layout (host byte order; the files
 * never leave the run): "SAPOSTAT", u32 version, i32 rank, i32 rounds_done, i32 n_totals,
 * f64[n_totals] totals, then the p2p in-flight block (net/exchange_p2p.c) when p2p is used, then
 * the outer state of weight synchronisation (weight_sync_save) when sync.method is not none. */
#include "swarm/node_checkpoint.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "io/atomic_file.h"
#include "io/run_dir.h"
#include "model/checkpoint.h"
#include "swarm/sync_exchange.h"

#define STATE_MAGIC "SAPOSTAT"
#define STATE_VERSION 1u

static void paths(const char* run_dir, int rank, int rounds_done, char* model, char* state, size_t n) {
    snprintf(model, n, "%s/ckpt/node_%04d.r%07d.model", run_dir, rank, rounds_done);
    snprintf(state, n, "%s/ckpt/node_%04d.r%07d.state", run_dir, rank, rounds_done);
}

int node_checkpoint_save(SwarmNode* n, const char* run_dir, int rounds_done, const double* totals, int n_totals,
                         char* err, size_t errlen) {
    char dir[1024], model[1100], state[1100];
    snprintf(dir, sizeof dir, "%s/ckpt", run_dir);
    if (make_dirs(dir, err, errlen)) return -1;
    paths(run_dir, n->rank, rounds_done, model, state, sizeof model);
    if (checkpoint_save(n->policy, model, 1, err, errlen)) return -1;
    FILE* f = atomic_file_begin(state, err, errlen);
    if (!f) return -1;
    uint32_t version = STATE_VERSION;
    int32_t head[3] = {n->rank, rounds_done, n_totals};
    int ok = fwrite(STATE_MAGIC, 1, 8, f) == 8 && fwrite(&version, 4, 1, f) == 1 && fwrite(head, 4, 3, f) == 3 &&
             fwrite(totals, sizeof(double), (size_t)n_totals, f) == (size_t)n_totals;
    if (ok) ok = transport_save_in_flight(n->transport, rounds_done, f) == 0;
    if (ok && n->sync) ok = weight_sync_save(n->sync, f) == 0;
    if (ok && n->sync_p2p) ok = sync_p2p_save(n->sync_p2p, rounds_done, f) == 0;
    return atomic_file_commit(f, state, err, errlen); /* a failed fwrite fails the commit too */
}

/* Opens a state file and reads its header and totals; NULL with err when it is missing, is
 * not node `rank`'s after rounds_done rounds, or is short. The p2p block follows. */
static FILE* state_open(const char* path, int rank, int rounds_done, double* totals, int n_totals, char* err,
                        size_t errlen) {
    FILE* f = fopen(path, "rb");
    if (!f) {
        set_error(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    char magic[8];
    uint32_t version = 0;
    int32_t head[3];
    int ok = fread(magic, 1, 8, f) == 8 && !memcmp(magic, STATE_MAGIC, 8) && fread(&version, 4, 1, f) == 1 &&
             version == STATE_VERSION && fread(head, 4, 3, f) == 3 && head[0] == rank && head[1] == rounds_done &&
             head[2] == n_totals && fread(totals, sizeof(double), (size_t)n_totals, f) == (size_t)n_totals;
    if (!ok) {
        fclose(f);
        set_error(err, errlen, "%s: not a state file of node %d after %d rounds, or truncated", path, rank, rounds_done);
        return NULL;
    }
    return f;
}

int node_checkpoint_verify(const char* run_dir, int rank, int rounds_done, const ModelShape* shape, int n_totals,
                           char* err, size_t errlen) {
    char model[1100], state[1100];
    paths(run_dir, rank, rounds_done, model, state, sizeof model);
    if (checkpoint_verify(model, shape, 1, NULL, err, errlen)) return -1;
    double* totals = mallocCheck(sizeof(double) * (n_totals > 0 ? n_totals : 1));
    FILE* f = state_open(state, rank, rounds_done, totals, n_totals, err, errlen);
    free(totals);
    if (!f) return -1;
    fclose(f);
    return 0;
}

int node_checkpoint_load(SwarmNode* n, const char* run_dir, int rounds_done, double* totals, int n_totals, char* err,
                         size_t errlen) {
    char model[1100], state[1100];
    paths(run_dir, n->rank, rounds_done, model, state, sizeof model);
    if (checkpoint_load(n->policy, model, 1, err, errlen)) return -1;
    FILE* f = state_open(state, n->rank, rounds_done, totals, n_totals, err, errlen);
    if (!f) return -1;
    int ok = transport_load_in_flight(n->transport, rounds_done, f) == 0;
    int sync_ok = !ok || !n->sync ||
                  (weight_sync_load(n->sync, f) == 0 && (!n->sync_p2p || sync_p2p_load(n->sync_p2p, rounds_done, f) == 0));
    fclose(f);
    if (!ok) return set_error(err, errlen, "%s: the messages in flight are truncated or malformed", state);
    if (!sync_ok) return set_error(err, errlen, "%s: the outer state of sync.method is missing, truncated or of another shape", state);
    return 0;
}

void node_checkpoint_prune(const char* run_dir, int rank, int keep_from) {
    char dir[1024], prefix[32];
    snprintf(dir, sizeof dir, "%s/ckpt", run_dir);
    snprintf(prefix, sizeof prefix, "node_%04d.r", rank);
    DIR* d = opendir(dir);
    if (!d) return;
    struct dirent* e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
        int r = atoi(e->d_name + strlen(prefix));
        if (r < keep_from) {
            char path[1400];
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            remove(path);
        }
    }
    closedir(d);
}

int checkpoint_latest_read(const char* run_dir) {
    char path[1100];
    snprintf(path, sizeof path, "%s/ckpt/LATEST", run_dir);
    FILE* f = fopen(path, "r");
    if (!f) return 0;
    int r = -1;
    if (fscanf(f, "%d", &r) != 1 || r < 0) r = -1;
    fclose(f);
    return r;
}

int checkpoint_latest_write(const char* run_dir, int rounds_done, char* err, size_t errlen) {
    char path[1100], text[32];
    snprintf(path, sizeof path, "%s/ckpt/LATEST", run_dir);
    snprintf(text, sizeof text, "%d\n", rounds_done);
    return atomic_file_write(path, text, err, errlen);
}
