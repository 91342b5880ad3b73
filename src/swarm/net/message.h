/* Swarm messages: what a node shares each round, as decoded text (plus, from a BPE node, the
 * sampled token ids), in a versioned, checksummed, bounds-checked little-endian record.
 * Decoding never trusts a length field: malformed input is reported and dropped, never a
 * crash. */
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
    /* Token fields, from message version 3. A BPE sender ships the ids it sampled, since
     * decoded text does not always re-encode to them, and its behaviour log-prob per token.
     * tokenizer is the sender's tokenizer_fingerprint (src/model/tokenizer.h); 0 = none: a
     * byte-level sender, vocab 0 and the three arrays NULL (the encoder refuses anything
     * else). With a tokenizer, vocab is the sender's vocabulary size, in
     * [1, MESSAGE_MAX_VOCAB], and completion c carries n_tokens[c] ids (0 when n_tokens is
     * NULL), token_ids[c][k] in [0, vocab), and optionally token_logprobs[c][k] = log mu(id k
     * | its prefix), one per id, finite and <= 0 like logprobs. token_ids[c] may be NULL only
     * with no ids; token_logprobs, or an entry, may be NULL: none shipped (a completion with
     * no ids never carries any). A decoded group with a tokenizer and completions has
     * n_tokens and token_ids arrays (NULL entries where a completion has no ids), and
     * token_logprobs NULL when no completion carries any, else NULL entries for those
     * without. The receiver decides whether the fingerprint is one it can use. */
    uint64_t tokenizer;
    int32_t vocab;
    int32_t* n_tokens;
    int32_t** token_ids;
    float** token_logprobs;
} RolloutGroup;

typedef struct {
    int32_t sender;       /* rank of the sending node */
    int32_t round;        /* round in which it was sent */
    int32_t n_groups;
    RolloutGroup* groups;
} SwarmMessage;

#define MESSAGE_MAGIC 0x4F504153u /* "SAPO" little-endian */
/* Versions read: 2 (text and per-byte log-probs) and 3 (2 plus the token fields). The
 * encoder writes 2 when no group has a tokenizer, so byte-level runs send the same bytes as
 * before 3 existed, and 3 otherwise; 1 (text only) is no longer read. */
#define MESSAGE_VERSION_BYTES 2
#define MESSAGE_VERSION_TOKENS 3
/* Limits a decoder enforces (a sender that exceeds them is rejected). */
#define MESSAGE_MAX_BYTES (64u << 20)
#define MESSAGE_MAX_GROUPS 4096
#define MESSAGE_MAX_COMPLETIONS 1024
#define MESSAGE_MAX_STRING (1u << 20)
/* A completion's log-prob count is 0 or its byte length, so it is bounded by
 * MESSAGE_MAX_STRING too (4 bytes each). */
/* Ids per completion: the text's byte budget, since a sampled token decodes to at least
 * one byte but for the few special ones; a token log-prob count is 0 or n_tokens. */
#define MESSAGE_MAX_TOKENS (1u << 20)
/* Vocabulary size: far above any real BPE vocabulary (Qwen2 ~152k, Gemma 256k), low enough
 * that a garbage u32 is caught as such. */
#define MESSAGE_MAX_VOCAB (1u << 24)
/* Fixed header in front of the payload (layout in message.c). */
#define MESSAGE_HEADER_BYTES 32

/* Encodes msg into a new heap buffer (*out, *out_len), as version 2 when no group has a
 * tokenizer, else 3. Returns 0, or -1 with err when msg exceeds the limits above or breaks
 * the rules of RolloutGroup (a log-prob that is not finite and <= 0, an id outside
 * [0, vocab), token fields without a tokenizer...). */
int message_encode(const SwarmMessage* msg, uint8_t** out, size_t* out_len, char* err, size_t errlen);
/* Decodes len bytes (version 2 or 3) into *msg (heap-owned fields). Returns 0, or -1 with a
 * one-line reason in err (bad magic, unsupported version, bad checksum, truncated,
 * oversized, out-of-range counts, string with a NUL byte, a log-prob count other than 0 or
 * the text length, a log-prob that is not finite and <= 0, a vocab that disagrees with the
 * tokenizer, an id outside [0, vocab), a token log-prob count other than 0 or n_tokens, a
 * version 3 record without a tokenizer, trailing bytes...), leaving *msg empty. */
int message_decode(const uint8_t* buf, size_t len, SwarmMessage* msg, char* err, size_t errlen);
void message_free(SwarmMessage* msg);
void rollout_group_free(RolloutGroup* g);
/* Deep copy into dst (whose previous contents are overwritten, not freed). */
void rollout_group_copy(RolloutGroup* dst, const RolloutGroup* src);
/* Keeps the first n completions of a heap-owned group (as message_decode makes them),
 * freeing the text, log-probs and token fields of the others; n >= n_completions is a
 * no-op. For a receiver that uses fewer completions than a peer sent. */
void rollout_group_truncate(RolloutGroup* g, int32_t n);
/* Rewrites the payload length and checksum fields of the len-byte record in buf so that
 * they match its bytes; the encoder's last step, and what tests use to edit a record by
 * hand and still reach the parser. Returns 0, or -1 when len is under the header size. */
int message_seal(uint8_t* buf, size_t len);

#endif
