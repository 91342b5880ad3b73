/* Normalizer and pre-tokenizer of a tokenizer.json (see pretokenize.h). The splitting rules
 * follow the `tokenizers` library (NormalizedString::split, its regex find_iter, the
 * Digits and ByteLevel pre-tokenizers) so that every piece boundary falls where the library
 * puts it: the BPE model then sees the same words. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "model/text/pretokenize.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/check.h"
#include "core/fnv1a.h"
#include "model/text/unicode_compat.h"
#include "model/text/utf8_text.h"

/* The pattern ByteLevel splits with when use_regex is true (the library's, GPT-2's). */
static const char GPT2_PATTERN[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

typedef enum {
    BEHAVIOR_REMOVED,
    BEHAVIOR_ISOLATED,
    BEHAVIOR_MERGED_PREV,
    BEHAVIOR_MERGED_NEXT,
    BEHAVIOR_CONTIGUOUS
} Behavior;
static const char* const BEHAVIOR_NAMES[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext",
                                             "Contiguous"};

typedef enum { STEP_SPLIT, STEP_BYTE_LEVEL } StepKind;

typedef struct {
    StepKind kind;
    pcre2_code* re; /* STEP_SPLIT; STEP_BYTE_LEVEL: the GPT-2 pattern when use_regex, else NULL */
    Behavior behavior;
    int invert;
    int add_prefix_space; /* STEP_BYTE_LEVEL */
    char* desc;           /* canonical text for the fingerprint */
} Step;

enum { MAX_STEPS = 16 };

struct Pretok {
    int nfc;
    int n_steps;
    Step steps[MAX_STEPS];
};

/* ---- reading the JSON ---------------------------------------------------------------- */

static const char* json_type(const cJSON* obj) {
    const cJSON* t = cJSON_GetObjectItemCaseSensitive(obj, "type");
    return cJSON_IsString(t) ? t->valuestring : NULL;
}

/* A boolean member: 0/1, def when absent or null, -1 when of another type. */
static int json_flag(const cJSON* obj, const char* name, int def) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (!v || cJSON_IsNull(v)) return def;
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
}

static pcre2_code* regex_compile(const char* pattern, int literal, const char* where, char* err, size_t errlen) {
    int code;
    PCRE2_SIZE at;
    /* PCRE2 refuses UCP beside LITERAL; a literal needs no character classes. */
    uint32_t opts = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
    pcre2_code* re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &code, &at, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        set_error(err, errlen, "tokenizer.json: %s: pattern does not compile at offset %zu: %s", where, (size_t)at,
                  (const char*)msg);
        return NULL;
    }
    /* JIT where the platform has it; the interpreter gives the same matches otherwise. */
    (void)pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
    return re;
}

static char* desc_printf(const char* fmt, const char* a, const char* b, int x, int y) {
    size_t n = strlen(fmt) + (a ? strlen(a) : 0) + (b ? strlen(b) : 0) + 64;
    char* s = mallocCheck(n);
    snprintf(s, n, fmt, a ? a : "", b ? b : "", x, y);
    return s;
}

static int add_step(Pretok* p, Step st, char* err, size_t errlen) {
    if (p->n_steps == MAX_STEPS) {
        pcre2_code_free(st.re);
        free(st.desc);
        return set_error(err, errlen, "tokenizer.json: pre_tokenizer has more than %d steps", MAX_STEPS);
    }
    p->steps[p->n_steps++] = st;
    return 0;
}

