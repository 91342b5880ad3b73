/* Which OpenBLAS sgemm kernel sapo runs on. OpenBLAS picks its kernel from the CPU's model
 * number; in some virtual machines that number is hidden (the CPU calls itself "Intel Xeon
 * Processor") and it falls back to the generic Prescott kernel, 1.5-2x slower, although the
 * CPU has AVX-512 or AVX2 and FMA. When that happens and OPENBLAS_CORETYPE is unset, sapo
 * starts itself again with OPENBLAS_CORETYPE naming the kernel the CPU's own features
 * support (OpenBLAS reads it once, when the library loads). SAPO_BLAS_AUTO=0 keeps
 * OpenBLAS's choice. */
#include "cli/blas_select.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Kernels OpenBLAS falls back to when it does not know the CPU. */
static int is_fallback(const char* core) {
    static const char* const generic[] = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", NULL};
    for (int i = 0; generic[i]; i++)
        if (!strcasecmp(core, generic[i])) return 1;
    return 0;
}

static const char* kernel_for_this_cpu(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
    return NULL;
}

void blas_select_kernel(char** argv) {
    const char* set = getenv("OPENBLAS_CORETYPE");
    const char* automatic = getenv("SAPO_BLAS_AUTO");
    if ((set && *set) || (automatic && !strcmp(automatic, "0")) || getenv("SAPO_BLAS_REEXEC")) return;
    const char* core = openblas_get_corename();
    const char* want = kernel_for_this_cpu();
    if (!core || !want || !is_fallback(core)) return;
    setenv("OPENBLAS_CORETYPE", want, 1);
    setenv("SAPO_BLAS_REEXEC", core, 1); /* once only; and what OpenBLAS had chosen */
    execv("/proc/self/exe", argv);
    /* exec failed: carry on with the fallback kernel */
    unsetenv("OPENBLAS_CORETYPE");
}

void blas_describe(char* out, size_t n) {
    const char* was = getenv("SAPO_BLAS_REEXEC");
    const char* cfg = openblas_get_config();
    if (was)
        snprintf(out, n, "%s, kernel %s (chosen by sapo from the CPU's features; OpenBLAS detected %s)",
                 cfg ? cfg : "?", openblas_get_corename(), was);
    else
        snprintf(out, n, "%s, kernel %s", cfg ? cfg : "?", openblas_get_corename());
}
