/* Malformed configuration never crashes: mutated INI files and command-line assignments go
 * through the loader under ASan+UBSan. Each attempt must either succeed (and then survive a
 * config_write round trip) or fail with one non-empty line of message. Deterministic seed. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"

static uint64_t rng_state = 0x5a90c0f1e2d3b4a5ULL;
static uint64_t rng_next(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static size_t rng_below(size_t n) { return (size_t)(rng_next() % n); }

static const char* SEEDS[] = {
    "base = other.ini\n[model]\nn_layer = 4\nn_head = 2\nd_model = 96\n[optim]\nlr = 1e-3\n",
    "[gen]\ntemperature = 0.7\ntop_p = 0.9\n[node.3]\ngen.top_p = 0.5\nmodel.backend = cuda\n",
    "[run]\nname = x ; comment\nresume = yes\nout = a;b\n[tasks]\nnames = bf,arc_1d\n",
    "[swarm]\nseed = 4611686018427387904\n[net]\nlatency = 1e6\ndrop = 1\n[node.4095]\noptim.lr = 0\n",
};
static const char* PIECES[] = {"[", "]", "=", ";", " ;", "#", "\n", "\r\n", "\t", " ", "node.", "model.",
                               "n_layer", "base", "nan", "1e999", "-", "0x1p3", "\xEF\xBB\xBF", "\xff",
                               "[node.7]", "[model]", "other.ini", "..", "/", "9999999999999999999999", "."};

/* One mutation: delete, insert a piece, duplicate a span, or flip a byte. */
static void mutate(char* buf, size_t* len, size_t cap) {
    size_t at = *len ? rng_below(*len + 1) : 0;
    switch (rng_below(4)) {
    case 0:
        if (*len) {
            size_t n = 1 + rng_below(8);
            if (at + n > *len) n = *len - at;
            memmove(buf + at, buf + at + n, *len - at - n);
            *len -= n;
        }
        break;
    case 1: {
        const char* p = PIECES[rng_below(sizeof PIECES / sizeof *PIECES)];
        size_t n = strlen(p);
        if (*len + n < cap) {
            memmove(buf + at + n, buf + at, *len - at);
            memcpy(buf + at, p, n);
            *len += n;
        }
        break;
    }
    case 2:
        if (*len && *len * 2 < cap) {
            size_t from = rng_below(*len), n = 1 + rng_below(*len - from);
            char* span = malloc(n);
            memcpy(span, buf + from, n);
            memmove(buf + at + n, buf + at, *len - at);
            memcpy(buf + at, span, n);
            free(span);
            *len += n;
        }
        break;
    default:
        if (*len && at < *len) buf[at] = (char)(1 + rng_below(255)); /* NUL has its own check */
    }
}

static int check_message(const char* what, const char* err, int* failures) {
    if (!*err || strchr(err, '\n')) {
        fprintf(stderr, "FAIL %s: message empty or not one line: '%s'\n", what, err);
        (*failures)++;
        return 0;
    }
    return 1;
}

int main(void) {
    char dir[256];
    const char* tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sapo_config_fuzz.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    char path[512], other[512], out[512];
    snprintf(path, sizeof path, "%s/fuzz.ini", dir);
    snprintf(other, sizeof other, "%s/other.ini", dir);
    snprintf(out, sizeof out, "%s/out.ini", dir);
    FILE* f = fopen(other, "w");
    fputs("[model]\nn_ctx = 256\n", f);
    fclose(f);

    enum { CAP = 8192, ROUNDS = 1500 };
    static char buf[CAP];
    int failures = 0, loaded = 0, refused = 0;
    for (int round = 0; round < ROUNDS; round++) {
        const char* seed = SEEDS[rng_below(sizeof SEEDS / sizeof *SEEDS)];
        size_t len = strlen(seed);
        memcpy(buf, seed, len);
        int n_mut = (int)rng_below(4);
        for (int m = 0; m < n_mut; m++) mutate(buf, &len, CAP);
        f = fopen(path, "wb");
        fwrite(buf, 1, len, f);
        fclose(f);

        Config* cfg = config_new();
        char err[2048] = "";
        if (config_load_file(cfg, path, err, sizeof err) == 0 && config_validate(cfg, err, sizeof err) == 0) {
            loaded++;
            f = fopen(out, "w");
            config_write(cfg, f);
            fclose(f);
            Config* back = config_new();
            if (config_load_file(back, out, err, sizeof err)) {
                fprintf(stderr, "FAIL round %d: written config does not load back: %s\n", round, err);
                failures++;
            }
            config_free(back);
        } else {
            refused++;
            check_message("file", err, &failures);
            if (getenv("FUZZ_VERBOSE")) printf("%s\n", err);
        }

        /* The same bytes, cut at a newline, as a command-line assignment. */
        buf[len] = '\0';
        char* nl = strchr(buf, '\n');
        if (nl) *nl = '\0';
        err[0] = '\0';
        if (config_set_override(cfg, buf, err, sizeof err)) check_message("override", err, &failures);
        config_free(cfg);
    }
    unlink(path);
    unlink(other);
    unlink(out);
    rmdir(dir);
    printf("asan_config_fuzz: %d files, %d loaded, %d refused, %d failures\n", ROUNDS, loaded, refused, failures);
    return failures ? 1 : 0;
}
