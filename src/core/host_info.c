/* The CPU and BLAS facts of this process (see host_info.h). */
#include "core/host_info.h"

#include <cblas.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void host_cpu_model(char* out, size_t n) {
    char model[256] = "?", line[1024];
    FILE* f = fopen("/proc/cpuinfo", "r");
    if (f) {
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10)) continue;
            const char* colon = strchr(line, ':');
            if (!colon) continue;
            colon++;
            while (*colon == ' ' || *colon == '\t') colon++;
            snprintf(model, sizeof model, "%s", colon);
            model[strcspn(model, "\n")] = 0;
            break;
        }
        fclose(f);
    }
    __builtin_cpu_init();
    /* __builtin_cpu_supports takes string literals only, hence the table of results */
    const struct { const char* name; int has; } flags[] = {
        {"sse4.2", __builtin_cpu_supports("sse4.2")}, {"avx", __builtin_cpu_supports("avx")},
        {"avx2", __builtin_cpu_supports("avx2")},     {"fma", __builtin_cpu_supports("fma")},
        {"avx512f", __builtin_cpu_supports("avx512f")},
    };
    char features[128] = "";
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (!flags[i].has) continue;
        size_t used = strlen(features);
        snprintf(features + used, sizeof features - used, "%s%s", used ? " " : "", flags[i].name);
    }
    snprintf(out, n, "%s (%s)", model, *features ? features : "no vector extensions");
}

void host_blas_library(char* out, size_t n) {
    const char* cfg = openblas_get_config();
    snprintf(out, n, "%s", cfg ? cfg : "?");
}

void host_blas_kernel(char* out, size_t n) {
    const char* core = openblas_get_corename();
    snprintf(out, n, "%s", core ? core : "?");
}

void host_name(char* out, size_t n) {
    char name[256];
    if (gethostname(name, sizeof name) != 0) snprintf(name, sizeof name, "?");
    name[sizeof name - 1] = 0; /* POSIX leaves a truncated name unterminated */
    snprintf(out, n, "%s", name);
}
