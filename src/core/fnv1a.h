/* FNV-1a, 64 bits: the one checksum of checkpoints, swarm messages and the evaluation set's
 * digest (for corruption and identity, not for trust). */
#ifndef SAPO_CORE_FNV1A_H
#define SAPO_CORE_FNV1A_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_OFFSET 0xCBF29CE484222325ull
#define FNV1A_PRIME 0x100000001B3ull

/* h folded with n bytes of data; start from FNV1A_OFFSET. */
static inline uint64_t fnv1a_update(uint64_t h, const void* data, size_t n) {
    const unsigned char* p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= FNV1A_PRIME;
    }
    return h;
}

#endif
