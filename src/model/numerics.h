/* The numerics version of the model's default (fast) path: which order of sums, which
 * kernels. Two sapo binaries of one version give the same bits on the same inputs and
 * backend; a change that moves any bit of the default path raises it, under the rule of
 * docs/PERFORMANCE.md ("A change of numerics"). `model.deterministic = true` has no version:
 * its bits never change. A run directory records the version it was started with
 * (RUN_DIR/NUMERICS) and a resume with another one is refused; a study reports runs of one
 * version only.
 *   1  every sapo up to 678459c (directories without NUMERICS are version 1)
 *   2  decode attention query by query in vector loops (model/attention_rows.h) */
#ifndef SAPO_MODEL_NUMERICS_H
#define SAPO_MODEL_NUMERICS_H

#define SAPO_NUMERICS_VERSION 2

#endif
