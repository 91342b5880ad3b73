/* Byte-level BPE from a tokenizer.json (see bpe_tokenizer.h): loading the vocabulary, the
 * merges and the added tokens, cutting added tokens out of the text, the merge loop, and
 * decoding. The text pipeline in between is model/text/pretokenize.c. */
#include "model/text/bpe_tokenizer.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <utf8proc.h>

#include "core/check.h"
#include "core/fnv1a.h"
#include "io/files.h"
#include "model/text/bpe_maps.h"
#include "model/text/pretokenize.h"
#include "model/text/utf8_text.h"

/* Words longer than this are merged afresh each time (long words are rare and would crowd
 * the cache); the cache is emptied when it holds this many words. */
enum { CACHE_MAX_WORD = 64, CACHE_MAX_WORDS = 1 << 17 };

typedef struct {
    int id;
    char* content; /* as in the file */
    size_t len;
    char* match; /* what is searched for: content, or its normalized form when normalized */
    size_t match_len;
    int special, single_word, lstrip, rstrip, normalized;
} AddedToken;

/* The added tokens searched in one kind of text (raw, or normalized), indexed by first byte. */
typedef struct {
    int n;
    int* tok;          /* indices into added[] */
    int first[256][2]; /* [byte] -> range [a, b) of tok sorted by first byte */
} AddedSet;

struct BpeTokenizer {
    Pretok* pre;
    StrMap* vocab; /* the model's vocabulary: token text (file form) -> id */
    StrMap* added_ids;
    PairMap* merges;
    int n_ids;
    int byte_id[256]; /* the model id of each byte's character, -1 when the vocabulary lacks it */
    int unk_id;       /* -1: none */
    int fuse_unk, ignore_merges;
    AddedToken* added;
    int n_added;
    AddedSet raw_set, norm_set;
    char* dec_buf; /* per id: the bytes the ByteLevel decoder makes of its token */
    size_t* dec_off;
    int* dec_len; /* -1: no token has this id */
    uint64_t fingerprint;
    /* The per-word cache: word bytes -> offset of (count, ids...) in cache_ids. */
    pthread_mutex_t lock;
    StrMap* cache;
    int* cache_ids;
    size_t cache_len, cache_cap;
};

/* ---- GPT-2's byte <-> character alphabet --------------------------------------------- */

/* Printable bytes stand for themselves; the others (controls, space, 0x7F-0xA0, 0xAD) take
 * the code points from U+0100 on, in byte order. */
static void byte_alphabet(uint32_t byte_cp[256], int cp_byte[324]) {
    for (int i = 0; i < 324; i++) cp_byte[i] = -1;
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        byte_cp[b] = printable ? (uint32_t)b : 256u + (uint32_t)n++;
        cp_byte[byte_cp[b]] = b;
    }
}

static uint32_t BYTE_CP[256];
static int CP_BYTE[324];
static pthread_once_t ALPHABET_ONCE = PTHREAD_ONCE_INIT;
static void alphabet_init(void) { byte_alphabet(BYTE_CP, CP_BYTE); }

/* The token text of bytes b[0..n) in the alphabet: at most 2 UTF-8 bytes per byte. */
static size_t bytes_to_alphabet(const unsigned char* b, size_t n, char* out) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = BYTE_CP[b[i]];
        if (c < 0x80) out[k++] = (char)c;
        else {
            out[k++] = (char)(0xC0 | (c >> 6));
            out[k++] = (char)(0x80 | (c & 0x3F));
        }
    }
    return k;
}

/* The decoder's bytes for one token text s[0..len) (valid UTF-8): each character's byte when
 * all of them are in the alphabet, else the text's own bytes. Written to out (len bytes fit). */
static size_t token_bytes(const char* s, size_t len, char* out) {
    size_t i = 0, k = 0;
    while (i < len) {
        uint32_t c = utf8_next(s, &i);
        if (c >= 324 || CP_BYTE[c] < 0) {
            memcpy(out, s, len);
            return len;
        }
        out[k++] = (char)CP_BYTE[c];
    }
    return k;
}

/* ---- loading ------------------------------------------------------------------------- */

static int flag_of(const cJSON* obj, const char* name, int def) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v)) return def;
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

static int is_null(const cJSON* v) { return !v || cJSON_IsNull(v); }

