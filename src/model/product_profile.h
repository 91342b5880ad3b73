/* Where the model's matrix products go, counted while a benchmark enables it (`sapo bench
 * model`, `sapo bench round`): seconds, FLOPs and calls, by phase (what the model was asked
 * for: generation = prefill and decode steps; passes = packed forward passes and backward)
 * and by kind (the linear layers and the head; attention's per-head products). The CPU layers
 * count sgemm, det_gemm, the decode attention's sgemv and the decode rows' small_gemm; the
 * CUDA backend counts nothing. Disabled (the default) it costs one branch per product and
 * changes no result. */
#ifndef SAPO_MODEL_PRODUCT_PROFILE_H
#define SAPO_MODEL_PRODUCT_PROFILE_H

typedef enum { PRODUCT_LINEAR, PRODUCT_ATTENTION, PRODUCT_KINDS } ProductKind;
typedef enum { PRODUCT_OTHER, PRODUCT_GENERATION, PRODUCT_PASSES, PRODUCT_PHASES } ProductPhase;

typedef struct {
    int enabled;
    ProductPhase phase; /* set by the model's entry points (product_profile_enter) */
    double seconds, flops; /* totals over phases and kinds */
    double phase_seconds[PRODUCT_PHASES][PRODUCT_KINDS], phase_flops[PRODUCT_PHASES][PRODUCT_KINDS];
    long calls[PRODUCT_PHASES][PRODUCT_KINDS];
} ProductProfile;

extern ProductProfile product_profile;

/* Zeroes the counts and enables (1) or disables (0) counting. */
void product_profile_reset(int enabled);
/* The clock before a product (0 when disabled)... */
double product_profile_start(void);
/* ...and after it: one call of `flops` floating-point operations of this kind. */
void product_profile_add(ProductKind kind, double t0, double flops);
/* Enters a phase; returns the one it left, to give back to product_profile_leave. */
ProductPhase product_profile_enter(ProductPhase phase);
void product_profile_leave(ProductPhase previous);
/* "generation", "passes", "other"; "linear", "attention" */
const char* product_phase_name(ProductPhase phase);
const char* product_kind_name(ProductKind kind);

#endif
