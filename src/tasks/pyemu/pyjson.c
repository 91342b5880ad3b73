/* Python's json.loads over one UTF-8 line, into a cJSON tree (see pyjson.h). A recursive
 * descent parser that follows CPython 3.11's _json scanner; strings are decoded into a
 * scratch buffer and handed to cJSON with their full length. */
#include "tasks/pyemu/pyjson.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/pyemu/pyunicode.h"

/* Python's sys.int_info.default_max_str_digits. */
#define MAX_INT_DIGITS 4300

typedef struct {
    const char* s;
    size_t n, i;
    int depth;
    char* scratch; /* decoded text of the string being read */
    size_t scratch_cap;
    char* err;
    size_t errlen;
} Parser;

/* A string that holds U+0000 keeps its byte length in valuedouble and, in valueint, a
 * check of that length against the text's address: cJSON_Duplicate strdup()s the text (so
 * cuts it at the NUL) and copies both fields, and a copy must not be read past its cut. */
static int length_check(const char* s, size_t len) {
    uint64_t h = ((uint64_t)(uintptr_t)s ^ ((uint64_t)len << 1)) * 0x9E3779B97F4A7C15ull;
    return (int)(h >> 33);
}

const char* pyjson_string(const cJSON* item, size_t* len) {
    if (!cJSON_IsString(item) || !item->valuestring) return NULL;
    const char* s = item->valuestring;
    size_t n = strlen(s);
    double full = item->valuedouble;
    if (full > (double)n && full < 9007199254740992.0 && item->valueint == length_check(s, (size_t)full))
        n = (size_t)full;
    if (len) *len = n;
    return s;
}

