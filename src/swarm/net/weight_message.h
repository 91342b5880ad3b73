/* The weight message: one node's contribution to an outer step of sync.method (weight_sync.h)
 * as it travels over the p2p transport. Little-endian: "SAPW", u32 version, i32 sender,
 * i32 round (the round whose end computed it), i64 outer step, u32 method, u64 parameters,
 * u64 floats, the floats (f32 bit patterns), then the FNV-1a 64 of everything before it.
 * The decoder trusts nothing: magic, version, lengths against the receiver's own shape and
 * method, every value finite, the checksum; a bad message is rejected, never fatal. */
#ifndef SAPO_SWARM_WEIGHT_MESSAGE_H
#define SAPO_SWARM_WEIGHT_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#define WEIGHT_MESSAGE_VERSION 1u

typedef struct {
    int sender, round;
    long step;
    int method;             /* SyncMethod */
    uint64_t n_params;
    uint64_t count;         /* floats */
    const uint8_t* floats;  /* view into the decoded buffer: count little-endian f32 */
} WeightMessage;

/* Encodes; returns a heap buffer and its length in *len. */
uint8_t* weight_message_encode(int sender, int round, long step, int method, uint64_t n_params, const float* v,
                               uint64_t count, size_t* len);
/* Decodes buf (which must outlive *out) for a receiver of n_params parameters expecting
 * `count` floats of `method`: 0, or -1 with the reason in err. */
int weight_message_decode(const uint8_t* buf, size_t len, int method, uint64_t n_params, uint64_t count,
                          WeightMessage* out, char* err, size_t errlen);
/* The i-th float of a decoded message. */
float weight_message_value(const WeightMessage* m, uint64_t i);

#endif