static int check_components(const cJSON* root, char* err, size_t errlen) {
    static const char* const NULL_ONLY[] = {"truncation", "padding"};
    for (int i = 0; i < 2; i++)
        if (!is_null(cJSON_GetObjectItemCaseSensitive(root, NULL_ONLY[i])))
            return set_error(err, errlen, "tokenizer.json: %s is not supported (must be null)", NULL_ONLY[i]);
    const cJSON* pp = cJSON_GetObjectItemCaseSensitive(root, "post_processor");
    if (!is_null(pp)) {
        const cJSON* t = cJSON_GetObjectItemCaseSensitive(pp, "type");
        if (!cJSON_IsString(t))
            return set_error(err, errlen, "tokenizer.json: post_processor: expected an object with a \"type\"");
        /* ByteLevel as a post-processor only trims offsets: it adds no tokens. */
        if (strcmp(t->valuestring, "ByteLevel") != 0)
            return set_error(err, errlen, "tokenizer.json: post_processor type '%s' is not supported", t->valuestring);
    }
    const cJSON* dec = cJSON_GetObjectItemCaseSensitive(root, "decoder");
    const cJSON* dt = cJSON_GetObjectItemCaseSensitive(dec, "type");
    if (is_null(dec))
        return set_error(err, errlen, "tokenizer.json: decoder null is not supported (expected ByteLevel)");
    if (!cJSON_IsString(dt))
        return set_error(err, errlen, "tokenizer.json: decoder: expected an object with a \"type\"");
    if (strcmp(dt->valuestring, "ByteLevel") != 0)
        return set_error(err, errlen, "tokenizer.json: decoder type '%s' is not supported", dt->valuestring);
    return 0;
}

/* An id member: an integer in [0, 2^31 - 2]. */
static int id_of(const cJSON* v) {
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 2147483646.0 ||
        v->valuedouble != (double)(long long)v->valuedouble)
        return -1;
    return (int)v->valuedouble;
}

