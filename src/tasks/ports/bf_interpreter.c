/* Brainf*ck interpreter matching bfi's results (see bf_interpreter.h). bfi rewrites clear,
 * copy and scan loops into single opcodes; on the bf task's programs (no scan loops, no
 * input, the pointer never leaves the tape) those rewrites give the same tape and output
 * as the plain loops executed here. */
#include "tasks/ports/bf_interpreter.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"

int bf_interpret(const char* program, uint64_t max_steps, TextBuf* out, uint64_t* steps_out, char* err,
                 size_t errlen) {
    size_t n = strlen(program);
    size_t* match = mallocCheck((n + 1) * sizeof *match);
    size_t* stack = mallocCheck((n + 1) * sizeof *stack);
    size_t depth = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (program[i] == '[') {
            stack[depth++] = i;
        } else if (program[i] == ']') {
            if (depth == 0) {
                rc = set_error(err, errlen, "bf program: unmatched ']' at byte %zu", i);
                goto done;
            }
            size_t open = stack[--depth];
            match[open] = i;
            match[i] = open;
        }
    }
    if (depth) {
        rc = set_error(err, errlen, "bf program: unmatched '[' at byte %zu", stack[depth - 1]);
        goto done;
    }
    unsigned char* tape = calloc(BF_TAPE_SIZE, 1);
    if (!tape) sapo_die("out of memory for the bf tape");
    size_t ptr = 0;
    uint64_t steps = 0;
    for (size_t pc = 0; pc < n; pc++) {
        if (++steps > max_steps) {
            rc = set_error(err, errlen, "bf program: more than %llu steps", (unsigned long long)max_steps);
            break;
        }
        switch (program[pc]) {
        case '>':
            if (++ptr >= BF_TAPE_SIZE) rc = set_error(err, errlen, "bf program: pointer past the tape end");
            break;
        case '<':
            if (ptr == 0) rc = set_error(err, errlen, "bf program: pointer before the tape start");
            else ptr--;
            break;
        case '+': tape[ptr]++; break;
        case '-': tape[ptr]--; break;
        case '.': textbuf_append_codepoint(out, tape[ptr]); break;
        case '[':
            if (!tape[ptr]) pc = match[pc];
            break;
        case ']':
            if (tape[ptr]) pc = match[pc];
            break;
        default: break;
        }
        if (rc) break;
    }
    free(tape);
    if (steps_out) *steps_out = steps;
done:
    free(match);
    free(stack);
    return rc;
}
