/* Run directories (see run_dir.h). */
#include "io/run_dir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/check.h"

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

char* path_join(const char* dir, const char* leaf) {
    size_t n = strlen(dir) + strlen(leaf) + 2;
    char* s = mallocCheck(n);
    snprintf(s, n, "%s/%s", dir, leaf);
    return s;
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
