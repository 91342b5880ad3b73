/* The matrix-product counts of product_profile.h. */
#include "model/product_profile.h"

#include <string.h>

#include "core/clock.h"

ProductProfile product_profile;

void product_profile_reset(int enabled) {
    ProductPhase phase = product_profile.phase;
    memset(&product_profile, 0, sizeof product_profile);
    product_profile.phase = phase;
    product_profile.enabled = enabled;
}

double product_profile_start(void) { return product_profile.enabled ? clock_now() : 0.0; }

void product_profile_add(ProductKind kind, double t0, double flops) {
    if (!product_profile.enabled) return;
    double dt = clock_now() - t0;
    ProductPhase p = product_profile.phase;
    product_profile.seconds += dt;
    product_profile.flops += flops;
    product_profile.phase_seconds[p][kind] += dt;
    product_profile.phase_flops[p][kind] += flops;
    product_profile.calls[p][kind]++;
}

ProductPhase product_profile_enter(ProductPhase phase) {
    ProductPhase was = product_profile.phase;
    product_profile.phase = phase;
    return was;
}

void product_profile_leave(ProductPhase previous) { product_profile.phase = previous; }

const char* product_phase_name(ProductPhase phase) {
    return phase == PRODUCT_GENERATION ? "generation" : phase == PRODUCT_PASSES ? "passes" : "other";
}

const char* product_kind_name(ProductKind kind) { return kind == PRODUCT_LINEAR ? "linear" : "attention"; }
