/* The benchmarks' shared harness (see bench_harness.h). */
#include "bench/bench_harness.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
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

BenchTiming bench_timing_of(const double* v, int n) {
    BenchTiming t = {0.0, INFINITY, -INFINITY, n};
    for (int i = 0; i < n; i++) {
        t.avg += v[i];
        if (v[i] < t.min) t.min = v[i];
        if (v[i] > t.max) t.max = v[i];
    }
    if (n > 0) t.avg /= n;
    else t.avg = t.min = t.max = NAN;
    return t;
}

BenchTiming bench_time(void (*fn)(void* arg), void* arg, int warmup, int repeats) {
    for (int i = 0; i < warmup; i++) fn(arg);
    double* dt = callocCheck((size_t)repeats + 1, sizeof(double));
    for (int i = 0; i < repeats; i++) {
        double t0 = clock_now();
        fn(arg);
        dt[i] = clock_now() - t0;
    }
    BenchTiming t = bench_timing_of(dt, repeats);
    free(dt);
    return t;
}

cJSON* bench_timing_json(const BenchTiming* t) {
    cJSON* j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "avg", t->avg);
    cJSON_AddNumberToObject(j, "min", t->min);
    cJSON_AddNumberToObject(j, "max", t->max);
    cJSON_AddNumberToObject(j, "repeats", t->repeats);
    return j;
}

BenchTiming bench_timing_read(const cJSON* j, int repeats) {
    BenchTiming t = {0};
    if (!cJSON_IsObject(j)) return t;
    t.avg = bench_num(j, "avg");
    t.min = bench_num(j, "min");
    t.max = bench_num(j, "max");
    t.repeats = t.avg > 0 ? repeats : 0;
    return t;
}

int bench_parse(const char* command, const CliOption* opts, const char* about, const char* more, int argc, char** argv,
                CliArgs* a) {
    int parsed = cli_parse(command, opts, argc, argv, a);
    if (parsed > 0) {
        printf("%s\noptions:\n", about);
        cli_print_options(stdout, opts);
        if (more) fputs(more, stdout);
    }
    return parsed;
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

cJSON* bench_child_json(int (*fn)(void* arg), void* arg, const char* prefix, const char* side, const char* dir) {
    if (bench_child(fn, arg, prefix, side)) return NULL;
    char path[PATH_MAX + 128];
    snprintf(path, sizeof path, "%s/ours.json", dir);
    cJSON* j = bench_json_read(path);
    if (!j) fprintf(stderr, "%sthe C side wrote no readable %s\n", prefix, path);
    return j;
}

void bench_thread_env(int threads) {
    char n[16];
    snprintf(n, sizeof n, "%d", threads);
    setenv("OPENBLAS_NUM_THREADS", n, 1);
    setenv("OMP_NUM_THREADS", n, 1);
    setenv("MKL_NUM_THREADS", n, 1);
}

void bench_json_numbers(cJSON* j, const BenchNumber* f, size_t n) {
    for (size_t i = 0; i < n; i++) cJSON_AddNumberToObject(j, f[i].key, f[i].value);
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

double bench_num(const cJSON* j, const char* key) { return cJSON_GetNumberValue(cJSON_GetObjectItem(j, key)); }

const char* bench_str(const cJSON* j, const char* key) { return cJSON_GetStringValue(cJSON_GetObjectItem(j, key)); }

int bench_json_lines(const char* cmd, int (*on_line)(const char* what, cJSON* j, void* arg), void* arg) {
    fflush(stdout);
    FILE* p = popen(cmd, "r");
    if (!p) return -1;
    size_t cap = 1 << 16;
    char* line = mallocCheck(cap);
    while (fgets(line, (int)cap, p)) {
        cJSON* j = cJSON_Parse(line);
        const char* what = j ? bench_str(j, "what") : NULL;
        if (j && !on_line(what ? what : "", j, arg)) cJSON_Delete(j);
    }
    free(line);
    return pclose(p);
}

int bench_work_dir(const char* name, char* dir, size_t n) {
    const char* tmp = getenv("TMPDIR");
    snprintf(dir, n, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    return mkdtemp(dir) ? 0 : -1;
}

void bench_table_header(const char* first) {
    printf("# x torch: how many times better ours is, tok/s ours / torch, seconds and MB torch / ours\n");
    printf("# %-13s %-12s %10s %9s %9s %9s %10s %9s %9s %9s %8s\n", first, "phase", "tok/s", "avg", "min", "max",
           "torch t/s", "t avg", "t min", "t max", "x torch");
}

/* A side's four cells into c; 0 when it has no average. */
static int side_cells(char c[4][24], const BenchTiming* t, double work, int decimals) {
    const double v[4] = {work > 0 ? work / t->avg : NAN, t->avg, t->min, t->max};
    for (int i = 0; i < 4; i++) {
        if (t->repeats > 0 && !isnan(v[i])) snprintf(c[i], sizeof c[i], "%.*f", i ? decimals : 1, v[i]);
        else snprintf(c[i], sizeof c[i], "-");
    }
    return t->repeats > 0 && t->avg > 0;
}

void bench_row(const char* name, const char* phase, const BenchTiming* ours, const BenchTiming* torch,
               double ours_work, double torch_work, int decimals) {
    char a[4][24], b[4][24], ratio[24] = "-";
    int ok = side_cells(a, ours, ours_work, decimals) & side_cells(b, torch, torch_work, decimals) &
             ((ours_work > 0) == (torch_work > 0));
    if (ok) snprintf(ratio, sizeof ratio, "%.2fx", ours_work > 0 ? ours_work / ours->avg / (torch_work / torch->avg)
                                                                  : torch->avg / ours->avg);
    printf("%-15s %-12s %10s %9s %9s %9s %10s %9s %9s %9s %8s\n", name, phase, a[0], a[1], a[2], a[3], b[0], b[1], b[2],
           b[3], ratio);
}

void bench_side_rows(const char* name, const BenchSide* ours, const BenchSide* torch, int decimals) {
    bench_row(name, "train", &ours->train, &torch->train, ours->train_tokens, torch->train_tokens, decimals);
    bench_row(name, "generate", &ours->gen, &torch->gen, ours->gen_tokens, torch->gen_tokens, decimals);
}

int bench_side_line(const char* what, cJSON* j, void* arg) {
    BenchSide* s = arg;
    if (!strcmp(what, "train")) {
        s->train = bench_timing_read(j, s->repeats);
        s->train_tokens = bench_num(j, "tokens");
    } else if (!strcmp(what, "generate")) {
        s->gen = bench_timing_read(j, s->repeats);
        s->gen_tokens = bench_num(j, "tokens");
    }
    return 0;
}
