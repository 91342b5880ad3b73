/* One AdamW step, shared by the CPU backend and the CUDA one (header-only: the CUDA library
 * links no libsapo code): its scalars, computed once per step on the host, and the update of
 * one parameter, the CPU's loop body and the CUDA kernel's (kernels/adamw.cuh) alike. */
#ifndef SAPO_MODEL_ADAMW_SCALARS_H
#define SAPO_MODEL_ADAMW_SCALARS_H

#include <math.h>

#include "model/det_math.h"
#include "model/model.h"

/* Step `step` (1-based): step_size = lr / (1 - beta1^step), decay = 1 - lr * weight_decay,
 * bc2_sqrt = sqrt(1 - beta2^step); the powers by libm's powf, or pow_det when det (the
 * deterministic mode: glibc's powf differs by CPU feature). */
static inline void adamw_scalars(const AdamWConfig* hp, long step, int det, float* step_size, float* decay,
                                 float* bc2_sqrt) {
    float bc1 = 1.0f - (det ? pow_det(hp->beta1, step) : powf(hp->beta1, (float)step));
    float bc2 = 1.0f - (det ? pow_det(hp->beta2, step) : powf(hp->beta2, (float)step));
    *bc2_sqrt = sqrtf(bc2);
    *step_size = hp->lr / bc1;
    *decay = 1.0f - hp->lr * hp->weight_decay;
}

/* One parameter: the moments m, v and the parameter p after gradient g (times grad_scale). */
SAPO_HD static inline void adamw_update(float* p, float* m, float* v, float g, float beta1, float beta2, float eps,
                                        float grad_scale, float step_size, float decay, float bc2_sqrt) {
    float gr = g * grad_scale;
    float mo = *m = beta1 * *m + (1.0f - beta1) * gr;
    float ve = *v = beta2 * *v + (1.0f - beta2) * gr * gr;
    float pd = *p * decay;
    *p = pd - step_size * mo / (sqrtf(ve) / bc2_sqrt + eps);
}

#endif
