/* The benchmarks' own process: this binary, the Python beside it, /proc/self/status (see
 * bench_process.h). */
#include "bench/bench_process.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"

const char* bench_self_path(void) {
    static char self[PATH_MAX];
    if (!self[0]) {
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) sapo_die("sapo bench: cannot find the sapo binary's path");
        self[n] = '\0';
    }
    return self;
}

const char* bench_python(void) {
    const char* py = getenv("SAPO_PYTHON");
    if (py && *py) return py;
    /* the build directory's venv (Debian's python3 + reasoning_gym), next to this binary */
    static char venv[PATH_MAX];
    snprintf(venv, sizeof venv, "%s", bench_self_path());
    char* slash = strrchr(venv, '/');
    if (slash) {
        snprintf(slash, sizeof venv - (size_t)(slash - venv), "/venv/bin/python");
        if (access(venv, X_OK) == 0) return venv;
    }
    return "/usr/bin/python3";
}

long bench_status_kb(const char* field) {
    FILE* f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') {
            kb = strtol(line + n + 1, NULL, 10);
            break;
        }
    fclose(f);
    return kb;
}
