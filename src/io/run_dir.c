/* Run directories (see run_dir.h). */
#include "io/run_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/check.h"
#include "io/atomic_file.h"
#include "io/files.h"

int make_dirs(const char* path, char* err, size_t errlen) {
    size_t n = strlen(path);
    char* p = mallocCheck(n + 1);
    memcpy(p, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char keep = p[i];
        p[i] = '\0';
        if (mkdir(p, 0775) != 0 && errno != EEXIST) {
            set_error(err, errlen, "cannot create directory %s: %s", p, strerror(errno));
            free(p);
            return -1;
        }
        p[i] = keep;
    }
    struct stat st;
    int ok = stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    free(p);
    return ok ? 0 : set_error(err, errlen, "%s exists and is not a directory", path);
}

char* run_dir_create(const char* requested, const char* kind, const char* name, char* err, size_t errlen) {
    char buf[512];
    if (requested && *requested) {
        snprintf(buf, sizeof buf, "%s", requested);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        localtime_r(&now, &tm);
        char stamp[32];
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(buf, sizeof buf, "results/runs/%s-%s", name && *name ? name : kind, stamp);
    }
    if (make_dirs(buf, err, errlen)) return NULL;
    size_t n = strlen(buf) + 1;
    char* out = mallocCheck(n);
    memcpy(out, buf, n);
    return out;
}

/* dir/leaf holding one integer and a newline, written atomically. */
static int marker_write_int(const char* dir, const char* leaf, int value, char* err, size_t errlen) {
    char* path = path_join(dir, leaf);
    char text[32];
    snprintf(text, sizeof text, "%d\n", value);
    int rc = atomic_file_write(path, text, err, errlen);
    free(path);
    return rc;
}

/* 1 with *value from dir/leaf (an integer >= 1, nothing after it), 0 when there is no such
 * file, -1 when it is malformed. */
static int marker_read_int(const char* dir, const char* leaf, int* value) {
    char* path = path_join(dir, leaf);
    FILE* f = fopen(path, "r");
    free(path);
    if (!f) return 0;
    char extra;
    int ok = fscanf(f, "%d %c", value, &extra) == 1 && *value >= 1;
    fclose(f);
    return ok ? 1 : -1;
}

int run_dir_write_nodes(const char* dir, int n_nodes, char* err, size_t errlen) {
    return marker_write_int(dir, "NODES", n_nodes, err, errlen);
}

int run_dir_write_numerics(const char* dir, int version, char* err, size_t errlen) {
    return marker_write_int(dir, "NUMERICS", version, err, errlen);
}

int run_dir_read_numerics(const char* dir) {
    int v = 0, found = marker_read_int(dir, "NUMERICS", &v);
    return found < 0 ? -1 : found ? v : 1;
}

int run_dir_read_nodes(const char* dir) {
    int n = 0, found = marker_read_int(dir, "NODES", &n);
    if (found) return found < 0 ? -1 : n;
    n = 0;
    for (;; n++) { /* an older run directory: its node files say */
        char leaf[32];
        snprintf(leaf, sizeof leaf, "node_%04d.h5", n);
        char* p = path_join(dir, leaf);
        struct stat st;
        int there = stat(p, &st) == 0;
        free(p);
        if (!there) return n;
    }
}
