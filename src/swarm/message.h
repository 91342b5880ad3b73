/* Swarm messages: what a node shares each round, as decoded text (never tokens), in a
 * versioned, checksummed, bounds-checked little-endian record. Decoding never trusts a
 * length field: malformed input is reported and dropped, never a crash. */
#ifndef SAPO_SWARM_MESSAGE_H
#define SAPO_SWARM_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

/* One shared group: a question and the L answers the sender's policy gave to it. */
typedef struct {
    int32_t task_id;      /* fixed id from src/tasks/registry.h */
    int64_t seed;         /* reasoning_gym dataset seed */
    int64_t index;        /* item index in that dataset (item uses Random(seed + index)) */
    char* config_json;    /* generator config, JSON object text */
    char* question;
    char* answer;         /* ground truth; NULL where reasoning_gym stores None */
    char* metadata_json;  /* metadata, JSON object text */
    int32_t n_completions;
    char** completions;   /* decoded completion texts */
    /* The sender's behaviour log-probs: logprobs[c][i] is log mu(byte i of completion c | its
     * prefix) as sampled (at the sender's temperature and top-p), one per byte of the text.
     * logprobs itself, or any logprobs[c], may be NULL: none shipped. Shipped from message
     * version 2, bit for bit; every value must be finite and <= 0 (-0.0 included), or the
     * encoder refuses the group and the decoder the record. A decoded group has logprobs
     * NULL when none of its completions carries any, else NULL entries for those without
     * (an empty completion never carries any). */
    float** logprobs;
} RolloutGroup;

typedef struct {
    int32_t sender;       /* rank of the sending node */
    int32_t round;        /* round in which it was sent */
    int32_t n_groups;
    RolloutGroup* groups;
} SwarmMessage;

#define MESSAGE_MAGIC 0x4F504153u /* "SAPO" little-endian */
#define MESSAGE_VERSION 2 /* 2: per-completion log-probs; 1 (text only) is no longer read */
/* Limits a decoder enforces (a sender that exceeds them is rejected). */
#define MESSAGE_MAX_BYTES (64u << 20)
#define MESSAGE_MAX_GROUPS 4096
#define MESSAGE_MAX_COMPLETIONS 1024
#define MESSAGE_MAX_STRING (1u << 20)
/* A completion's log-prob count is 0 or its byte length, so it is bounded by
 * MESSAGE_MAX_STRING too (4 bytes each). */
/* Fixed header in front of the payload (layout in message.c). */
#define MESSAGE_HEADER_BYTES 32

/* Encodes msg into a new heap buffer (*out, *out_len). Returns 0, or -1 with err when msg
 * exceeds the limits above. */
int message_encode(const SwarmMessage* msg, uint8_t** out, size_t* out_len, char* err, size_t errlen);
/* Decodes len bytes into *msg (heap-owned fields). Returns 0, or -1 with a one-line reason
 * in err (bad magic, unsupported version, bad checksum, truncated, oversized, out-of-range
 * counts, string with a NUL byte, a log-prob count other than 0 or the text length, a
 * log-prob that is not finite and <= 0, trailing bytes...), leaving *msg empty. */
int message_decode(const uint8_t* buf, size_t len, SwarmMessage* msg, char* err, size_t errlen);
void message_free(SwarmMessage* msg);
void rollout_group_free(RolloutGroup* g);
/* Deep copy into dst (whose previous contents are overwritten, not freed). */
void rollout_group_copy(RolloutGroup* dst, const RolloutGroup* src);
/* Rewrites the payload length and checksum fields of the len-byte record in buf so that
 * they match its bytes; the encoder's last step, and what tests use to edit a record by
 * hand and still reach the parser. Returns 0, or -1 when len is under the header size. */
int message_seal(uint8_t* buf, size_t len);

#endif
