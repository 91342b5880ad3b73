/* Hash tables of the BPE tokenizer (see bpe_maps.h). */
#include "model/text/bpe_maps.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "core/fnv1a.h"

/* ---- byte strings -> int ------------------------------------------------------------- */

typedef struct {
    uint64_t hash;
    size_t off; /* the key's bytes in the arena */
    uint32_t len;
    int value; /* -1: empty slot */
} StrSlot;

struct StrMap {
    StrSlot* slots;
    size_t cap; /* a power of two */
    size_t count;
    char* arena;
    size_t arena_len, arena_cap;
};

static uint64_t str_hash(const char* key, size_t len) {
    uint64_t h = fnv1a_update(FNV1A_OFFSET, key, len);
    /* FNV's low bits mix poorly for short keys; the table indexes by them. */
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 32);
}

static StrSlot* str_slots(size_t cap) {
    StrSlot* s = mallocCheck(cap * sizeof *s);
    for (size_t i = 0; i < cap; i++) s[i].value = -1;
    return s;
}

StrMap* strmap_new(size_t expected) {
    StrMap* m = callocCheck(1, sizeof *m);
    m->cap = 16;
    while (m->cap < expected * 2) m->cap *= 2;
    m->slots = str_slots(m->cap);
    m->arena_cap = 64;
    while (m->arena_cap < expected * 8) m->arena_cap *= 2;
    m->arena = mallocCheck(m->arena_cap);
    return m;
}

void strmap_free(StrMap* m) {
    if (!m) return;
    free(m->slots);
    free(m->arena);
    free(m);
}

static size_t str_find(const StrMap* m, uint64_t h, const char* key, size_t len) {
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const StrSlot* s = &m->slots[i];
        if (s->value < 0) return i;
        if (s->hash == h && s->len == len && !memcmp(m->arena + s->off, key, len)) return i;
    }
}

static void str_grow(StrMap* m) {
    StrSlot* old = m->slots;
    size_t old_cap = m->cap;
    m->cap *= 2;
    m->slots = str_slots(m->cap);
    size_t mask = m->cap - 1;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i].value < 0) continue;
        size_t j = old[i].hash & mask;
        while (m->slots[j].value >= 0) j = (j + 1) & mask;
        m->slots[j] = old[i];
    }
    free(old);
}

void strmap_put(StrMap* m, const char* key, size_t len, int value) {
    if ((m->count + 1) * 2 > m->cap) str_grow(m);
    uint64_t h = str_hash(key, len);
    StrSlot* s = &m->slots[str_find(m, h, key, len)];
    if (s->value >= 0) {
        s->value = value;
        return;
    }
    if (m->arena_len + len > m->arena_cap) {
        while (m->arena_len + len > m->arena_cap) m->arena_cap *= 2;
        char* grown = realloc(m->arena, m->arena_cap);
        if (!grown) sapo_die("out of memory growing a string table to %zu bytes", m->arena_cap);
        m->arena = grown;
    }
    memcpy(m->arena + m->arena_len, key, len);
    s->hash = h;
    s->off = m->arena_len;
    s->len = (uint32_t)len;
    s->value = value;
    m->arena_len += len;
    m->count++;
}

int strmap_get(const StrMap* m, const char* key, size_t len) {
    return m->slots[str_find(m, str_hash(key, len), key, len)].value;
}

size_t strmap_count(const StrMap* m) { return m->count; }

void strmap_clear(StrMap* m) {
    for (size_t i = 0; i < m->cap; i++) m->slots[i].value = -1;
    m->count = 0;
    m->arena_len = 0;
}

/* ---- id pairs -> merges -------------------------------------------------------------- */

typedef struct {
    uint64_t key; /* (a << 32) | b; UINT64_MAX: empty (ids are below 2^31) */
    int rank;
    int merged;
} PairSlot;

struct PairMap {
    PairSlot* slots;
    size_t cap;
    size_t count;
};

static uint64_t pair_key(int a, int b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }

static size_t pair_index(uint64_t key, size_t mask) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & mask;
}

static PairSlot* pair_slots(size_t cap) {
    PairSlot* s = mallocCheck(cap * sizeof *s);
    for (size_t i = 0; i < cap; i++) s[i].key = UINT64_MAX;
    return s;
}

PairMap* pairmap_new(size_t expected) {
    PairMap* m = callocCheck(1, sizeof *m);
    m->cap = 16;
    while (m->cap < expected * 2) m->cap *= 2;
    m->slots = pair_slots(m->cap);
    return m;
}

void pairmap_free(PairMap* m) {
    if (!m) return;
    free(m->slots);
    free(m);
}

static size_t pair_find(const PairMap* m, uint64_t key) {
    size_t mask = m->cap - 1;
    size_t i = pair_index(key, mask);
    while (m->slots[i].key != UINT64_MAX && m->slots[i].key != key) i = (i + 1) & mask;
    return i;
}

void pairmap_put(PairMap* m, int a, int b, int rank, int merged) {
    if ((m->count + 1) * 2 > m->cap) {
        PairSlot* old = m->slots;
        size_t old_cap = m->cap;
        m->cap *= 2;
        m->slots = pair_slots(m->cap);
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].key != UINT64_MAX) m->slots[pair_find(m, old[i].key)] = old[i];
        free(old);
    }
    uint64_t key = pair_key(a, b);
    PairSlot* s = &m->slots[pair_find(m, key)];
    if (s->key == UINT64_MAX) m->count++;
    s->key = key;
    s->rank = rank;
    s->merged = merged;
}

int pairmap_get(const PairMap* m, int a, int b, int* rank, int* merged) {
    const PairSlot* s = &m->slots[pair_find(m, pair_key(a, b))];
    if (s->key == UINT64_MAX) return 0;
    *rank = s->rank;
    *merged = s->merged;
    return 1;
}
