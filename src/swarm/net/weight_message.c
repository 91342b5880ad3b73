/* The weight message codec (see weight_message.h). */
#include "swarm/net/weight_message.h"

#include <math.h>
#include <string.h>

#include "core/check.h"
#include "core/fnv1a.h"

#define HEAD 48 /* magic 4, version 4, sender 4, round 4, step 8, method 4, pad 4, params 8, count 8 */

static void put32(uint8_t* p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t* p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t* p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static uint64_t get64(const uint8_t* p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

uint8_t* weight_message_encode(int sender, int round, long step, int method, uint64_t n_params, const float* v,
                               uint64_t count, size_t* len) {
    *len = HEAD + 4 * (size_t)count + 8;
    uint8_t* b = callocCheck(*len, 1);
    memcpy(b, "SAPW", 4);
    put32(b + 4, WEIGHT_MESSAGE_VERSION);
    put32(b + 8, (uint32_t)sender);
    put32(b + 12, (uint32_t)round);
    put64(b + 16, (uint64_t)step);
    put32(b + 24, (uint32_t)method);
    put64(b + 32, n_params);
    put64(b + 40, count);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t bits;
        memcpy(&bits, &v[i], 4);
        put32(b + HEAD + 4 * i, bits);
    }
    put64(b + *len - 8, fnv1a_update(FNV1A_OFFSET, b, *len - 8));
    return b;
}

float weight_message_value(const WeightMessage* m, uint64_t i) {
    uint32_t bits = get32(m->floats + 4 * i);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

int weight_message_decode(const uint8_t* buf, size_t len, int method, uint64_t n_params, uint64_t count,
                          WeightMessage* out, char* err, size_t errlen) {
    if (len < HEAD + 8 || memcmp(buf, "SAPW", 4)) return set_error(err, errlen, "not a weight message");
    if (get32(buf + 4) != WEIGHT_MESSAGE_VERSION) return set_error(err, errlen, "weight message version %u", get32(buf + 4));
    uint64_t n = get64(buf + 40);
    if (n != count || len != HEAD + 4 * (size_t)n + 8)
        return set_error(err, errlen, "weight message of %llu floats in %zu bytes, expected %llu",
                         (unsigned long long)n, len, (unsigned long long)count);
    if (fnv1a_update(FNV1A_OFFSET, buf, len - 8) != get64(buf + len - 8))
        return set_error(err, errlen, "weight message checksum mismatch");
    *out = (WeightMessage){.sender = (int)get32(buf + 8),
                           .round = (int)get32(buf + 12),
                           .step = (long)get64(buf + 16),
                           .method = (int)get32(buf + 24),
                           .n_params = get64(buf + 32),
                           .count = n,
                           .floats = buf + HEAD};
    if (out->method != method || out->n_params != n_params)
        return set_error(err, errlen, "weight message for method %d and %llu parameters, expected %d and %llu",
                         out->method, (unsigned long long)out->n_params, method, (unsigned long long)n_params);
    for (uint64_t i = 0; i < n; i++)
        if (!isfinite(weight_message_value(out, i))) return set_error(err, errlen, "weight message value %llu is not finite", (unsigned long long)i);
    return 0;
}
