/* Runs a script of random.Random calls on src/tasks/pyrandom.c and prints each result, one
 * line per call, so test_pyrandom.py can replay the same script on CPython and compare.
 * Script lines (stdin):
 *   seed N                 pyrandom_seed(N), N a signed 64-bit integer
 *   seedwords W0 W1 ...    pyrandom_seed_words (|seed| as little-endian 32-bit words)
 *   random | getrandbits K | below N | randrange A B | randint A B | choice N
 *   uniform A B | shuffle N (shuffles 0..N-1 and prints the list)
 * Output: integers in decimal, floats with %.17g, lists space-separated; "seeded" for seeds. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks/pyemu/pyrandom.h"

int main(void) {
    PyRandom r;
    pyrandom_seed(&r, 0);
    char line[65536];
    long lineno = 0;
    while (fgets(line, sizeof line, stdin)) {
        lineno++;
        char op[32];
        int used = 0;
        if (sscanf(line, "%31s%n", op, &used) != 1) continue;
        const char* rest = line + used;
        if (!strcmp(op, "seed")) {
            int64_t n;
            if (sscanf(rest, "%" SCNd64, &n) != 1) goto bad;
            pyrandom_seed(&r, n);
            puts("seeded");
        } else if (!strcmp(op, "seedwords")) {
            uint32_t words[64];
            size_t n = 0;
            unsigned long w;
            int k;
            while (n < 64 && sscanf(rest, "%lu%n", &w, &k) == 1) {
                words[n++] = (uint32_t)w;
                rest += k;
            }
            pyrandom_seed_words(&r, words, n);
            puts("seeded");
        } else if (!strcmp(op, "random")) {
            printf("%.17g\n", pyrandom_random(&r));
        } else if (!strcmp(op, "getrandbits")) {
            int k;
            if (sscanf(rest, "%d", &k) != 1) goto bad;
            printf("%" PRIu64 "\n", pyrandom_getrandbits(&r, k));
        } else if (!strcmp(op, "below")) {
            uint64_t n;
            if (sscanf(rest, "%" SCNu64, &n) != 1) goto bad;
            printf("%" PRIu64 "\n", pyrandom_below(&r, n));
        } else if (!strcmp(op, "randrange") || !strcmp(op, "randint")) {
            int64_t a, b;
            if (sscanf(rest, "%" SCNd64 " %" SCNd64, &a, &b) != 2) goto bad;
            printf("%" PRId64 "\n", op[4] == 'r' ? pyrandom_randrange(&r, a, b) : pyrandom_randint(&r, a, b));
        } else if (!strcmp(op, "choice")) {
            size_t n;
            if (sscanf(rest, "%zu", &n) != 1) goto bad;
            printf("%zu\n", pyrandom_choice_index(&r, n));
        } else if (!strcmp(op, "uniform")) {
            double a, b;
            if (sscanf(rest, "%lf %lf", &a, &b) != 2) goto bad;
            printf("%.17g\n", pyrandom_uniform(&r, a, b));
        } else if (!strcmp(op, "shuffle")) {
            size_t n;
            if (sscanf(rest, "%zu", &n) != 1 || n > 100000) goto bad;
            int64_t* x = malloc((n ? n : 1) * sizeof *x);
            for (size_t i = 0; i < n; i++) x[i] = (int64_t)i;
            pyrandom_shuffle(&r, x, n, sizeof *x);
            for (size_t i = 0; i < n; i++) printf(i ? " %" PRId64 : "%" PRId64, x[i]);
            printf("\n");
            free(x);
        } else {
            goto bad;
        }
        continue;
    bad:
        fprintf(stderr, "tool_pyrandom_dump: stdin line %ld: cannot parse '%s'\n", lineno, line);
        return 2;
    }
    return 0;
}