static int read_pre_tokenizer(Pretok* p, const cJSON* pt, int depth, char* err, size_t errlen) {
    const char* type = cJSON_IsObject(pt) ? json_type(pt) : NULL;
    if (!type) return set_error(err, errlen, "tokenizer.json: pre_tokenizer: expected an object with a \"type\"");
    if (!strcmp(type, "Sequence")) {
        const cJSON* list = cJSON_GetObjectItemCaseSensitive(pt, "pretokenizers");
        if (!cJSON_IsArray(list) || depth > 4)
            return set_error(err, errlen, "tokenizer.json: pre_tokenizer Sequence: expected a \"pretokenizers\" array");
        const cJSON* item;
        cJSON_ArrayForEach(item, list) {
            if (read_pre_tokenizer(p, item, depth + 1, err, errlen)) return -1;
        }
        return 0;
    }
    if (p->n_steps && p->steps[p->n_steps - 1].kind == STEP_BYTE_LEVEL)
        return set_error(err, errlen,
                         "tokenizer.json: pre_tokenizer '%s' after ByteLevel is not supported (ByteLevel must be last)",
                         type);
    Step st = {0};
    if (!strcmp(type, "Split")) {
        const cJSON* pat = cJSON_GetObjectItemCaseSensitive(pt, "pattern");
        const cJSON* rx = cJSON_GetObjectItemCaseSensitive(pat, "Regex");
        const cJSON* lit = cJSON_GetObjectItemCaseSensitive(pat, "String");
        const cJSON* beh = cJSON_GetObjectItemCaseSensitive(pt, "behavior");
        const char* text = cJSON_IsString(rx) ? rx->valuestring : cJSON_IsString(lit) ? lit->valuestring : NULL;
        if (!text)
            return set_error(
                err, errlen,
                "tokenizer.json: pre_tokenizer Split: pattern must be {\"Regex\": ...} or {\"String\": ...}");
        int b = -1;
        for (int i = 0; cJSON_IsString(beh) && i < 5; i++)
            if (!strcmp(beh->valuestring, BEHAVIOR_NAMES[i])) b = i;
        if (b < 0)
            return set_error(err, errlen, "tokenizer.json: pre_tokenizer Split: behavior '%s' is not supported",
                             cJSON_IsString(beh) ? beh->valuestring : "(missing)");
        int invert = json_flag(pt, "invert", 0);
        if (invert < 0) return set_error(err, errlen, "tokenizer.json: pre_tokenizer Split: invert must be a boolean");
        st.kind = STEP_SPLIT;
        st.behavior = (Behavior)b;
        st.invert = invert;
        st.re = regex_compile(text, !cJSON_IsString(rx), "pre_tokenizer Split", err, errlen);
        if (!st.re) return -1;
        st.desc = desc_printf("split|%s|%s|%d|%d", cJSON_IsString(rx) ? "regex" : "string", text, b, invert);
        return add_step(p, st, err, errlen);
    }
    if (!strcmp(type, "Digits")) {
        int individual = json_flag(pt, "individual_digits", 0);
        if (individual < 0)
            return set_error(err, errlen, "tokenizer.json: pre_tokenizer Digits: individual_digits must be a boolean");
        /* The library splits on char::is_numeric (categories Nd, Nl, No = \p{N}): each digit
         * alone (Isolated), or runs of them (Contiguous, which for single-character matches
         * is \p{N}+ isolated). */
        st.kind = STEP_SPLIT;
        st.behavior = BEHAVIOR_ISOLATED;
        st.re = regex_compile(individual ? "\\p{N}" : "\\p{N}+", 0, "pre_tokenizer Digits", err, errlen);
        if (!st.re) return -1;
        st.desc = desc_printf("digits%s%s|%d|%d", NULL, NULL, individual, 0);
        return add_step(p, st, err, errlen);
    }
    if (!strcmp(type, "ByteLevel")) {
        int aps = json_flag(pt, "add_prefix_space", 1);
        int use_regex = json_flag(pt, "use_regex", 1);
        if (aps < 0 || use_regex < 0)
            return set_error(
                err, errlen,
                "tokenizer.json: pre_tokenizer ByteLevel: add_prefix_space and use_regex must be booleans");
        st.kind = STEP_BYTE_LEVEL;
        st.add_prefix_space = aps;
        if (use_regex) {
            st.re = regex_compile(GPT2_PATTERN, 0, "pre_tokenizer ByteLevel", err, errlen);
            if (!st.re) return -1;
        }
        st.behavior = BEHAVIOR_ISOLATED;
        st.desc = desc_printf("bytelevel%s%s|%d|%d", NULL, NULL, aps, use_regex);
        return add_step(p, st, err, errlen);
    }
    return set_error(err, errlen, "tokenizer.json: pre_tokenizer type '%s' is not supported", type);
}

