/* The matrix-product lines of `sapo bench round` (see bench_products.h). */
#include "bench/bench_products.h"

#include <stdio.h>
#include <string.h>

cJSON* bench_products_json(const ProductProfile* p, int rounds, double peak_gflops) {
    cJSON* j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "rounds", rounds);
    cJSON_AddNumberToObject(j, "sgemm_peak_gflops", peak_gflops);
    for (int ph = 0; ph < PRODUCT_PHASES; ph++) {
        cJSON* phase = cJSON_AddObjectToObject(j, product_phase_name((ProductPhase)ph));
        for (int k = 0; k < PRODUCT_KINDS; k++) {
            cJSON* kind = cJSON_AddObjectToObject(phase, product_kind_name((ProductKind)k));
            cJSON_AddNumberToObject(kind, "seconds", p->phase_seconds[ph][k]);
            cJSON_AddNumberToObject(kind, "flops", p->phase_flops[ph][k]);
            cJSON_AddNumberToObject(kind, "calls", (double)p->calls[ph][k]);
        }
    }
    return j;
}

static int number_of(const cJSON* j, const char* key, double* out) {
    const cJSON* v = cJSON_GetObjectItem(j, key);
    if (!cJSON_IsNumber(v)) return -1;
    *out = v->valuedouble;
    return 0;
}

int bench_products_read(BenchProducts* b, const cJSON* j) {
    memset(b, 0, sizeof *b);
    double rounds;
    if (!j || number_of(j, "rounds", &rounds) || number_of(j, "sgemm_peak_gflops", &b->peak)) return -1;
    b->rounds = (int)rounds;
    for (int ph = 0; ph < PRODUCT_PHASES; ph++) {
        const cJSON* phase = cJSON_GetObjectItem(j, product_phase_name((ProductPhase)ph));
        for (int k = 0; k < PRODUCT_KINDS; k++) {
            const cJSON* kind = cJSON_GetObjectItem(phase, product_kind_name((ProductKind)k));
            if (number_of(kind, "seconds", &b->seconds[ph][k]) || number_of(kind, "flops", &b->flops[ph][k]) ||
                number_of(kind, "calls", &b->calls[ph][k]))
                return -1;
        }
    }
    b->ok = b->rounds > 0;
    return b->ok ? 0 : -1;
}

/* "linear 0.0123 s, 31.2 GFLOP/s = 53% of peak, 290 calls" */
static void kind_text(char* buf, size_t n, const BenchProducts* b, int ph, int k) {
    double s = b->seconds[ph][k] / b->rounds, gf = b->seconds[ph][k] > 0 ? b->flops[ph][k] / b->seconds[ph][k] / 1e9 : 0;
    snprintf(buf, n, "%s %.4f s, %.1f GFLOP/s = %.0f%% of peak, %.0f calls", product_kind_name((ProductKind)k), s, gf,
             b->peak > 0 ? 100.0 * gf / b->peak : 0.0, b->calls[ph][k] / b->rounds);
}

void bench_products_print(const char* label, const BenchProducts* b, double gen_s, double train_s) {
    if (!b->ok) return;
    printf("# %-6s matrix products per timed round (sgemm peak here %.1f GFLOP/s; products of %d round(s)):\n", label,
           b->peak, b->rounds);
    const struct {
        ProductPhase ph;
        const char* timer;
        double seconds;
    } rows[] = {{PRODUCT_GENERATION, "gen+score", gen_s}, {PRODUCT_PASSES, "train", train_s}};
    for (int r = 0; r < 2; r++) {
        int ph = rows[r].ph;
        double s = (b->seconds[ph][PRODUCT_LINEAR] + b->seconds[ph][PRODUCT_ATTENTION]) / b->rounds;
        char lin[128], att[128];
        kind_text(lin, sizeof lin, b, ph, PRODUCT_LINEAR);
        kind_text(att, sizeof att, b, ph, PRODUCT_ATTENTION);
        printf("# %-6s   %-10s %.4f s = %4.1f%% of %s: %s; %s\n", label, product_phase_name((ProductPhase)ph), s,
               rows[r].seconds > 0 ? 100.0 * s / rows[r].seconds : 0.0, rows[r].timer, lin, att);
    }
}
