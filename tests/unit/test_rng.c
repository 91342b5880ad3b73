/* Counter-based streams: Philox4x32-10 known-answer vectors (Random123's kat_vectors),
 * streams recreated independently, distinct keys giving distinct streams, and sane moments. */
#include <math.h>
#include <stdio.h>

#include "core/rng.h"
#include "../test_assert.h"

static void check_kat(uint32_t k0, uint32_t k1, const uint32_t ctr[4], const uint32_t want[4]) {
    uint32_t key[2] = {k0, k1}, out[4];
    philox4x32_10(key, ctr, out);
    for (int i = 0; i < 4; i++) EXPECT(out[i] == want[i], "philox word %d: got %08x want %08x", i, out[i], want[i]);
}

int main(void) {
    const uint32_t c0[4] = {0, 0, 0, 0}, w0[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
    check_kat(0, 0, c0, w0);
    const uint32_t c1[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                   w1[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
    check_kat(0xffffffff, 0xffffffff, c1, w1);
    const uint32_t c2[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                   w2[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
    check_kat(0xa4093822, 0x299f31d0, c2, w2);

    /* Recreating a stream gives the same draws, without replaying any other stream. */
    RngStream a = rng_stream(42, 3, 17, RNG_GENERATE);
    uint32_t first[10];
    for (int i = 0; i < 10; i++) first[i] = rng_u32(&a);
    RngStream other = rng_stream(42, 3, 18, RNG_GENERATE);
    (void)rng_u32(&other);
    RngStream b = rng_stream(42, 3, 17, RNG_GENERATE);
    for (int i = 0; i < 10; i++) EXPECT(rng_u32(&b) == first[i], "recreated stream differs at draw %d", i);

    /* Every part of the key matters. */
    RngStream variants[4] = {rng_stream(43, 3, 17, RNG_GENERATE), rng_stream(42, 4, 17, RNG_GENERATE),
                             rng_stream(42, 3, 16, RNG_GENERATE), rng_stream(42, 3, 17, RNG_POOL)};
    for (int v = 0; v < 4; v++) {
        int same = 0;
        for (int i = 0; i < 10; i++) same += rng_u32(&variants[v]) == first[i];
        EXPECT(same < 2, "variant %d of the key repeats %d of 10 draws", v, same);
    }

    /* Moments of the float, normal and bounded draws. */
    RngStream s = rng_stream(7, 0, 0, RNG_TEST);
    double sum = 0, sum2 = 0, nsum = 0, nsum2 = 0;
    int n = 200000, below_counts[5] = {0};
    for (int i = 0; i < n; i++) {
        float u = rng_float(&s);
        EXPECT(u >= 0.0f && u < 1.0f, "rng_float out of [0,1): %g", u);
        sum += u;
        sum2 += u * u;
        float z = rng_normal(&s);
        nsum += z;
        nsum2 += z * z;
        below_counts[rng_below(&s, 5)]++;
    }
    EXPECT(fabs(sum / n - 0.5) < 0.005, "uniform mean %g", sum / n);
    EXPECT(fabs(sum2 / n - 1.0 / 3.0) < 0.005, "uniform second moment %g", sum2 / n);
    EXPECT(fabs(nsum / n) < 0.01, "normal mean %g", nsum / n);
    EXPECT(fabs(nsum2 / n - 1.0) < 0.02, "normal variance %g", nsum2 / n);
    for (int k = 0; k < 5; k++) EXPECT(fabs(below_counts[k] / (double)n - 0.2) < 0.005, "rng_below bucket %d: %d", k, below_counts[k]);

    return test_finish("rng");
}