static int load_model(BpeTokenizer* t, const cJSON* model, const char*** id_text, int* id_cap, uint64_t* h, char* err,
                      size_t errlen) {
    const cJSON* type = cJSON_GetObjectItemCaseSensitive(model, "type");
    if (!cJSON_IsObject(model)) return set_error(err, errlen, "tokenizer.json: model: expected an object");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "BPE") != 0)
        return set_error(err, errlen, "tokenizer.json: model type '%s' is not supported",
                         cJSON_IsString(type) ? type->valuestring : "(missing)");
    const cJSON* dropout = cJSON_GetObjectItemCaseSensitive(model, "dropout");
    if (!is_null(dropout) && !(cJSON_IsNumber(dropout) && dropout->valuedouble == 0.0))
        return set_error(err, errlen, "tokenizer.json: model.dropout is not supported (must be null)");
    static const char* const EMPTY_ONLY[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++) {
        const cJSON* v = cJSON_GetObjectItemCaseSensitive(model, EMPTY_ONLY[i]);
        if (!is_null(v) && !(cJSON_IsString(v) && v->valuestring[0] == '\0'))
            return set_error(err, errlen, "tokenizer.json: model.%s is not supported (must be empty)", EMPTY_ONLY[i]);
    }
    int byte_fallback = flag_of(model, "byte_fallback", 0);
    t->fuse_unk = flag_of(model, "fuse_unk", 0);
    t->ignore_merges = flag_of(model, "ignore_merges", 0);
    if (byte_fallback != 0 || t->fuse_unk < 0 || t->ignore_merges < 0)
        return set_error(err, errlen,
                         "tokenizer.json: model.byte_fallback must be false, fuse_unk and ignore_merges booleans");

    const cJSON* vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    if (!cJSON_IsObject(vocab)) return set_error(err, errlen, "tokenizer.json: model.vocab: expected an object");
    int n_vocab = cJSON_GetArraySize(vocab);
    t->vocab = strmap_new((size_t)n_vocab);
    const cJSON* e;
    cJSON_ArrayForEach(e, vocab) {
        int id = id_of(e);
        if (id < 0)
            return set_error(err, errlen, "tokenizer.json: model.vocab[\"%s\"]: expected an id (an integer >= 0)",
                             e->string);
        strmap_put(t->vocab, e->string, strlen(e->string), id);
        if (id >= *id_cap) {
            int cap = *id_cap ? *id_cap : 1024;
            while (cap <= id) cap *= 2;
            const char** grown = realloc(*id_text, (size_t)cap * sizeof *grown);
            if (!grown) sapo_die("out of memory reading a vocabulary");
            for (int i = *id_cap; i < cap; i++) grown[i] = NULL;
            *id_text = grown;
            *id_cap = cap;
        }
        (*id_text)[id] = e->string;
        if (id + 1 > t->n_ids) t->n_ids = id + 1;
    }
    const cJSON* unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    t->unk_id = -1;
    if (!is_null(unk)) {
        if (!cJSON_IsString(unk))
            return set_error(err, errlen, "tokenizer.json: model.unk_token: expected a string or null");
        t->unk_id = strmap_get(t->vocab, unk->valuestring, strlen(unk->valuestring));
        if (t->unk_id < 0)
            return set_error(err, errlen, "tokenizer.json: model.unk_token '%s' is not in the vocabulary",
                             unk->valuestring);
    }
    for (int b = 0; b < 256; b++) {
        char s[2];
        size_t n = bytes_to_alphabet((const unsigned char*)&(unsigned char){(unsigned char)b}, 1, s);
        t->byte_id[b] = strmap_get(t->vocab, s, n);
    }

    /* Merges: "a b" strings (split at the first space) or ["a", "b"] pairs; rank = position. */
    const cJSON* merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!cJSON_IsArray(merges)) return set_error(err, errlen, "tokenizer.json: model.merges: expected an array");
    t->merges = pairmap_new((size_t)cJSON_GetArraySize(merges));
    size_t joined_cap = 256;
    char* joined = mallocCheck(joined_cap);
    int rank = 0, rc = 0;
    cJSON_ArrayForEach(e, merges) {
        const char *a, *b;
        size_t la, lb;
        if (cJSON_IsString(e)) {
            const char* sp = strchr(e->valuestring, ' ');
            if (!sp) {
                rc = set_error(err, errlen, "tokenizer.json: model.merges[%d]: expected \"A B\"", rank);
                break;
            }
            a = e->valuestring;
            la = (size_t)(sp - a);
            b = sp + 1;
            lb = strlen(b);
        } else if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 && cJSON_IsString(cJSON_GetArrayItem(e, 0)) &&
                   cJSON_IsString(cJSON_GetArrayItem(e, 1))) {
            a = cJSON_GetArrayItem(e, 0)->valuestring;
            b = cJSON_GetArrayItem(e, 1)->valuestring;
            la = strlen(a);
            lb = strlen(b);
        } else {
            rc = set_error(err, errlen, "tokenizer.json: model.merges[%d]: expected \"A B\" or [\"A\", \"B\"]", rank);
            break;
        }
        if (la + lb + 1 > joined_cap) {
            while (la + lb + 1 > joined_cap) joined_cap *= 2;
            free(joined);
            joined = mallocCheck(joined_cap);
        }
        memcpy(joined, a, la);
        memcpy(joined + la, b, lb);
        int ia = strmap_get(t->vocab, a, la), ib = strmap_get(t->vocab, b, lb);
        int im = strmap_get(t->vocab, joined, la + lb);
        if (ia < 0 || ib < 0 || im < 0) {
            rc = set_error(err, errlen, "tokenizer.json: model.merges[%d]: '%.*s' is not in the vocabulary", rank,
                           (int)(ia < 0   ? la
                                 : ib < 0 ? lb
                                          : la + lb),
                           ia < 0   ? a
                           : ib < 0 ? b
                                    : joined);
            break;
        }
        pairmap_put(t->merges, ia, ib, rank, im);
        int trio[3] = {ia, ib, im};
        *h = fnv1a_update(*h, trio, sizeof trio);
        rank++;
    }
    free(joined);
    return rc;
}

static int set_build(BpeTokenizer* t, AddedSet* s, int normalized) {
    s->n = 0;
    s->tok = mallocCheck((size_t)(t->n_added + 1) * sizeof *s->tok);
    /* Grouped by first byte so a text position checks only the tokens that can start there. */
    for (int b = 0; b < 256; b++) {
        s->first[b][0] = s->n;
        for (int i = 0; i < t->n_added; i++)
            if (t->added[i].normalized == normalized && t->added[i].match_len &&
                (unsigned char)t->added[i].match[0] == b)
                s->tok[s->n++] = i;
        s->first[b][1] = s->n;
    }
    return 0;
}

