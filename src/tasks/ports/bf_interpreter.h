/* A Brainf*ck interpreter with the semantics of the `bfi` package reasoning_gym runs the
 * bf task's programs with: 30000 byte cells wrapping mod 256, output collected as one
 * character per byte (code points 0..255, written here as UTF-8), no input. */
#ifndef SAPO_TASKS_BF_INTERPRETER_H
#define SAPO_TASKS_BF_INTERPRETER_H

#include <stddef.h>
#include <stdint.h>

#include "tasks/infra/textbuf.h"

#define BF_TAPE_SIZE 30000

/* Runs `program` (non-BF bytes ignored) and appends its output to out; *steps (may be
 * NULL) gets the number of instructions executed. Returns 0, or -1 with a reason in err:
 * unmatched bracket, pointer off the tape, or more than max_steps instructions executed
 * (bfi itself would run on). */
int bf_interpret(const char* program, uint64_t max_steps, TextBuf* out, uint64_t* steps, char* err,
                 size_t errlen);

#endif