static cJSON* fail(Parser* p, size_t at, const char* what) {
    set_error(p->err, p->errlen, "not valid JSON (%s at column %zu)", what, at + 1);
    return NULL;
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static void skip_ws(Parser* p) {
    while (p->i < p->n && is_ws(p->s[p->i])) p->i++;
}

static int starts_with(const Parser* p, const char* word) {
    size_t k = strlen(word);
    return p->n - p->i >= k && !memcmp(p->s + p->i, word, k);
}

static void scratch_put(Parser* p, size_t* at, const char* bytes, size_t k) {
    if (*at + k > p->scratch_cap) {
        size_t cap = p->scratch_cap ? p->scratch_cap : 64;
        while (cap < *at + k) cap *= 2;
        char* grown = realloc(p->scratch, cap);
        if (!grown) sapo_die("out of memory parsing a JSON line");
        p->scratch = grown;
        p->scratch_cap = cap;
    }
    memcpy(p->scratch + *at, bytes, k);
    *at += k;
}

static int hex4(const Parser* p, size_t at, uint32_t* out) {
    if (p->n - at < 4) return -1;
    uint32_t v = 0;
    for (size_t k = at; k < at + 4; k++) {
        char c = p->s[k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return -1;
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return 0;
}

/* The bytes scratch[b, e) came from \udc80-\udcff escapes in a row: surrogateescape reads
 * them back as the same lone surrogates only when no two of them form a UTF-8 sequence.
 * (A run cannot join the text around it: UTF-8 text never starts with a continuation
 * byte, and a sequence before the run is complete.) */
static int escape_run_ok(const Parser* p, size_t b, size_t e) {
    for (size_t at = b; at < e; at++) {
        size_t k = at - b;
        uint32_t got = pyu_next(p->scratch + b, e - b, &k);
        if (k != at - b + 1 || got != 0xDC00u + (unsigned char)p->scratch[at]) return 0;
    }
    return 1;
}

/* Reads the string starting at the opening quote p->s[p->i] into a cJSON_malloc'd,
 * NUL-terminated buffer of *len bytes (U+0000 kept). Returns it, or NULL with err set. */
static char* parse_string(Parser* p, size_t* len) {
    size_t open = p->i++, out = 0, run = SIZE_MAX; /* run: start of the current escape run */
    for (;;) {
        if (p->i >= p->n) {
            fail(p, open, "unterminated string starting");
            return NULL;
        }
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') break;
        if (c < 0x20) {
            fail(p, p->i, "invalid control character in a string");
            return NULL;
        }
        int lone_byte = 0;
        if (c != '\\') {
            /* Plain text, valid UTF-8 (checked for the whole line): copy up to the next
             * quote, backslash or control character. */
            size_t b = p->i;
            while (p->i < p->n && (unsigned char)p->s[p->i] >= 0x20 && p->s[p->i] != '"' && p->s[p->i] != '\\') p->i++;
            if (run != SIZE_MAX && !escape_run_ok(p, run, out)) goto bad_run;
            run = SIZE_MAX;
            scratch_put(p, &out, p->s + b, p->i - b);
            continue;
        }
        size_t esc = p->i;
        if (p->i + 1 >= p->n) {
            fail(p, open, "unterminated string starting");
            return NULL;
        }
        char e = p->s[p->i + 1];
        char one = 0;
        switch (e) {
            case '"': one = '"'; break;
            case '\\': one = '\\'; break;
            case '/': one = '/'; break;
            case 'b': one = '\b'; break;
            case 'f': one = '\f'; break;
            case 'n': one = '\n'; break;
            case 'r': one = '\r'; break;
            case 't': one = '\t'; break;
            case 'u': break;
            default:
                fail(p, esc, "invalid \\escape");
                return NULL;
        }
        char utf8[4];
        size_t k = 0;
        if (e != 'u') {
            utf8[k++] = one;
            p->i += 2;
        } else {
            uint32_t cp;
            if (hex4(p, p->i + 2, &cp)) {
                fail(p, esc, "invalid \\uXXXX escape");
                return NULL;
            }
            p->i += 6;
            if (cp >= 0xD800 && cp <= 0xDBFF && p->n - p->i >= 6 && p->s[p->i] == '\\' && p->s[p->i + 1] == 'u') {
                uint32_t lo;
                if (hex4(p, p->i + 2, &lo)) {
                    fail(p, p->i, "invalid \\uXXXX escape");
                    return NULL;
                }
                if (lo >= 0xDC00 && lo <= 0xDFFF) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p->i += 6;
                }
            }
            if (cp >= 0xD800 && cp <= 0xDFFF) {
                if (cp < 0xDC80 || cp > 0xDCFF) {
                    set_error(p->err, p->errlen,
                              "lone surrogate \\u%04X at column %zu: a C string cannot hold it (only \\udc80-\\udcff, "
                              "as the bytes 0x80-0xff they stand for under surrogateescape)",
                              (unsigned)cp, esc + 1);
                    return NULL;
                }
                utf8[k++] = (char)(cp - 0xDC00);
                lone_byte = 1;
            } else if (cp < 0x80) {
                utf8[k++] = (char)cp;
            } else if (cp < 0x800) {
                utf8[k++] = (char)(0xC0 | cp >> 6);
                utf8[k++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                utf8[k++] = (char)(0xE0 | cp >> 12);
                utf8[k++] = (char)(0x80 | (cp >> 6 & 0x3F));
                utf8[k++] = (char)(0x80 | (cp & 0x3F));
            } else {
                utf8[k++] = (char)(0xF0 | cp >> 18);
                utf8[k++] = (char)(0x80 | (cp >> 12 & 0x3F));
                utf8[k++] = (char)(0x80 | (cp >> 6 & 0x3F));
                utf8[k++] = (char)(0x80 | (cp & 0x3F));
            }
        }
        if (lone_byte) {
            if (run == SIZE_MAX) run = out;
        } else {
            if (run != SIZE_MAX && !escape_run_ok(p, run, out)) goto bad_run;
            run = SIZE_MAX;
        }
        scratch_put(p, &out, utf8, k);
    }
    if (run != SIZE_MAX && !escape_run_ok(p, run, out)) goto bad_run;
    p->i++; /* the closing quote */
    char* s = cJSON_malloc(out + 1);
    if (!s) sapo_die("out of memory parsing a JSON line");
    if (out) memcpy(s, p->scratch, out);
    s[out] = '\0';
    *len = out;
    return s;
bad_run:
    set_error(p->err, p->errlen,
              "lone surrogates in the string at column %zu stand for bytes that read back as UTF-8 text "
              "(e.g. \\udcc3\\udca9 as \"\\u00e9\"): a C string cannot hold them",
              open + 1);
    return NULL;
}

static cJSON* make_string(char* s, size_t len) {
    cJSON* item = cJSON_CreateString("");
    if (!item) sapo_die("out of memory parsing a JSON line");
    cJSON_free(item->valuestring);
    item->valuestring = s;
    if (memchr(s, '\0', len)) {
        item->valuedouble = (double)len;
        item->valueint = length_check(s, len);
    }
    return item;
}

static cJSON* make_number(double d) {
    cJSON* item = cJSON_CreateNumber(isnan(d) ? 0.0 : d); /* cJSON would cast NaN to int */
    if (!item) sapo_die("out of memory parsing a JSON line");
    item->valuedouble = d;
    return item;
}

static cJSON* parse_number(Parser* p) {
    size_t b = p->i, i = p->i;
    if (i < p->n && p->s[i] == '-') i++;
    size_t digits_from = i;
    if (i < p->n && p->s[i] == '0') i++;
    else if (i < p->n && p->s[i] >= '1' && p->s[i] <= '9')
        while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
    else return fail(p, b, "expecting a value");
    size_t int_digits = i - digits_from;
    int is_float = 0;
    if (i + 1 < p->n && p->s[i] == '.' && p->s[i + 1] >= '0' && p->s[i + 1] <= '9') {
        i += 2;
        while (i < p->n && p->s[i] >= '0' && p->s[i] <= '9') i++;
        is_float = 1;
    }
    if (i < p->n && (p->s[i] == 'e' || p->s[i] == 'E')) {
        size_t j = i + 1;
        if (j < p->n && (p->s[j] == '+' || p->s[j] == '-')) j++;
        if (j < p->n && p->s[j] >= '0' && p->s[j] <= '9') {
            while (j < p->n && p->s[j] >= '0' && p->s[j] <= '9') j++;
            i = j;
            is_float = 1;
        }
    }
    if (!is_float && int_digits > MAX_INT_DIGITS)
        return fail(p, b, "an integer of more than 4300 digits, which Python's int() refuses,");
    char small[64];
    size_t k = i - b;
    char* text = k < sizeof small ? small : mallocCheck(k + 1);
    memcpy(text, p->s + b, k);
    text[k] = '\0';
    double d = strtod(text, NULL); /* correctly rounded, as float(); inf past the range */
    if (text != small) free(text);
    if (!is_float && d == 0.0) d = 0.0; /* int("-0") is 0 */
    p->i = i;
    return make_number(d);
}

static cJSON* parse_value(Parser* p);

static cJSON* parse_array(Parser* p) {
    cJSON* arr = cJSON_CreateArray();
    if (!arr) sapo_die("out of memory parsing a JSON line");
    p->i++;
    skip_ws(p);
    if (p->i < p->n && p->s[p->i] == ']') {
        p->i++;
        return arr;
    }
    for (;;) {
        cJSON* v = parse_value(p);
        if (!v) break;
        cJSON_AddItemToArray(arr, v);
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == ']') {
            p->i++;
            return arr;
        }
        if (p->i >= p->n || p->s[p->i] != ',') {
            fail(p, p->i, "expecting ',' or ']'");
            break;
        }
        p->i++;
        skip_ws(p);
    }
    cJSON_Delete(arr);
    return NULL;
}

typedef struct {
    char* key;
    size_t klen, index;
    cJSON* value;
} Member;

static int member_by_key(const void* a, const void* b) {
    const Member *x = a, *y = b;
    size_t n = x->klen < y->klen ? x->klen : y->klen;
    int c = n ? memcmp(x->key, y->key, n) : 0;
    if (c) return c;
    if (x->klen != y->klen) return x->klen < y->klen ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int member_by_index(const void* a, const void* b) {
    const Member *x = a, *y = b;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The members as a Python dict has them: a key with U+0000 dropped (see pyjson.h), the
 * last value of a repeated key at the place of its first. Consumes m. */
static cJSON* build_object(Member* m, size_t n) {
    size_t kept = 0;
    for (size_t k = 0; k < n; k++) {
        if (memchr(m[k].key, '\0', m[k].klen)) {
            cJSON_free(m[k].key);
            cJSON_Delete(m[k].value);
        } else m[kept++] = m[k];
    }
    n = kept;
    qsort(m, n, sizeof *m, member_by_key);
    kept = 0;
    for (size_t k = 0; k < n;) {
        size_t end = k + 1;
        while (end < n && m[end].klen == m[k].klen && !memcmp(m[end].key, m[k].key, m[k].klen)) end++;
        cJSON* last = m[end - 1].value;
        for (size_t j = k; j + 1 < end; j++) cJSON_Delete(m[j].value);
        for (size_t j = k + 1; j < end; j++) cJSON_free(m[j].key);
        m[kept] = m[k];
        m[kept++].value = last;
        k = end;
    }
    qsort(m, kept, sizeof *m, member_by_index);
    cJSON* obj = cJSON_CreateObject();
    if (!obj) sapo_die("out of memory parsing a JSON line");
    for (size_t k = 0; k < kept; k++) {
        cJSON_AddItemToObject(obj, m[k].key, m[k].value);
        cJSON_free(m[k].key);
    }
    return obj;
}

static cJSON* parse_object(Parser* p) {
    size_t n = 0, cap = 0;
    Member* m = NULL;
    p->i++;
    skip_ws(p);
    int ok = 0;
    if (p->i < p->n && p->s[p->i] == '}') {
        p->i++;
        ok = 1;
    }
    while (!ok) {
        if (p->i >= p->n || p->s[p->i] != '"') {
            fail(p, p->i, "expecting a property name in double quotes");
            break;
        }
        size_t klen;
        char* key = parse_string(p, &klen);
        if (!key) break;
        skip_ws(p);
        if (p->i >= p->n || p->s[p->i] != ':') {
            cJSON_free(key);
            fail(p, p->i, "expecting ':'");
            break;
        }
        p->i++;
        skip_ws(p);
        cJSON* v = parse_value(p);
        if (!v) {
            cJSON_free(key);
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            Member* grown = realloc(m, cap * sizeof *m);
            if (!grown) sapo_die("out of memory parsing a JSON line");
            m = grown;
        }
        m[n] = (Member){key, klen, n, v};
        n++;
        skip_ws(p);
        if (p->i < p->n && p->s[p->i] == '}') {
            p->i++;
            ok = 1;
            break;
        }
        if (p->i >= p->n || p->s[p->i] != ',') {
            fail(p, p->i, "expecting ',' or '}'");
            break;
        }
        p->i++;
        skip_ws(p);
    }
    cJSON* obj = NULL;
    if (ok) obj = build_object(m, n);
    else
        for (size_t k = 0; k < n; k++) {
            cJSON_free(m[k].key);
            cJSON_Delete(m[k].value);
        }
    free(m);
    return obj;
}

static cJSON* parse_value(Parser* p) {
    if (p->i >= p->n) return fail(p, p->i, "expecting a value");
    char c = p->s[p->i];
    if (c == '"') {
        size_t len;
        char* s = parse_string(p, &len);
        return s ? make_string(s, len) : NULL;
    }
    if (c == '{' || c == '[') {
        if (p->depth >= PYJSON_MAX_DEPTH) return fail(p, p->i, "nesting deeper than 995 arrays and objects");
        p->depth++;
        cJSON* v = c == '{' ? parse_object(p) : parse_array(p);
        p->depth--;
        return v;
    }
    static const struct {
        const char* word;
        int kind; /* 0 null, 1 true, 2 false, 3 number */
        double value;
    } LITERALS[] = {{"null", 0, 0}, {"true", 1, 0}, {"false", 2, 0}, {"NaN", 3, NAN}, {"Infinity", 3, INFINITY},
                    {"-Infinity", 3, -INFINITY}};
    for (size_t k = 0; k < sizeof LITERALS / sizeof LITERALS[0]; k++) {
        if (!starts_with(p, LITERALS[k].word)) continue;
        p->i += strlen(LITERALS[k].word);
        cJSON* v = LITERALS[k].kind == 0   ? cJSON_CreateNull()
                   : LITERALS[k].kind == 1 ? cJSON_CreateTrue()
                   : LITERALS[k].kind == 2 ? cJSON_CreateFalse()
                                           : make_number(LITERALS[k].value);
        if (!v) sapo_die("out of memory parsing a JSON line");
        return v;
    }
    return parse_number(p);
}

cJSON* pyjson_parse(const char* text, size_t len, char* err, size_t errlen) {
    for (size_t i = 0; i < len;) {
        if ((unsigned char)text[i] < 0x80) {
            i++;
            continue;
        }
        size_t at = i;
        uint32_t cp = pyu_next(text, len, &i);
        if (cp >= 0xDC80 && cp <= 0xDCFF) { /* pyu_next's mark of a byte that is not UTF-8 */
            set_error(err, errlen, "not valid UTF-8 (byte 0x%02X at column %zu)", (unsigned)(unsigned char)text[at], at + 1);
            return NULL;
        }
    }
    Parser p = {.s = text, .n = len, .err = err, .errlen = errlen};
    skip_ws(&p);
    cJSON* v = parse_value(&p);
    if (v) {
        skip_ws(&p);
        if (p.i < p.n) {
            set_error(err, errlen, "text after the JSON value at column %zu", p.i + 1);
            cJSON_Delete(v);
            v = NULL;
        }
    }
    free(p.scratch);
    return v;
}