static int load_added(BpeTokenizer* t, const cJSON* list, const char*** id_text, int* id_cap, uint64_t* h, char* err,
                      size_t errlen) {
    if (is_null(list)) return 0;
    if (!cJSON_IsArray(list)) return set_error(err, errlen, "tokenizer.json: added_tokens: expected an array");
    int n = cJSON_GetArraySize(list);
    t->added = callocCheck((size_t)n + 1, sizeof *t->added);
    t->added_ids = strmap_new((size_t)n + 1);
    const cJSON* e;
    int k = 0;
    cJSON_ArrayForEach(e, list) {
        const cJSON* content = cJSON_GetObjectItemCaseSensitive(e, "content");
        int id = id_of(cJSON_GetObjectItemCaseSensitive(e, "id"));
        AddedToken a = {0};
        a.special = flag_of(e, "special", 0);
        a.single_word = flag_of(e, "single_word", 0);
        a.lstrip = flag_of(e, "lstrip", 0);
        a.rstrip = flag_of(e, "rstrip", 0);
        a.normalized = flag_of(e, "normalized", !a.special);
        if (!cJSON_IsString(content) || id < 0 || a.special < 0 || a.single_word < 0 || a.lstrip < 0 || a.rstrip < 0 ||
            a.normalized < 0)
            return set_error(err, errlen,
                             "tokenizer.json: added_tokens[%d]: expected {\"id\", \"content\", boolean flags}", k);
        a.id = id;
        a.len = strlen(content->valuestring);
        if (a.len == 0) continue; /* the library ignores empty added tokens */
        if (utf8_valid_prefix(content->valuestring, a.len) != a.len)
            return set_error(err, errlen, "tokenizer.json: added_tokens[%d]: content is not valid UTF-8", k);
        a.content = strdup(content->valuestring);
        if (!a.content) sapo_die("out of memory");
        a.match = a.content;
        a.match_len = a.len;
        if (a.normalized) {
            const char* norm;
            size_t nl;
            int owned;
            if (pretok_normalize(t->pre, a.content, a.len, &norm, &nl, &owned, err, errlen)) {
                free(a.content);
                return -1;
            }
            if (owned) {
                a.match = mallocCheck(nl + 1);
                memcpy(a.match, norm, nl);
                a.match[nl] = '\0';
                free((void*)norm);
            }
            a.match_len = nl;
        }
        t->added[t->n_added++] = a;
        strmap_put(t->added_ids, a.content, a.len, id);
        if (id >= *id_cap) {
            int cap = *id_cap ? *id_cap : 1024;
            while (cap <= id) cap *= 2;
            const char** grown = realloc(*id_text, (size_t)cap * sizeof *grown);
            if (!grown) sapo_die("out of memory reading added tokens");
            for (int i = *id_cap; i < cap; i++) grown[i] = NULL;
            *id_text = grown;
            *id_cap = cap;
        }
        (*id_text)[id] = t->added[t->n_added - 1].content; /* the added token's text wins for decoding */
        if (id + 1 > t->n_ids) t->n_ids = id + 1;
        int flags[7] = {id, a.special, a.single_word, a.lstrip, a.rstrip, a.normalized, (int)a.len};
        *h = fnv1a_update(*h, flags, sizeof flags);
        *h = fnv1a_update(*h, a.content, a.len);
        k++;
    }
    set_build(t, &t->raw_set, 0);
    set_build(t, &t->norm_set, 1);
    return 0;
}

static void build_decoder(BpeTokenizer* t, const char** id_text, uint64_t* h) {
    size_t total = 0;
    for (int i = 0; i < t->n_ids; i++)
        if (id_text[i]) total += strlen(id_text[i]);
    t->dec_buf = mallocCheck(total + 1);
    t->dec_off = mallocCheck((size_t)t->n_ids * sizeof *t->dec_off);
    t->dec_len = mallocCheck((size_t)t->n_ids * sizeof *t->dec_len);
    size_t k = 0;
    for (int i = 0; i < t->n_ids; i++) {
        t->dec_off[i] = k;
        t->dec_len[i] = -1;
        if (!id_text[i]) {
            *h = fnv1a_update(*h, "\xFF", 1);
            continue;
        }
        size_t len = strlen(id_text[i]);
        *h = fnv1a_update(*h, id_text[i], len + 1);
        size_t n = token_bytes(id_text[i], len, t->dec_buf + k);
        t->dec_len[i] = (int)n;
        k += n;
    }
}

