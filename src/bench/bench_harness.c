/* The benchmarks' shared harness (see bench_harness.h). */
#include "bench/bench_harness.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/check.h"
#include "core/clock.h"
#include "io/files.h"

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

double bench_peak_rss_kb(void) {
    long hwm = bench_status_kb("VmHWM");
    if (hwm > 0) return (double)hwm;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss;
}

int bench_peak_reset(void) {
    FILE* f = fopen("/proc/self/clear_refs", "w");
    if (!f) return 0;
    int ok = fputs("5", f) >= 0;
    return (fclose(f) == 0) && ok;
}

BenchTiming bench_time(void (*fn)(void* arg), void* arg, int warmup, int repeats) {
    for (int i = 0; i < warmup; i++) fn(arg);
    BenchTiming t = {.avg = 0.0, .min = 1e300, .max = 0.0, .repeats = repeats};
    for (int i = 0; i < repeats; i++) {
        double t0 = clock_now();
        fn(arg);
        double dt = clock_now() - t0;
        t.avg += dt;
        if (dt < t.min) t.min = dt;
        if (dt > t.max) t.max = dt;
    }
    if (repeats > 0) t.avg /= repeats;
    return t;
}

int bench_child(int (*fn)(void* arg), void* arg, const char* prefix, const char* side) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%sfork: %s\n", prefix, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int rc = fn(arg);
        fflush(NULL);
        _exit(rc);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    fprintf(stderr, "%s%s failed (%s %d)\n", prefix, side, WIFEXITED(status) ? "exit" : "signal",
            WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    return -1;
}

int bench_json_write(const char* path, const cJSON* j) {
    char* text = cJSON_PrintUnformatted(j);
    FILE* f = fopen(path, "wb");
    int ok = f && text && fputs(text, f) >= 0;
    if (f) ok = (fclose(f) == 0) && ok;
    free(text);
    return ok ? 0 : -1;
}

cJSON* bench_json_read(const char* path) {
    char* text = file_read_all(path, 0, NULL);
    cJSON* j = text ? cJSON_Parse(text) : NULL;
    free(text);
    return j;
}

int bench_json_lines(const char* cmd, int (*on_line)(cJSON* j, void* arg), void* arg) {
    fflush(stdout);
    FILE* p = popen(cmd, "r");
    if (!p) return -1;
    size_t cap = 1 << 16;
    char* line = mallocCheck(cap);
    while (fgets(line, (int)cap, p)) {
        cJSON* j = cJSON_Parse(line);
        if (j && !on_line(j, arg)) cJSON_Delete(j);
    }
    free(line);
    return pclose(p);
}

int bench_work_dir(const char* name, char* dir, size_t n) {
    const char* tmp = getenv("TMPDIR");
    snprintf(dir, n, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    return mkdtemp(dir) ? 0 : -1;
}

void bench_ratio(char* buf, size_t n, int ok, double num, double den) {
    if (ok) snprintf(buf, n, "%.2fx", num / den);
    else snprintf(buf, n, "-");
}
