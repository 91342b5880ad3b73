/* Philox4x32-10 counter-based streams (Salmon et al., SC'11), see rng.h. */
#include "core/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void philox4x32_10(const uint32_t key[2], const uint32_t ctr[4], uint32_t out[4]) {
    uint32_t k0 = key[0], k1 = key[1];
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0;
        uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

RngStream rng_stream(uint64_t seed, uint32_t rank, uint32_t round, uint32_t purpose) {
    uint64_t k = splitmix64(splitmix64(seed) ^ ((uint64_t)rank * 0xD1B54A32D192ED03ull));
    RngStream s = {.key = {(uint32_t)k, (uint32_t)(k >> 32)}, .ctr = {0, 0, round, purpose}, .avail = 0};
    return s;
}

uint32_t rng_u32(RngStream* s) {
    if (s->avail == 0) {
        philox4x32_10(s->key, s->ctr, s->buf);
        if (++s->ctr[0] == 0) s->ctr[1]++;
        s->avail = 4;
    }
    return s->buf[4 - s->avail--];
}

uint64_t rng_u64(RngStream* s) {
    uint64_t lo = rng_u32(s);
    return lo | ((uint64_t)rng_u32(s) << 32);
}

float rng_float(RngStream* s) { return (float)(rng_u32(s) >> 8) * (1.0f / 16777216.0f); }

double rng_double(RngStream* s) { return (double)(rng_u64(s) >> 11) * (1.0 / 9007199254740992.0); }

float rng_normal(RngStream* s) {
    double u1 = 1.0 - rng_double(s); /* (0, 1] keeps the log finite */
    double u2 = rng_double(s);
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}

uint64_t rng_below(RngStream* s, uint64_t n) {
    if (n <= 1) return 0;
    uint64_t limit = UINT64_MAX - UINT64_MAX % n; /* reject the biased tail */
    uint64_t x;
    do x = rng_u64(s);
    while (x >= limit);
    return x % n;
}