BpeTokenizer* bpe_load(const char* path, char* err, size_t errlen) {
    pthread_once(&ALPHABET_ONCE, alphabet_init);
    size_t len = 0;
    char* text = file_read_all(path, 0, &len);
    if (!text) {
        set_error(err, errlen, "cannot read %s: %s", path, errno == EIO ? "read error" : strerror(errno));
        return NULL;
    }
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!root) {
        set_error(err, errlen, "%s: not valid JSON (near byte %zu)", path, end ? (size_t)(end - text) : (size_t)0);
        free(text);
        return NULL;
    }
    free(text);
    BpeTokenizer* t = callocCheck(1, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    const char** id_text = NULL;
    int id_cap = 0;
    uint64_t h = fnv1a_update(FNV1A_OFFSET, "bpe", 4);
    int rc = -1;
    if (!cJSON_IsObject(root)) {
        set_error(err, errlen, "tokenizer.json: expected a JSON object");
        goto done;
    }
    if (check_components(root, err, errlen)) goto done;
    t->pre = pretok_from_json(cJSON_GetObjectItemCaseSensitive(root, "normalizer"),
                              cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), err, errlen);
    if (!t->pre) goto done;
    if (!pretok_byte_level(t->pre)) {
        set_error(err, errlen, "tokenizer.json: pre_tokenizer without ByteLevel (last) is not supported");
        goto done;
    }
    if (load_model(t, cJSON_GetObjectItemCaseSensitive(root, "model"), &id_text, &id_cap, &h, err, errlen)) goto done;
    if (load_added(t, cJSON_GetObjectItemCaseSensitive(root, "added_tokens"), &id_text, &id_cap, &h, err, errlen))
        goto done;
    if (!t->added_ids) {
        t->added_ids = strmap_new(1);
        set_build(t, &t->raw_set, 0);
        set_build(t, &t->norm_set, 1);
    }
    build_decoder(t, id_text, &h);
    int flags[3] = {t->unk_id, t->fuse_unk, t->ignore_merges};
    h = fnv1a_update(h, flags, sizeof flags);
    t->fingerprint = pretok_fingerprint(t->pre, h);
    t->cache = strmap_new(1024);
    rc = 0;
done:
    free(id_text);
    cJSON_Delete(root); /* id_text pointed into it */
    if (rc) {
        bpe_free(t);
        return NULL;
    }
    return t;
}

void bpe_free(BpeTokenizer* t) {
    if (!t) return;
    pretok_free(t->pre);
    strmap_free(t->vocab);
    strmap_free(t->added_ids);
    pairmap_free(t->merges);
    for (int i = 0; i < t->n_added; i++) {
        if (t->added[i].match != t->added[i].content) free(t->added[i].match);
        free(t->added[i].content);
    }
    free(t->added);
    free(t->raw_set.tok);
    free(t->norm_set.tok);
    free(t->dec_buf);
    free(t->dec_off);
    free(t->dec_len);
    strmap_free(t->cache);
    free(t->cache_ids);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int bpe_vocab(const BpeTokenizer* t) { return t->n_ids; }

int bpe_token_id(const BpeTokenizer* t, const char* text) {
    size_t n = strlen(text);
    int id = strmap_get(t->added_ids, text, n);
    return id >= 0 ? id : strmap_get(t->vocab, text, n);
}

uint64_t bpe_fingerprint(const BpeTokenizer* t) { return t->fingerprint; }

/* ---- growing id lists ---------------------------------------------------------------- */

typedef struct {
    int* v;
    int n, cap;
} Ids;

static void ids_push(Ids* a, int id) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 64;
        int* grown = realloc(a->v, (size_t)a->cap * sizeof *grown);
        if (!grown) sapo_die("out of memory encoding text");
        a->v = grown;
    }
    a->v[a->n++] = id;
}

/* ---- the merge loop ------------------------------------------------------------------ */

