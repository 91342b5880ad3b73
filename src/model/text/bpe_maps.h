/* The BPE tokenizer's hash tables: byte strings to ids (the vocabulary, the added tokens,
 * the per-word cache) and id pairs to merges (rank and the merged id). Open addressing,
 * grown by doubling; keys are copied in, so callers may pass any buffer. */
#ifndef SAPO_MODEL_BPE_MAPS_H
#define SAPO_MODEL_BPE_MAPS_H

#include <stddef.h>
#include <stdint.h>

typedef struct StrMap StrMap;

StrMap* strmap_new(size_t expected);
void strmap_free(StrMap* m);
/* Sets key -> value (value >= 0), replacing an earlier value of the same key. */
void strmap_put(StrMap* m, const char* key, size_t len, int value);
/* The value of key, or -1 when absent. */
int strmap_get(const StrMap* m, const char* key, size_t len);
size_t strmap_count(const StrMap* m);
/* Forgets every key (the memory stays, for a cache that refills). */
void strmap_clear(StrMap* m);

typedef struct PairMap PairMap;

PairMap* pairmap_new(size_t expected);
void pairmap_free(PairMap* m);
/* Sets (a, b) -> (rank, merged), replacing an earlier entry of the same pair, as a later
 * duplicate line of a merges list does in the `tokenizers` library. */
void pairmap_put(PairMap* m, int a, int b, int rank, int merged);
/* 1 and the entry when (a, b) merges, else 0. */
int pairmap_get(const PairMap* m, int a, int b, int* rank, int* merged);

#endif