Pretok* pretok_from_json(const cJSON* normalizer, const cJSON* pre_tokenizer, char* err, size_t errlen) {
    Pretok* p = callocCheck(1, sizeof *p);
    if (normalizer && !cJSON_IsNull(normalizer)) {
        const char* type = cJSON_IsObject(normalizer) ? json_type(normalizer) : NULL;
        if (!type) {
            set_error(err, errlen, "tokenizer.json: normalizer: expected an object with a \"type\"");
            goto fail;
        }
        if (strcmp(type, "NFC") != 0) {
            set_error(err, errlen, "tokenizer.json: normalizer type '%s' is not supported", type);
            goto fail;
        }
        p->nfc = 1;
    }
    if (pre_tokenizer && !cJSON_IsNull(pre_tokenizer) && read_pre_tokenizer(p, pre_tokenizer, 0, err, errlen))
        goto fail;
    return p;
fail:
    pretok_free(p);
    return NULL;
}

void pretok_free(Pretok* p) {
    if (!p) return;
    for (int i = 0; i < p->n_steps; i++) {
        pcre2_code_free(p->steps[i].re);
        free(p->steps[i].desc);
    }
    free(p);
}

int pretok_byte_level(const Pretok* p) { return p->n_steps > 0 && p->steps[p->n_steps - 1].kind == STEP_BYTE_LEVEL; }

uint64_t pretok_fingerprint(const Pretok* p, uint64_t h) {
    h = fnv1a_update(h, p->nfc ? "nfc" : "none", p->nfc ? 4 : 5);
    for (int i = 0; i < p->n_steps; i++) h = fnv1a_update(h, p->steps[i].desc, strlen(p->steps[i].desc) + 1);
    return h;
}

/* ---- normalizing --------------------------------------------------------------------- */

static void bytes_append(char** out, size_t* n, size_t* cap, const void* data, size_t len) {
    if (*n + len + 1 > *cap) {
        while (*n + len + 1 > *cap) *cap = *cap ? 2 * *cap : 256;
        char* grown = realloc(*out, *cap);
        if (!grown) sapo_die("out of memory normalizing text");
        *out = grown;
    }
    memcpy(*out + *n, data, len);
    *n += len;
}

/* utf8proc's NFC of s[0..len), appended to *out. */
static int nfc_append(const char* s, size_t len, char** out, size_t* n, size_t* cap, char* err, size_t errlen) {
    utf8proc_uint8_t* dst = NULL;
    utf8proc_ssize_t m =
        utf8proc_map((const utf8proc_uint8_t*)s, (utf8proc_ssize_t)len, &dst, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
    if (m < 0) return set_error(err, errlen, "NFC normalization failed: %s", utf8proc_errmsg(m));
    bytes_append(out, n, cap, dst, (size_t)m);
    free(dst);
    return 0;
}

int pretok_normalize(const Pretok* p, const char* s, size_t len, const char** out, size_t* out_len, int* owned,
                     char* err, size_t errlen) {
    *out = s;
    *out_len = len;
    *owned = 0;
    if (!p->nfc) return 0;
    size_t i = 0;
    while (i < len && (unsigned char)s[i] < 0x80) i++;
    if (i == len) return 0; /* ASCII is its own NFC */
    /* The library's NFC treats the characters its data predates as plain starters: nothing
     * reorders or composes across them, so the text is normalized piecewise between them and
     * they are copied as they are. */
    char* buf = NULL;
    size_t n = 0, cap = 0, seg = 0;
    while (i < len) {
        size_t at = i;
        uint32_t cp = utf8_next(s, &i);
        if (cp < 0x7FD || !ucompat_nfc_opaque(cp)) continue;
        if (at > seg && nfc_append(s + seg, at - seg, &buf, &n, &cap, err, errlen)) {
            free(buf);
            return -1;
        }
        bytes_append(&buf, &n, &cap, s + at, i - at);
        seg = i;
    }
    if ((seg < len || !buf) && nfc_append(s + seg, len - seg, &buf, &n, &cap, err, errlen)) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = n;
    *owned = 1;
    return 0;
}

/* ---- splitting ----------------------------------------------------------------------- */

typedef struct {
    size_t start, end;
    int is_match;
} Mark;

typedef struct {
    Mark* m;
    int n, cap;
} Marks;

static void marks_push(Marks* ms, size_t start, size_t end, int is_match) {
    if (ms->n == ms->cap) {
        ms->cap = ms->cap ? 2 * ms->cap : 64;
        Mark* grown = realloc(ms->m, (size_t)ms->cap * sizeof *grown);
        if (!grown) sapo_die("out of memory splitting text");
        ms->m = grown;
    }
    ms->m[ms->n++] = (Mark){start, end, is_match};
}

static size_t char_len(unsigned char c) { return c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4; }

/* The library's find_matches for a regex over s[0..len): matches and the gaps between them,
 * covering all of s. Its iterator refuses an empty match right where the previous match
 * ended and then searches again one character further on. */
static int regex_marks(const pcre2_code* re, pcre2_match_data* md, const char* s, size_t len, Marks* ms, char* err,
                       size_t errlen) {
    ms->n = 0;
    size_t prev = 0, from = 0;
    int have_last = 0;
    size_t last_end = 0;
    while (from <= len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)s, len, from, PCRE2_NO_UTF_CHECK, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(rc, msg, sizeof msg);
            return set_error(err, errlen, "pre-tokenizer regex failed: %s", (const char*)msg);
        }
        PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        size_t a = ov[0], b = ov[1];
        if (a == b && have_last && last_end == b) {
            from += from < len ? char_len((unsigned char)s[from]) : 1;
            continue;
        }
        from = b;
        have_last = 1;
        last_end = b;
        if (prev != a) marks_push(ms, prev, a, 0);
        marks_push(ms, a, b, 1);
        prev = b;
    }
    if (prev != len) marks_push(ms, prev, len, 0);
    return 0;
}

