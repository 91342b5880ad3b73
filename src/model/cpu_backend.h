/* What the CPU backends of both families share (cpu_backend.c): the layer operations of
 * block_loop.h on the host (their ctx is the Model; matrix products follow its
 * model.deterministic), and the entries that only touch the Model's host buffers: upload and
 * download (nothing to move), zeroing the gradients, their norm and the AdamW step. */
#ifndef SAPO_MODEL_CPU_BACKEND_H
#define SAPO_MODEL_CPU_BACKEND_H

#include "model/block_loop.h"

extern const BlockOps CPU_BLOCK_OPS;

void cpu_upload(Model* m);
void cpu_download(Model* m);
void cpu_zero_grad(Model* m);
float cpu_grad_norm(Model* m);
void cpu_adamw(Model* m, const AdamWConfig* hp, float grad_scale);

#endif
