/* Model checkpoints: a versioned little-endian header (magic, shapes, step, payload size,
 * checksum) followed by the parameters and, optionally, both Adam moments. Written to a
 * temporary file and renamed, so a crash never leaves a half-written checkpoint. A model
 * resumed from a checkpoint with its optimizer state continues bit-identically. */
#ifndef SAPO_MODEL_CHECKPOINT_H
#define SAPO_MODEL_CHECKPOINT_H

#include <stddef.h>

#include "model/model.h"

#define CHECKPOINT_MAGIC "SAPOGPT1"
#define CHECKPOINT_VERSION 1        /* byte_gpt */
#define CHECKPOINT_VERSION_FAMILY 2 /* other families: their shape fields follow */

typedef struct {
    ModelShape cfg;
    long step;
    int has_optimizer;
} CheckpointInfo;

/* Returns 0, or -1 with a one-line reason in err. */
int checkpoint_save(Model* m, const char* path, int with_optimizer, char* err, size_t errlen);
/* Reads and validates the header only. */
int checkpoint_read_info(const char* path, CheckpointInfo* info, char* err, size_t errlen);
/* What checkpoint_load checks, without a model: the header and the shape against `expected`
 * (NULL: any shape); with `body` also the payload's exact length and its checksum (read in
 * chunks). info (may be NULL) receives the header. 0, or -1 with the loader's own message. */
int checkpoint_verify(const char* path, const ModelShape* expected, int body, CheckpointInfo* info, char* err,
                      size_t errlen);
/* Loads into a model of the same shape (else an error naming both shapes). Loads the
 * optimizer moments and step when the file has them and want_optimizer is set; otherwise
 * the moments are zeroed and the step is 0 (a fresh fine-tune from these weights). */
int checkpoint_load(Model* m, const char* path, int want_optimizer, char* err, size_t errlen);

#endif