/* The library's SplitDelimiterBehavior over the marks, in place: what remains are the kept
 * pieces (is_match then means "removed"). */
static void marks_apply(Marks* ms, Behavior b, int invert) {
    if (invert)
        for (int i = 0; i < ms->n; i++) ms->m[i].is_match = !ms->m[i].is_match;
    int n = 0, prev_match = 0;
    switch (b) {
    case BEHAVIOR_REMOVED: return;
    case BEHAVIOR_ISOLATED:
        for (int i = 0; i < ms->n; i++) ms->m[i].is_match = 0;
        return;
    case BEHAVIOR_CONTIGUOUS:
        for (int i = 0; i < ms->n; i++) {
            int m = ms->m[i].is_match;
            if (m == prev_match && n) ms->m[n - 1].end = ms->m[i].end;
            else ms->m[n++] = (Mark){ms->m[i].start, ms->m[i].end, 0};
            prev_match = m;
        }
        break;
    case BEHAVIOR_MERGED_PREV:
        for (int i = 0; i < ms->n; i++) {
            int m = ms->m[i].is_match;
            if (m && !prev_match && n) ms->m[n - 1].end = ms->m[i].end;
            else ms->m[n++] = (Mark){ms->m[i].start, ms->m[i].end, 0};
            prev_match = m;
        }
        break;
    case BEHAVIOR_MERGED_NEXT: {
        /* From the right: a match joins the piece after it. Built right to left at the end
         * of the array's own slots, then moved to the front. */
        int w = ms->n;
        for (int i = ms->n - 1; i >= 0; i--) {
            int m = ms->m[i].is_match;
            Mark cur = ms->m[i];
            if (m && !prev_match && w < ms->n) ms->m[w].start = cur.start;
            else ms->m[--w] = (Mark){cur.start, cur.end, 0};
            prev_match = m;
        }
        n = ms->n - w;
        memmove(ms->m, ms->m + w, (size_t)n * sizeof *ms->m);
        break;
    }
    }
    ms->n = n;
}

static void spans_push(PretokSpan** spans, int* n, int* cap, size_t off, size_t len) {
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        PretokSpan* grown = realloc(*spans, (size_t)*cap * sizeof *grown);
        if (!grown) sapo_die("out of memory splitting text");
        *spans = grown;
    }
    (*spans)[(*n)++] = (PretokSpan){off, len};
}

static void buf_reserve(PretokPieces* pc, size_t more) {
    if (pc->buf_len + more <= pc->buf_cap) return;
    size_t cap = pc->buf_cap ? pc->buf_cap : 256;
    while (cap < pc->buf_len + more) cap *= 2;
    char* grown = realloc(pc->buf, cap);
    char* grown_view = grown ? realloc(pc->view, cap) : NULL;
    if (!grown || !grown_view) sapo_die("out of memory splitting text");
    pc->buf = grown;
    pc->view = grown_view;
    pc->buf_cap = cap;
}

