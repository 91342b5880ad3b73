/* A round's matrix products (model/product_profile.h) as `sapo bench round` reports them:
 * the child process counts them over its timed rounds and writes them into its ours.json
 * beside the sgemm peak it measured; the parent reads them back and prints, per phase, the
 * seconds per round, their share of the phase's own timer, and per kind (linear layers,
 * attention) the GFLOP/s reached and its share of the sgemm peak. */
#ifndef SAPO_BENCH_BENCH_PRODUCTS_H
#define SAPO_BENCH_BENCH_PRODUCTS_H

#include <cjson/cJSON.h>

#include "model/product_profile.h"

typedef struct {
    int ok;       /* read from ours.json */
    int rounds;   /* the timed rounds counted */
    double peak;  /* the sgemm peak, GFLOP/s */
    double seconds[PRODUCT_PHASES][PRODUCT_KINDS], flops[PRODUCT_PHASES][PRODUCT_KINDS];
    double calls[PRODUCT_PHASES][PRODUCT_KINDS];
} BenchProducts;

/* The child's side: the profile's counts over `rounds` timed rounds and the peak. */
cJSON* bench_products_json(const ProductProfile* p, int rounds, double peak_gflops);
/* The parent's side: 0, or -1 (b->ok = 0) when the object is missing or malformed. */
int bench_products_read(BenchProducts* b, const cJSON* j);
/* The lines under a config's table rows; gen_s and train_s are the phases' seconds per round
 * (the round's own timers, t_generate and t_train) that the products are set against. */
void bench_products_print(const char* label, const BenchProducts* b, double gen_s, double train_s);

#endif