typedef struct {
    int rank, pos, merged;
} Merge;

/* Min-heap on (rank, pos): the library's BinaryHeap order. */
static int merge_before(Merge a, Merge b) { return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos; }

typedef struct {
    Merge* h;
    int n, cap;
} Heap;

static void heap_push(Heap* q, Merge m) {
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        Merge* grown = realloc(q->h, (size_t)q->cap * sizeof *grown);
        if (!grown) sapo_die("out of memory encoding text");
        q->h = grown;
    }
    int i = q->n++;
    while (i > 0 && merge_before(m, q->h[(i - 1) / 2])) {
        q->h[i] = q->h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->h[i] = m;
}

static Merge heap_pop(Heap* q) {
    Merge top = q->h[0], last = q->h[--q->n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= q->n) break;
        if (c + 1 < q->n && merge_before(q->h[c + 1], q->h[c])) c++;
        if (!merge_before(q->h[c], last)) break;
        q->h[i] = q->h[c];
        i = c;
    }
    if (q->n) q->h[i] = last;
    return top;
}

typedef struct {
    int id, prev, next, alive;
} Symbol;

/* The library's BPE of one word (its bytes w[0..n)), appended to out. */
static void bpe_word(const BpeTokenizer* t, const unsigned char* w, size_t n, Ids* out) {
    if (t->ignore_merges) {
        char* mapped = mallocCheck(2 * n + 1);
        size_t ml = bytes_to_alphabet(w, n, mapped);
        int id = strmap_get(t->vocab, mapped, ml);
        free(mapped);
        if (id >= 0) {
            ids_push(out, id);
            return;
        }
    }
    Symbol stack_sym[CACHE_MAX_WORD];
    Symbol* sym = n <= CACHE_MAX_WORD ? stack_sym : mallocCheck(n * sizeof *sym);
    int ns = 0;
    for (size_t i = 0; i < n; i++) {
        int id = t->byte_id[w[i]];
        if (id < 0) {
            /* A byte the vocabulary lacks: the unknown token (fused with a preceding one when
             * fuse_unk), or nothing at all without one, as the library does. */
            if (t->unk_id < 0) continue;
            if (t->fuse_unk && ns && sym[ns - 1].id == t->unk_id && sym[ns - 1].alive == 2) continue;
            sym[ns] = (Symbol){t->unk_id, ns - 1, ns + 1, 2};
        } else sym[ns] = (Symbol){id, ns - 1, ns + 1, 1};
        ns++;
    }
    if (ns) sym[ns - 1].next = -1;
    Heap q = {0};
    Merge stack_heap[2 * CACHE_MAX_WORD];
    q.h = stack_heap;
    q.cap = 2 * CACHE_MAX_WORD;
    int heap_on_stack = 1;
    int rank, merged;
    for (int i = 0; i + 1 < ns; i++)
        if (pairmap_get(t->merges, sym[i].id, sym[i + 1].id, &rank, &merged)) {
            if (q.n == q.cap && heap_on_stack) {
                Merge* h = mallocCheck((size_t)q.cap * 2 * sizeof *h);
                memcpy(h, q.h, (size_t)q.n * sizeof *h);
                q.h = h;
                q.cap *= 2;
                heap_on_stack = 0;
            }
            heap_push(&q, (Merge){rank, i, merged});
        }
    while (q.n) {
        if (q.n + 2 >= q.cap && heap_on_stack) {
            Merge* h = mallocCheck((size_t)q.cap * 2 * sizeof *h);
            memcpy(h, q.h, (size_t)q.n * sizeof *h);
            q.h = h;
            q.cap *= 2;
            heap_on_stack = 0;
        }
        Merge top = heap_pop(&q);
        Symbol* s = &sym[top.pos];
        if (!s->alive || s->next < 0) continue;
        Symbol* r = &sym[s->next];
        /* A stale entry: the pair at pos no longer makes this token. */
        if (!pairmap_get(t->merges, s->id, r->id, &rank, &merged) || merged != top.merged) continue;
        s->id = top.merged;
        s->alive = 1;
        r->alive = 0;
        s->next = r->next;
        if (r->next >= 0) sym[r->next].prev = top.pos;
        if (s->prev >= 0 && pairmap_get(t->merges, sym[s->prev].id, s->id, &rank, &merged))
            heap_push(&q, (Merge){rank, s->prev, merged});
        if (s->next >= 0 && pairmap_get(t->merges, s->id, sym[s->next].id, &rank, &merged))
            heap_push(&q, (Merge){rank, top.pos, merged});
    }
    if (!heap_on_stack) free(q.h);
    for (int i = 0; i < ns; i++)
        if (sym[i].alive) ids_push(out, sym[i].id);
    if (sym != stack_sym) free(sym);
}

