/* Checks the bf task's loop programs (difficulties 2 and 3) against the 8-bit model of
 * their loop that the generator uses to refuse items the package would hang on: every
 * difficulty-2 program and a sample of difficulty-3 programs are run by the interpreter;
 * a program the model says ends must print the model's value, one it says never ends must
 * still be running after far more steps than any ending program took. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/ports/bf_compile.h"
#include "tasks/ports/bf_interpreter.h"

#define LIMIT_INFINITE 200000000ull

static int failures = 0;
static uint64_t max_steps_seen = 0;

static void check(int difficulty, int64_t target, int64_t x, int64_t y, int64_t cond) {
    TextBuf prog = {0}, out = {0};
    if (difficulty == 2) bf_compile_sum_loop(&prog, target, x, y);
    else bf_compile_conditional_loop(&prog, target, x, y, cond);
    int acc = -1;
    int ends = bf_loop_result(target, x, y, cond, difficulty == 3, &acc);
    uint64_t steps = 0;
    char err[200] = "";
    int rc = bf_interpret(prog.data, LIMIT_INFINITE, &out, &steps, err, sizeof err);
    char want[16];
    snprintf(want, sizeof want, "%d", acc);
    if (ends && (rc != 0 || strcmp(out.data ? out.data : "", want))) {
        fprintf(stderr, "FAIL d%d target=%lld x=%lld y=%lld cond=%lld: model %s, bf rc=%d out='%s' (%s)\n",
                difficulty, (long long)target, (long long)x, (long long)y, (long long)cond, want, rc, out.data, err);
        failures++;
    } else if (!ends && rc == 0) {
        fprintf(stderr, "FAIL d%d target=%lld x=%lld y=%lld cond=%lld: model says endless, bf printed '%s'\n",
                difficulty, (long long)target, (long long)x, (long long)y, (long long)cond, out.data);
        failures++;
    }
    if (ends && steps > max_steps_seen) max_steps_seen = steps;
    textbuf_free(&prog);
    textbuf_free(&out);
}

int main(void) {
    int n2 = 0, n3 = 0, endless = 0;
    for (int x = 1; x <= 4; x++)
        for (int y = 1; y <= 5; y++)
            for (int k = 1; k <= 9; k++)
                for (int m = 1; m <= 9; m++, n2++) check(2, x * y * k + m, x, y, 0);
    /* Difficulty 3: a fixed pseudo-random sample of (x, y, k, m, r), plus the endless case
     * found in the package's own items (seed 7, index 121: x=7 y=4 target=255 cond=231). */
    uint64_t s = 12345;
    for (int i = 0; i < 120; i++, n3++) {
        int v[5], hi[5] = {7, 9, 9, 9, 40};
        for (int j = 0; j < 5; j++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            v[j] = 1 + (int)((s >> 33) % (uint64_t)hi[j]);
        }
        int64_t target = (int64_t)v[0] * v[1] * v[2] + v[3] + 50;
        int acc;
        if (!bf_loop_result(target, v[0], v[1], target - v[4], 1, &acc)) endless++;
        check(3, target, v[0], v[1], target - v[4]);
    }
    check(3, 255, 7, 4, 231);
    endless++;
    n3++;
    printf("difficulty 2: %d programs, difficulty 3: %d programs (%d endless); max steps of an ending program %llu; "
           "failures %d\n",
           n2, n3, endless, (unsigned long long)max_steps_seen, failures);
    return failures ? 1 : 0;
}
