/* The run directory's record of each node's model.init: its digest and a kept copy (see
 * init_record.h). */
#include "swarm/init_record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"
#include "core/fnv1a.h"
#include "io/atomic_file.h"
#include "io/files.h"
#include "io/run_dir.h"

typedef struct {
    uint64_t digest; /* FNV-1a 64 of the whole file */
    long long bytes;
    char path[4096]; /* where it was when the run started */
} InitDigest;

/* RUN_DIR/init/node_NNNN.EXT (heap). */
static char* record_file(const char* run_dir, int rank, const char* ext) {
    char leaf[48];
    snprintf(leaf, sizeof leaf, "init/node_%04d.%s", rank, ext);
    return path_join(run_dir, leaf);
}

/* The digest and size of path; with copy set, its bytes also written to copy (atomically). */
static int file_digest(const char* path, const char* copy, InitDigest* d, char* err, size_t errlen) {
    FILE* in = fopen(path, "rb");
    if (!in) return set_error(err, errlen, "cannot open %s: %s", path, strerror(errno));
    FILE* out = copy ? atomic_file_begin(copy, err, errlen) : NULL;
    if (copy && !out) {
        fclose(in);
        return -1;
    }
    static unsigned char buf[1 << 16];
    uint64_t h = FNV1A_OFFSET;
    long long bytes = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        h = fnv1a_update(h, buf, n);
        bytes += (long long)n;
        if (out) fwrite(buf, 1, n, out); /* a failed write fails the commit */
    }
    int failed = ferror(in);
    fclose(in);
    if (failed) {
        if (out) atomic_file_abort(out, copy);
        return set_error(err, errlen, "cannot read %s", path);
    }
    if (out && atomic_file_commit(out, copy, err, errlen)) return -1;
    d->digest = h;
    d->bytes = bytes;
    return 0;
}

/* 0 with the record, 1 when there is none, -1 when it is malformed. */
static int record_read(const char* run_dir, int rank, InitDigest* d) {
    char* path = record_file(run_dir, rank, "fnv1a");
    FILE* f = fopen(path, "r");
    free(path);
    if (!f) return 1;
    char line[4200];
    int fields = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (sscanf(line, "fnv1a64 %" SCNx64, &d->digest) == 1) fields |= 1;
        else if (sscanf(line, "bytes %lld", &d->bytes) == 1) fields |= 2;
        else if (!strncmp(line, "path ", 5) && strlen(line + 5) < sizeof d->path) {
            strcpy(d->path, line + 5);
            fields |= 4;
        }
    }
    fclose(f);
    return fields == 7 ? 0 : -1;
}

int init_record_keep(const char* run_dir, int rank, const char* init, char* err, size_t errlen) {
    if (!*init) return 0;
    char* dir = path_join(run_dir, "init");
    int rc = make_dirs(dir, err, errlen);
    free(dir);
    if (rc) return -1;
    char *kept = record_file(run_dir, rank, "ckpt"), *rec = record_file(run_dir, rank, "fnv1a");
    InitDigest d = {0};
    char* where = realpath(init, NULL);
    snprintf(d.path, sizeof d.path, "%s", where ? where : init);
    free(where);
    struct stat st;
    int linked = link(init, kept) == 0;
    int copied = !linked && stat(init, &st) == 0 && st.st_size <= INIT_RECORD_COPY_MAX;
    rc = file_digest(linked ? kept : init, copied ? kept : NULL, &d, err, errlen);
    if (!rc) {
        char text[4400];
        snprintf(text, sizeof text, "fnv1a64 %016" PRIx64 "\nbytes %lld\npath %s\n", d.digest, d.bytes, d.path);
        rc = atomic_file_write(rec, text, err, errlen);
    }
    free(kept);
    free(rec);
    return rc;
}

char* init_record_path(const char* run_dir, int rank, const char* given) {
    InitDigest d;
    if (record_read(run_dir, rank, &d) > 0) return NULL;
    if (given) return strdup(given);
    char* kept = record_file(run_dir, rank, "ckpt");
    struct stat st;
    if (stat(kept, &st) == 0) return kept;
    free(kept);
    return strdup(d.path); /* a malformed record (empty path) is init_record_verify's to report */
}

int init_record_verify(const char* run_dir, int rank, const char* path, char* err, size_t errlen) {
    InitDigest want = {0}, got = {0};
    int rc = record_read(run_dir, rank, &want);
    if (rc > 0) return 0;
    if (rc < 0) return set_error(err, errlen, "node %d: %s/init/node_%04d.fnv1a is malformed", rank, run_dir, rank);
    char why[4400];
    if (file_digest(path, NULL, &got, why, sizeof why))
        return set_error(err, errlen,
                         "node %d: model.init: %s; the run started from %s (fnv1a64 %016" PRIx64 ", %lld bytes): "
                         "give that file with model.init=PATH",
                         rank, why, want.path, want.digest, want.bytes);
    if (got.digest != want.digest || got.bytes != want.bytes)
        return set_error(err, errlen,
                         "node %d: model.init: %s has fnv1a64 %016" PRIx64 " (%lld bytes), not the file the run started "
                         "from (%s: fnv1a64 %016" PRIx64 ", %lld bytes)",
                         rank, path, got.digest, got.bytes, want.path, want.digest, want.bytes);
    return 0;
}