/* bpe_word through the cache. The BPE of a word depends on its bytes alone. */
static void bpe_word_cached(BpeTokenizer* t, const char* w, size_t n, Ids* out) {
    if (n > CACHE_MAX_WORD) {
        bpe_word(t, (const unsigned char*)w, n, out);
        return;
    }
    pthread_mutex_lock(&t->lock);
    int at = strmap_get(t->cache, w, n);
    if (at >= 0) {
        int count = t->cache_ids[at];
        for (int i = 0; i < count; i++) ids_push(out, t->cache_ids[at + 1 + i]);
        pthread_mutex_unlock(&t->lock);
        return;
    }
    pthread_mutex_unlock(&t->lock);
    int first = out->n;
    bpe_word(t, (const unsigned char*)w, n, out);
    int count = out->n - first;
    pthread_mutex_lock(&t->lock);
    if (strmap_count(t->cache) >= CACHE_MAX_WORDS) {
        strmap_clear(t->cache);
        t->cache_len = 0;
    }
    if (t->cache_len + (size_t)count + 1 > t->cache_cap) {
        size_t cap = t->cache_cap ? t->cache_cap : 1 << 16;
        while (t->cache_len + (size_t)count + 1 > cap) cap *= 2;
        int* grown = realloc(t->cache_ids, cap * sizeof *grown);
        if (!grown) sapo_die("out of memory caching tokens");
        t->cache_ids = grown;
        t->cache_cap = cap;
    }
    if (strmap_get(t->cache, w, n) < 0 && t->cache_len < (size_t)1 << 30) {
        t->cache_ids[t->cache_len] = count;
        if (count) memcpy(t->cache_ids + t->cache_len + 1, out->v + first, (size_t)count * sizeof(int));
        strmap_put(t->cache, w, n, (int)t->cache_len);
        t->cache_len += (size_t)count + 1;
    }
    pthread_mutex_unlock(&t->lock);
}

/* ---- added tokens -------------------------------------------------------------------- */

/* Rust regex's \s (White_Space) and, approximately, \w (alphanumeric, marks, connector
 * punctuation, joiners): what single_word, lstrip and rstrip look at. */
static int is_white_space(uint32_t c) {
    return (c >= 9 && c <= 13) || c == 32 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

static int is_word_char(uint32_t c) {
    if (c == 0x200C || c == 0x200D) return 1;
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_ND) || k == UTF8PROC_CATEGORY_NL ||
           k == UTF8PROC_CATEGORY_PC;
}

/* The code point that ends s[0..end) (valid UTF-8, end > 0), and where it starts. */
static uint32_t last_char(const char* s, size_t end, size_t* start) {
    size_t i = end - 1;
    while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
    *start = i;
    size_t j = i;
    return utf8_next(s, &j);
}

typedef struct {
    int id; /* -1: text */
    size_t start, end;
} Segment;

typedef struct {
    Segment* v;
    int n, cap;
} Segments;

static void seg_push(Segments* a, int id, size_t start, size_t end) {
    if (a->n == a->cap) {
        a->cap = a->cap ? 2 * a->cap : 16;
        Segment* grown = realloc(a->v, (size_t)a->cap * sizeof *grown);
        if (!grown) sapo_die("out of memory encoding text");
        a->v = grown;
    }
    a->v[a->n++] = (Segment){id, start, end};
}

/* The library's AddedVocabulary::find_matches over s[0..len): added-token segments and the
 * text between them, covering s. Matches are leftmost-longest and do not overlap; a match
 * refused by single_word is skipped, not retried shorter. */
