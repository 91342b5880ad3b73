/* The weight message codec (src/swarm/net/weight_message.c) trusts nothing: a message round-trips
 * bit for bit; one flipped byte anywhere, a truncated or padded buffer, another float count,
 * parameter count or method, a NaN or an infinity (re-checksummed, so only the value check can
 * catch it) are each rejected with a reason. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config_enums.h"
#include "core/fnv1a.h"
#include "swarm/net/weight_message.h"
#include "../test_assert.h"

enum { N = 37 };

static int decode(const uint8_t* b, size_t len, int method, uint64_t params, uint64_t count, char* err) {
    WeightMessage m;
    return weight_message_decode(b, len, method, params, count, &m, err, 256);
}

/* Rewrites the trailing checksum, as a careful forger would. */
static void reseal(uint8_t* b, size_t len) {
    uint64_t h = fnv1a_update(FNV1A_OFFSET, b, len - 8);
    for (int i = 0; i < 8; i++) b[len - 8 + i] = (uint8_t)(h >> (8 * i));
}

int main(void) {
    float v[2 * N];
    for (int i = 0; i < 2 * N; i++) v[i] = (float)(i - N) * 0.37f;
    size_t len;
    uint8_t* b = weight_message_encode(3, 41, 7, SYNC_NOLOCO, N, v, 2 * N, &len);
    char err[256] = "";
    WeightMessage m;
    EXPECT(weight_message_decode(b, len, SYNC_NOLOCO, N, 2 * N, &m, err, sizeof err) == 0, "a good message: %s", err);
    EXPECT(m.sender == 3 && m.round == 41 && m.step == 7 && m.count == 2 * N, "header %d %d %ld %llu", m.sender,
           m.round, m.step, (unsigned long long)m.count);
    int same = 1;
    for (int i = 0; i < 2 * N; i++) same &= weight_message_value(&m, i) == v[i];
    EXPECT(same, "the floats do not round-trip");

    int caught = 0;
    for (size_t i = 0; i < len; i++) { /* one flipped byte anywhere */
        b[i] ^= 0x40;
        caught += decode(b, len, SYNC_NOLOCO, N, 2 * N, err) != 0;
        b[i] ^= 0x40;
    }
    EXPECT(caught == (int)len, "%d of %zu flipped bytes went through", (int)len - caught, len);
    EXPECT(decode(b, len - 1, SYNC_NOLOCO, N, 2 * N, err) != 0, "a truncated message was accepted");
    EXPECT(decode(b, 20, SYNC_NOLOCO, N, 2 * N, err) != 0, "a header alone was accepted");
    EXPECT(decode(b, len, SYNC_NOLOCO, N, N, err) != 0, "another float count was accepted");
    EXPECT(decode(b, len, SYNC_NOLOCO, N + 1, 2 * N, err) != 0, "another parameter count was accepted");
    EXPECT(decode(b, len, SYNC_DILOCO, N, 2 * N, err) != 0, "another method was accepted");
    uint8_t* padded = calloc(len + 4, 1);
    memcpy(padded, b, len);
    EXPECT(decode(padded, len + 4, SYNC_NOLOCO, N, 2 * N, err) != 0, "a padded message was accepted");
    free(padded);
    free(b);

    const float bad[] = {NAN, INFINITY, -INFINITY};
    for (int k = 0; k < 3; k++) {
        v[N + 5] = bad[k];
        b = weight_message_encode(0, 0, 0, SYNC_NOLOCO, N, v, 2 * N, &len);
        reseal(b, len);
        EXPECT(decode(b, len, SYNC_NOLOCO, N, 2 * N, err) != 0 && strstr(err, "finite"),
               "a %g with a right checksum was accepted (%s)", (double)bad[k], err);
        free(b);
    }
    return test_finish("weight message");
}