/* The regexes' view of buf[0..len): characters whose class the library's regexes see
 * differently from PCRE2 replaced by stand-ins of the same length (unicode_compat.h). */
static void view_fill(PretokPieces* pc, size_t len) {
    memcpy(pc->view, pc->buf, len);
    size_t i = 0;
    while (i < len) {
        if ((unsigned char)pc->buf[i] < 0xE1) { /* below U+1000: nothing to replace */
            i += char_len((unsigned char)pc->buf[i]);
            continue;
        }
        size_t at = i;
        uint32_t c = ucompat_regex_stand_in(utf8_next(pc->buf, &i));
        if (!c) continue;
        if (i - at == 3) {
            pc->view[at] = (char)(0xE0 | (c >> 12));
            pc->view[at + 1] = (char)(0x80 | ((c >> 6) & 0x3F));
            pc->view[at + 2] = (char)(0x80 | (c & 0x3F));
        } else {
            pc->view[at] = (char)(0xF0 | (c >> 18));
            pc->view[at + 1] = (char)(0x80 | ((c >> 12) & 0x3F));
            pc->view[at + 2] = (char)(0x80 | ((c >> 6) & 0x3F));
            pc->view[at + 3] = (char)(0x80 | (c & 0x3F));
        }
    }
}

int pretok_split(const Pretok* p, const char* s, size_t len, PretokPieces* pc, char* err, size_t errlen) {
    pc->buf_len = 0;
    pc->n = 0;
    if (len == 0) return 0;
    buf_reserve(pc, len);
    memcpy(pc->buf, s, len);
    view_fill(pc, len);
    pc->buf_len = len;
    spans_push(&pc->spans, &pc->n, &pc->cap, 0, len);
    Marks ms = {0};
    pcre2_match_data* md = pcre2_match_data_create(1, NULL);
    if (!md) sapo_die("out of memory for a regex match");
    int rc = 0;
    for (int k = 0; k < p->n_steps && rc == 0; k++) {
        const Step* st = &p->steps[k];
        int n_out = 0;
        for (int i = 0; i < pc->n && rc == 0; i++) {
            PretokSpan sp = pc->spans[i];
            if (st->kind == STEP_BYTE_LEVEL && st->add_prefix_space && pc->buf[sp.off] != ' ') {
                /* The library prepends the space to each piece before its regex split. */
                buf_reserve(pc, sp.len + 1);
                pc->buf[pc->buf_len] = pc->view[pc->buf_len] = ' ';
                memcpy(pc->buf + pc->buf_len + 1, pc->buf + sp.off, sp.len);
                memcpy(pc->view + pc->buf_len + 1, pc->view + sp.off, sp.len);
                sp.off = pc->buf_len;
                sp.len += 1;
                pc->buf_len += sp.len;
            }
            if (!st->re) {
                spans_push(&pc->scratch, &n_out, &pc->scratch_cap, sp.off, sp.len);
                continue;
            }
            rc = regex_marks(st->re, md, pc->view + sp.off, sp.len, &ms, err, errlen);
            if (rc) break;
            marks_apply(&ms, st->behavior, st->invert);
            for (int j = 0; j < ms.n; j++)
                if (!ms.m[j].is_match && ms.m[j].end > ms.m[j].start)
                    spans_push(&pc->scratch, &n_out, &pc->scratch_cap, sp.off + ms.m[j].start,
                               ms.m[j].end - ms.m[j].start);
        }
        /* The step's output becomes the current pieces. */
        PretokSpan* t = pc->spans;
        int tcap = pc->cap;
        pc->spans = pc->scratch;
        pc->cap = pc->scratch_cap;
        pc->n = n_out;
        pc->scratch = t;
        pc->scratch_cap = tcap;
    }
    pcre2_match_data_free(md);
    free(ms.m);
    return rc;
}

void pretok_pieces_free(PretokPieces* pc) {
    free(pc->buf);
    free(pc->view);
    free(pc->spans);
    free(pc->scratch);
    memset(pc, 0, sizeof *pc);
}