static void added_split(const BpeTokenizer* t, const AddedSet* set, const char* s, size_t len, Segments* out) {
    out->n = 0;
    size_t start_offset = 0, pos = 0;
    while (set->n && pos < len) {
        int best = -1;
        size_t at = pos;
        for (; at < len; at++) {
            const int* r = set->first[(unsigned char)s[at]];
            for (int k = r[0]; k < r[1]; k++) {
                const AddedToken* a = &t->added[set->tok[k]];
                if (a->match_len <= len - at && !memcmp(s + at, a->match, a->match_len) &&
                    (best < 0 || a->match_len > t->added[best].match_len))
                    best = set->tok[k];
            }
            if (best >= 0) break;
        }
        if (best < 0) break;
        const AddedToken* a = &t->added[best];
        size_t start = at, stop = at + a->match_len;
        pos = stop;
        if (a->single_word) {
            size_t cs;
            int start_space = start == 0 || !is_word_char(last_char(s, start, &cs));
            size_t j = stop;
            int stop_space = stop == len || !is_word_char(utf8_next(s, &j));
            if (!start_space || !stop_space) continue;
        }
        if (a->lstrip) {
            size_t ns = start;
            while (ns > 0) {
                size_t cs;
                if (!is_white_space(last_char(s, ns, &cs))) break;
                ns = cs;
            }
            start = ns > start_offset ? ns : start_offset;
        }
        if (a->rstrip) {
            while (stop < len) {
                size_t j = stop;
                if (!is_white_space(utf8_next(s, &j))) break;
                stop = j;
            }
        }
        if (start_offset < start) seg_push(out, -1, start_offset, start);
        seg_push(out, a->id, start, stop);
        start_offset = stop;
    }
    if (start_offset < len) seg_push(out, -1, start_offset, len);
}

/* ---- encoding and decoding ----------------------------------------------------------- */

int bpe_encode(const BpeTokenizer* tc, const char* text, size_t len, int** ids, int* n, char* err, size_t errlen) {
    BpeTokenizer* t = (BpeTokenizer*)tc; /* only the cache changes, under its lock */
    *ids = NULL;
    *n = 0;
    size_t valid = utf8_valid_prefix(text, len);
    if (valid != len) return set_error(err, errlen, "text is not valid UTF-8 (at byte %zu)", valid);
    Ids out = {0};
    Segments raw = {0}, norm = {0};
    PretokPieces pieces = {0};
    int rc = 0;
    added_split(t, &t->raw_set, text, len, &raw);
    for (int i = 0; i < raw.n && rc == 0; i++) {
        Segment sg = raw.v[i];
        if (sg.id >= 0) {
            ids_push(&out, sg.id);
            continue;
        }
        const char* ntext;
        size_t nlen;
        int owned;
        rc = pretok_normalize(t->pre, text + sg.start, sg.end - sg.start, &ntext, &nlen, &owned, err, errlen);
        if (rc) break;
        added_split(t, &t->norm_set, ntext, nlen, &norm);
        for (int j = 0; j < norm.n && rc == 0; j++) {
            Segment ns = norm.v[j];
            if (ns.id >= 0) {
                ids_push(&out, ns.id);
                continue;
            }
            rc = pretok_split(t->pre, ntext + ns.start, ns.end - ns.start, &pieces, err, errlen);
            for (int k = 0; k < pieces.n && rc == 0; k++)
                bpe_word_cached(t, pieces.buf + pieces.spans[k].off, pieces.spans[k].len, &out);
        }
        if (owned) free((void*)ntext);
    }
    free(raw.v);
    free(norm.v);
    pretok_pieces_free(&pieces);
    if (rc) {
        free(out.v);
        return -1;
    }
    if (!out.v) out.v = mallocCheck(sizeof(int));
    *ids = out.v;
    *n = out.n;
    return 0;
}

char* bpe_decode(const BpeTokenizer* t, const int* ids, int n, size_t* len) {
    size_t total = 0;
    for (int i = 0; i < n; i++)
        if (ids[i] >= 0 && ids[i] < t->n_ids && t->dec_len[ids[i]] > 0) total += (size_t)t->dec_len[ids[i]];
    char* bytes = mallocCheck(total + 1);
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n_ids || t->dec_len[ids[i]] <= 0) continue;
        memcpy(bytes + k, t->dec_buf + t->dec_off[ids[i]], (size_t)t->dec_len[ids[i]]);
        k += (size_t)t->dec_len[ids[i]];
    }
    char* text = utf8_lossy(bytes, k, len);
    free(bytes);
    return text;
}
