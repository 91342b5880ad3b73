/* Brainf*ck code as reasoning_gym's bf task gets it from its bundled BF-it compiler
 * (optimize_code=True) for the three program templates the task uses. */
#ifndef SAPO_TASKS_BF_COMPILE_H
#define SAPO_TASKS_BF_COMPILE_H

#include <stdint.h>

#include "tasks/infra/textbuf.h"

/* Code that changes the current cell from previous_value to new_value: the shorter of
 * plain +/- runs and a multiply loop over the next cell (ties keep the plain run);
 * zero_next clears the loop cell first. */
void bf_set_cell_value(TextBuf* out, int64_t new_value, int64_t previous_value, int zero_next);

/* Difficulty 1: `int main() { print("word"); }` compiled. */
void bf_compile_print_word(TextBuf* out, const char* word, size_t len);
/* Difficulty 2: the acc += x; acc += y loop up to target, then printint(acc). */
void bf_compile_sum_loop(TextBuf* out, int64_t target, int64_t x, int64_t y);
/* Difficulty 3: as difficulty 2 with `if (acc > conditional)` around acc += y. */
void bf_compile_conditional_loop(TextBuf* out, int64_t target, int64_t x, int64_t y, int64_t conditional);

/* The loop templates on 8-bit cells: acc, target, x, y and the constant all wrap mod 256
 * and compare unsigned. Returns 1 and the printed value in *acc when the loop ends, 0 when
 * acc cycles below the target for ever (possible with difficulty 3, whose target can
 * exceed 255: bfi, and so the package, never returns such an item). The loop's only state
 * is acc, so 257 rounds without leaving decide it. */
int bf_loop_result(int64_t target, int64_t x, int64_t y, int64_t conditional, int has_conditional, int* acc);

#endif
