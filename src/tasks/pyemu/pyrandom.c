/* Python-exact random.Random (CPython 3.11 Modules/_randommodule.c and Lib/random.py
 * semantics, re-implemented): the generators of reasoning_gym draw from it. */
#include "tasks/pyemu/pyrandom.h"

#include <string.h>

#define MT_N 624
#define MT_M 397

static void init_genrand(PyRandom* r, uint32_t s) {
    r->mt[0] = s;
    for (int i = 1; i < MT_N; i++) {
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    }
    r->index = MT_N;
}

void pyrandom_seed_words(PyRandom* r, const uint32_t* key, size_t key_length) {
    uint32_t zero = 0;
    if (key_length == 0) {
        key = &zero;
        key_length = 1;
    }
    init_genrand(r, 19650218u);
    size_t i = 1, j = 0;
    size_t k = MT_N > key_length ? MT_N : key_length;
    for (; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            r->mt[0] = r->mt[MT_N - 1];
            i = 1;
        }
        if (j >= key_length) j = 0;
    }
    for (k = MT_N - 1; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= MT_N) {
            r->mt[0] = r->mt[MT_N - 1];
            i = 1;
        }
    }
    r->mt[0] = 0x80000000u;
    r->index = MT_N;
}

void pyrandom_seed(PyRandom* r, int64_t seed) {
    /* CPython seeds with abs(n) split into little-endian 32-bit words (at least one). */
    uint64_t mag = seed < 0 ? (uint64_t)0 - (uint64_t)seed : (uint64_t)seed;
    uint32_t words[2] = {(uint32_t)mag, (uint32_t)(mag >> 32)};
    pyrandom_seed_words(r, words, words[1] ? 2 : 1);
}

uint32_t pyrandom_u32(PyRandom* r) {
    static const uint32_t mag01[2] = {0x0u, 0x9908b0dfu};
    if (r->index >= MT_N) {
        int kk;
        uint32_t y;
        for (kk = 0; kk < MT_N - MT_M; kk++) {
            y = (r->mt[kk] & 0x80000000u) | (r->mt[kk + 1] & 0x7fffffffu);
            r->mt[kk] = r->mt[kk + MT_M] ^ (y >> 1) ^ mag01[y & 1u];
        }
        for (; kk < MT_N - 1; kk++) {
            y = (r->mt[kk] & 0x80000000u) | (r->mt[kk + 1] & 0x7fffffffu);
            r->mt[kk] = r->mt[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1u];
        }
        y = (r->mt[MT_N - 1] & 0x80000000u) | (r->mt[0] & 0x7fffffffu);
        r->mt[MT_N - 1] = r->mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1u];
        r->index = 0;
    }
    uint32_t y = r->mt[r->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

double pyrandom_random(PyRandom* r) {
    uint32_t a = pyrandom_u32(r) >> 5, b = pyrandom_u32(r) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t pyrandom_getrandbits(PyRandom* r, int k) {
    if (k <= 0) return 0;
    if (k <= 32) return pyrandom_u32(r) >> (32 - k);
    /* CPython fills 32-bit words from the least significant end; the last word keeps its
     * top bits only. */
    uint64_t lo = pyrandom_u32(r);
    uint64_t hi = pyrandom_u32(r) >> (64 - k);
    return lo | (hi << 32);
}

static int bit_length(uint64_t n) {
    int k = 0;
    while (n) {
        k++;
        n >>= 1;
    }
    return k;
}

uint64_t pyrandom_below(PyRandom* r, uint64_t n) {
    if (n == 0) return 0;
    int k = bit_length(n); /* not (n-1): CPython draws one bit even for n == 1 */
    uint64_t v = pyrandom_getrandbits(r, k);
    while (v >= n) v = pyrandom_getrandbits(r, k);
    return v;
}

int64_t pyrandom_randrange(PyRandom* r, int64_t start, int64_t stop) {
    return start + (int64_t)pyrandom_below(r, (uint64_t)(stop - start));
}

int64_t pyrandom_randint(PyRandom* r, int64_t a, int64_t b) { return pyrandom_randrange(r, a, b + 1); }

double pyrandom_uniform(PyRandom* r, double a, double b) { return a + (b - a) * pyrandom_random(r); }

size_t pyrandom_choice_index(PyRandom* r, size_t n) { return (size_t)pyrandom_below(r, n); }

void pyrandom_shuffle(PyRandom* r, void* base, size_t n, size_t size) {
    unsigned char* a = base;
    unsigned char tmp[256];
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)pyrandom_below(r, i + 1);
        if (j == i) continue;
        for (size_t off = 0; off < size; off += sizeof tmp) {
            size_t chunk = size - off < sizeof tmp ? size - off : sizeof tmp;
            memcpy(tmp, a + i * size + off, chunk);
            memcpy(a + i * size + off, a + j * size + off, chunk);
            memcpy(a + j * size + off, tmp, chunk);
        }
    }
}
