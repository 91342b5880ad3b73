/* Configuration mechanism: values typed and bounded by CONFIG_SCHEMA (config_schema.c),
 * read from INI files with libinih (one `base = FILE` include, [node.K] sections) and from
 * `section.key=value` command-line overrides; written back as INI; printed as a table.
 * Every error is one line naming the origin (FILE:LINE or "command line"), the
 * section.key, the value and what was expected. */
/* Debian's libinih is built with INI_HANDLER_LINENO=1: the handler gets the line number. */
#define INI_HANDLER_LINENO 1
#include <ini.h>

#include "core/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/check.h"
#include "core/config_enums.h"

#define CFG_LINE_MAX 4096     /* longest INI line accepted, newline included */
#define CFG_INCLUDE_DEPTH 16  /* longest base chain; cycles are caught before this */
#define CFG_SHOW_MAX 60       /* values longer than this are shortened in messages */
#define CFG_KEY_MAX 128       /* "section.key" buffers; schema keys are far shorter */

typedef struct {
    long i;       /* CFG_INT, CFG_BOOL */
    double f;     /* CFG_FLOAT */
    char* s;      /* CFG_STRING, CFG_ENUM */
    char* origin; /* "default", "FILE:LINE" or "command line" */
} CfgValue;

typedef struct {
    int node, field;
    CfgValue v;
} NodeValue;

struct Config {
    CfgValue* vals; /* one per CONFIG_SCHEMA entry */
    NodeValue* nodes; /* [node.K] overrides, in the order they were first set */
    int n_nodes, cap_nodes;
};

/* ---- small helpers ------------------------------------------------------------------ */

static char* dup_string(const char* s) {
    size_t n = strlen(s) + 1;
    char* d = mallocCheck(n);
    memcpy(d, s, n);
    return d;
}

static void value_free(CfgValue* v) {
    free(v->s);
    free(v->origin);
    v->s = v->origin = NULL;
}

static void value_copy(CfgValue* dst, const CfgValue* src) {
    *dst = *src;
    dst->s = src->s ? dup_string(src->s) : NULL;
    dst->origin = dup_string(src->origin);
}

/* Text as shown inside quotes in a one-line message: control bytes as \xNN, shortened
 * to CFG_SHOW_MAX characters. Returns buf (n >= CFG_SHOW_MAX + 8). */
static const char* show_value(const char* v, char* buf, size_t n) {
    size_t used = 0;
    for (const unsigned char* p = (const unsigned char*)v; *p; p++) {
        if (used >= CFG_SHOW_MAX) {
            snprintf(buf + used, n - used, "...");
            return buf;
        }
        if (*p < 0x20 || *p == 0x7f) used += (size_t)snprintf(buf + used, n - used, "\\x%02x", *p);
        else buf[used++] = (char)*p;
    }
    buf[used] = '\0';
    return buf;
}

/* Keeps a message on one line whatever bytes a key name brought in. */
static void one_line(char* msg) {
    for (unsigned char* p = (unsigned char*)msg; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) *p = '?';
    }
}

/* Shortest text that reads back as exactly x, so written files round-trip: plain digits
 * for whole numbers ("10"), else the shortest %g with a tidy exponent ("1e6", "3e-4"). */
static void format_double(double x, char* buf, size_t n) {
    char g[48], whole[48] = "";
    for (int p = 1; p <= 17; p++) {
        snprintf(g, sizeof g, "%.*g", p, x);
        if (strtod(g, NULL) == x) break;
    }
    char* e = strchr(g, 'e');
    if (e) { /* "1e+06" -> "1e6", "1e-08" -> "1e-8" */
        char* d = e + 1;
        const char* s = d;
        if (*s == '+') s++;
        else if (*s == '-') *d++ = *s++;
        while (*s == '0' && s[1]) s++;
        memmove(d, s, strlen(s) + 1);
    }
    if (x == floor(x) && fabs(x) < 1e15) snprintf(whole, sizeof whole, "%.0f", x);
    snprintf(buf, n, "%s", *whole && strlen(whole) <= strlen(g) ? whole : g);
}

/* Integer bounds as text; large powers of two as "2^k", which is how they were chosen. */
static void format_bound(long x, char* buf, size_t n) {
    if (x > (1L << 20) && (x & (x - 1)) == 0) {
        int k = 0;
        while ((1L << k) != x) k++;
        snprintf(buf, n, "2^%d", k);
    } else {
        snprintf(buf, n, "%ld", x);
    }
}

static int field_index(const char* key) {
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        if (!strcmp(CONFIG_SCHEMA[i].key, key)) return i;
    }
    return -1;
}

const CfgField* config_field(const char* key) {
    int i = field_index(key);
    return i < 0 ? NULL : &CONFIG_SCHEMA[i];
}

static int section_length(const char* key) {
    const char* dot = strchr(key, '.');
    return dot ? (int)(dot - key) : (int)strlen(key);
}

static int section_known(const char* name, size_t len) {
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const char* k = CONFIG_SCHEMA[i].key;
        if ((size_t)section_length(k) == len && !strncmp(k, name, len)) return 1;
    }
    return 0;
}

/* Distinct sections in schema order, written "[a], [b], ..." into buf. */
static void list_sections(char* buf, size_t n) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const char* k = CONFIG_SCHEMA[i].key;
        int len = section_length(k), seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen = section_length(CONFIG_SCHEMA[j].key) == len && !strncmp(CONFIG_SCHEMA[j].key, k, len);
        }
        if (seen) continue;
        int w = snprintf(buf + used, n - used, "%s[%.*s]", used ? ", " : "", len, k);
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
}

/* The keys of one section, "a.x, a.y, ..." into buf. */
static void list_section_keys(const char* section, size_t len, char* buf, size_t n) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const char* k = CONFIG_SCHEMA[i].key;
        if ((size_t)section_length(k) != len || strncmp(k, section, len)) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", k);
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
}

/* Edit distance with adjacent transpositions counted as one edit (optimal string
 * alignment), so "modle" is one step from "model". */
static int edit_distance(const char* a, const char* b) {
    enum { MAXLEN = 64 };
    size_t n = strlen(a), m = strlen(b);
    if (n > MAXLEN || m > MAXLEN) return 1000;
    int d[MAXLEN + 1][MAXLEN + 1];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[n][m];
}

/* How many edits still count as "near": about a third of the word, at least one. */
static int near_threshold(const char* word) {
    int t = (int)strlen(word) / 3;
    return t < 1 ? 1 : t > 3 ? 3 : t;
}

/* The schema key closest to query ("section.key", or a bare key), or NULL when none is
 * near. A bare key, or the right key under the wrong section, is matched on the part after
 * the last dot (one extra edit for a wrong section). */
static const char* suggest_key(const char* query) {
    const char* qname = strrchr(query, '.');
    qname = qname ? qname + 1 : query;
    int qsec = qname == query ? -1 : (int)(qname - 1 - query);
    int best = 1000, best_i = -1;
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const char* k = CONFIG_SCHEMA[i].key;
        int ksec = section_length(k);
        const char* kname = k + ksec + 1;
        int d = qsec < 0 ? 1000 : edit_distance(query, k);
        int same_section = qsec == ksec && !strncmp(query, k, (size_t)ksec);
        int dn = edit_distance(qname, kname) + (qsec < 0 || same_section ? 0 : 1);
        if (dn < d) d = dn;
        if (d < best) { best = d; best_i = i; }
    }
    return best_i >= 0 && best <= near_threshold(qname) ? CONFIG_SCHEMA[best_i].key : NULL;
}

/* The known section closest to name, or 0 when none is near; copies it into out. */
static int suggest_section(const char* name, char* out, size_t n) {
    int best = 1000;
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        char sec[CFG_KEY_MAX];
        snprintf(sec, sizeof sec, "%.*s", section_length(CONFIG_SCHEMA[i].key), CONFIG_SCHEMA[i].key);
        int d = edit_distance(name, sec);
        if (d < best) { best = d; snprintf(out, n, "%s", sec); }
    }
    return best <= near_threshold(name);
}

/* Node index from the text after "node." (len chars): digits only, in range. -1 if not. */
static int parse_node_index(const char* s, size_t len) {
    if (len == 0 || len > 9) return -1;
    long k = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i])) return -1;
        k = k * 10 + (s[i] - '0');
    }
    return k < CONFIG_MAX_NODES ? (int)k : -1;
}

/* ---- values: parse and describe ------------------------------------------------------ */

static const char* type_name(CfgType t) {
    switch (t) {
    case CFG_INT: return "int";
    case CFG_FLOAT: return "float";
    case CFG_BOOL: return "bool";
    case CFG_STRING: return "string";
    case CFG_ENUM: return "enum";
    }
    return "?";
}

/* "[1, 64]", "[0, 1)", "cpu|cuda|auto", or "-" when a type has no range. */
static void format_range(const CfgField* f, char* buf, size_t n) {
    char lo[40], hi[40];
    switch (f->type) {
    case CFG_INT:
        format_bound((long)f->min, lo, sizeof lo);
        format_bound((long)f->max, hi, sizeof hi);
        snprintf(buf, n, "[%s, %s]", lo, hi);
        break;
    case CFG_FLOAT:
        format_double(f->min, lo, sizeof lo);
        format_double(f->max, hi, sizeof hi);
        snprintf(buf, n, "%c%s, %s%c", f->min_open ? '(' : '[', lo, hi, f->max_open ? ')' : ']');
        break;
    case CFG_ENUM:
        snprintf(buf, n, "%s", f->choices);
        break;
    default:
        snprintf(buf, n, "-");
    }
}

/* What a value of field f must look like, for "expected ..." in messages. */
static void describe_expected(const CfgField* f, int want_finite, char* buf, size_t n) {
    char range[128];
    format_range(f, range, sizeof range);
    switch (f->type) {
    case CFG_INT:
        snprintf(buf, n, "an integer in %s", range);
        break;
    case CFG_FLOAT:
        snprintf(buf, n, "a %snumber in %s", want_finite ? "finite " : "", range);
        break;
    case CFG_BOOL:
        snprintf(buf, n, "a boolean (true/false, yes/no, on/off, 1/0)");
        break;
    case CFG_ENUM: {
        /* "one of cpu, cuda, auto" reads better than the table's a|b|c. */
        size_t used = (size_t)snprintf(buf, n, "one of ");
        for (const char* c = f->choices; *c && used + 3 < n; c++) {
            if (*c == '|') { buf[used++] = ','; buf[used++] = ' '; }
            else buf[used++] = *c;
        }
        buf[used < n ? used : n - 1] = '\0';
        break;
    }
    case CFG_STRING:
        snprintf(buf, n, "one line of text without ' ;' (an INI comment)");
        break;
    }
}

static int parse_bool(const char* text, long* out) {
    static const char* yes[] = {"true", "1", "yes", "on"};
    static const char* no[] = {"false", "0", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(text, yes[i])) { *out = 1; return 0; }
        if (!strcasecmp(text, no[i])) { *out = 0; return 0; }
    }
    return -1;
}

/* The position of the choice of length len starting at name in "a|b|c", or -1. */
static int choice_index(const char* choices, const char* name, size_t len) {
    int i = 0;
    for (const char* c = choices; *c; i++) {
        size_t n = strcspn(c, "|");
        if (n == len && !strncmp(c, name, len)) return i;
        c += n + (c[n] == '|');
    }
    return -1;
}

/* A string must survive config_write and libinih unchanged: one line, and no
 * whitespace-then-';' (libinih cuts an inline comment there). */
static int string_storable(const char* s) {
    for (const char* p = s; *p; p++) {
        if ((unsigned char)*p < 0x20 && *p != '\t') return 0;
        if (*p == 0x7f) return 0;
        if (*p == ';' && p > s && isspace((unsigned char)p[-1])) return 0;
    }
    return !(*s && (isspace((unsigned char)s[0]) || isspace((unsigned char)s[strlen(s) - 1])));
}

/* Parses text as a value of field f into v (v->s allocated for strings and enums; origin
 * untouched). Returns 0, or -1 with the expectation written into expect. */
static int value_parse(const CfgField* f, const char* text, CfgValue* v, char* expect, size_t n) {
    char* end = NULL;
    v->s = NULL;
    switch (f->type) {
    case CFG_INT: {
        errno = 0;
        long x = strtol(text, &end, 10);
        if (end == text || *end || errno == ERANGE || isspace((unsigned char)text[0]) || x < (long)f->min ||
            x > (long)f->max)
            break;
        v->i = x;
        return 0;
    }
    case CFG_FLOAT: {
        double x = strtod(text, &end);
        if (end == text || *end || isspace((unsigned char)text[0])) break;
        if (!isfinite(x)) {
            describe_expected(f, 1, expect, n);
            return -1;
        }
        if (x < f->min || x > f->max || (f->min_open && x == f->min) || (f->max_open && x == f->max)) break;
        v->f = x;
        return 0;
    }
    case CFG_BOOL:
        if (parse_bool(text, &v->i)) break;
        return 0;
    case CFG_ENUM:
        if (choice_index(f->choices, text, strlen(text)) < 0) break;
        v->s = dup_string(text);
        return 0;
    case CFG_STRING:
        if (!string_storable(text)) break;
        v->s = dup_string(text);
        return 0;
    }
    describe_expected(f, 0, expect, n);
    return -1;
}

/* The value as written in an INI file. */
static void format_value(const CfgField* f, const CfgValue* v, char* buf, size_t n) {
    switch (f->type) {
    case CFG_INT: snprintf(buf, n, "%ld", v->i); break;
    case CFG_FLOAT: format_double(v->f, buf, n); break;
    case CFG_BOOL: snprintf(buf, n, "%s", v->i ? "true" : "false"); break;
    default: snprintf(buf, n, "%s", v->s);
    }
}

/* ---- the Config object --------------------------------------------------------------- */

static int choice_count(const char* choices) {
    int n = 1;
    for (const char* c = choices; *c; c++) n += *c == '|';
    return n;
}

/* Stops the program when the C enums of config_enums.h disagree with the schema's choices
 * (another count, another name, another order). */
static void config_enums_check(void) {
#define CONFIG_ENUM_CHECK(key, VALUES)                                                                    \
    {                                                                                                     \
        static const char* const names[] = {VALUES(CONFIG_ENUM_NAME)};                                    \
        int n = (int)(sizeof names / sizeof names[0]);                                                    \
        const CfgField* f = config_field(key);                                                            \
        if (!f || f->type != CFG_ENUM) sapo_die("config_enums.h: '%s' is not an enum of the schema", key); \
        if (choice_count(f->choices) != n)                                                                \
            sapo_die("config_enums.h: %s has %d names, the schema %d (%s)", key, n, choice_count(f->choices), f->choices); \
        for (int i = 0; i < n; i++)                                                                       \
            if (choice_index(f->choices, names[i], strlen(names[i])) != i)                                \
                sapo_die("config_enums.h: %s name %d '%s' is not choice %d of '%s'", key, i, names[i], i, f->choices); \
    }
    CONFIG_ENUM_KEYS(CONFIG_ENUM_CHECK)
#undef CONFIG_ENUM_CHECK
}

Config* config_new(void) {
    config_enums_check();
    Config* cfg = callocCheck(1, sizeof *cfg);
    cfg->vals = callocCheck((size_t)CONFIG_SCHEMA_LEN, sizeof *cfg->vals);
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const CfgField* f = &CONFIG_SCHEMA[i];
        char expect[256];
        if (value_parse(f, f->def, &cfg->vals[i], expect, sizeof expect))
            sapo_die("config schema: default %s = '%s' is invalid: expected %s", f->key, f->def, expect);
        cfg->vals[i].origin = dup_string("default");
    }
    return cfg;
}

void config_free(Config* cfg) {
    if (!cfg) return;
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) value_free(&cfg->vals[i]);
    for (int i = 0; i < cfg->n_nodes; i++) value_free(&cfg->nodes[i].v);
    free(cfg->vals);
    free(cfg->nodes);
    free(cfg);
}

static Config* config_copy(const Config* src) {
    Config* cfg = callocCheck(1, sizeof *cfg);
    cfg->vals = callocCheck((size_t)CONFIG_SCHEMA_LEN, sizeof *cfg->vals);
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) value_copy(&cfg->vals[i], &src->vals[i]);
    cfg->cap_nodes = cfg->n_nodes = src->n_nodes;
    cfg->nodes = callocCheck((size_t)(src->n_nodes ? src->n_nodes : 1), sizeof *cfg->nodes);
    for (int i = 0; i < src->n_nodes; i++) {
        cfg->nodes[i].node = src->nodes[i].node;
        cfg->nodes[i].field = src->nodes[i].field;
        value_copy(&cfg->nodes[i].v, &src->nodes[i].v);
    }
    return cfg;
}

/* Makes dst hold src's values and frees src (commits an all-or-nothing load). */
static void config_take(Config* dst, Config* src) {
    Config old = *dst;
    *dst = *src;
    *src = old;
    config_free(src);
}

static const CfgValue* node_value(const Config* cfg, int node, int field) {
    for (int i = 0; i < cfg->n_nodes; i++) {
        if (cfg->nodes[i].node == node && cfg->nodes[i].field == field) return &cfg->nodes[i].v;
    }
    return NULL;
}

/* Stores v (taking its strings) for the whole swarm (node < 0) or for one node. */
static void config_put(Config* cfg, int node, int field, CfgValue* v) {
    CfgValue* slot = NULL;
    if (node < 0) {
        slot = &cfg->vals[field];
    } else {
        slot = (CfgValue*)node_value(cfg, node, field);
        if (!slot) {
            if (cfg->n_nodes == cfg->cap_nodes) {
                cfg->cap_nodes = cfg->cap_nodes ? 2 * cfg->cap_nodes : 8;
                NodeValue* grown = realloc(cfg->nodes, (size_t)cfg->cap_nodes * sizeof *grown);
                if (!grown) sapo_die("out of memory growing the [node.K] overrides");
                cfg->nodes = grown;
            }
            NodeValue* nv = &cfg->nodes[cfg->n_nodes++];
            nv->node = node;
            nv->field = field;
            memset(&nv->v, 0, sizeof nv->v);
            slot = &nv->v;
        }
    }
    value_free(slot);
    *slot = *v;
    v->s = v->origin = NULL;
}

/* ---- getters ------------------------------------------------------------------------- */

/* The schema index of key, which must have type t (or t2); anything else is a bug in the
 * caller, so the program stops. */
static int field_require(const char* key, CfgType t, CfgType t2, const char* getter) {
    int i = field_index(key);
    if (i < 0) sapo_die("%s: no key '%s' in the config schema", getter, key);
    if (CONFIG_SCHEMA[i].type != t && CONFIG_SCHEMA[i].type != t2)
        sapo_die("%s: key '%s' is of type %s", getter, key, type_name(CONFIG_SCHEMA[i].type));
    return i;
}

static const CfgValue* effective(const Config* cfg, int node, int field) {
    const CfgValue* v = node >= 0 ? node_value(cfg, node, field) : NULL;
    return v ? v : &cfg->vals[field];
}

long config_int(const Config* cfg, const char* key) { return config_node_int(cfg, -1, key); }
double config_float(const Config* cfg, const char* key) { return config_node_float(cfg, -1, key); }
int config_bool(const Config* cfg, const char* key) { return config_node_bool(cfg, -1, key); }
const char* config_string(const Config* cfg, const char* key) { return config_node_string(cfg, -1, key); }
const char* config_origin(const Config* cfg, const char* key) { return config_node_origin(cfg, -1, key); }

long config_node_int(const Config* cfg, int node, const char* key) {
    return effective(cfg, node, field_require(key, CFG_INT, CFG_INT, "config_int"))->i;
}
double config_node_float(const Config* cfg, int node, const char* key) {
    return effective(cfg, node, field_require(key, CFG_FLOAT, CFG_FLOAT, "config_float"))->f;
}
int config_node_bool(const Config* cfg, int node, const char* key) {
    return (int)effective(cfg, node, field_require(key, CFG_BOOL, CFG_BOOL, "config_bool"))->i;
}
const char* config_node_string(const Config* cfg, int node, const char* key) {
    return effective(cfg, node, field_require(key, CFG_STRING, CFG_ENUM, "config_string"))->s;
}
int config_enum(const Config* cfg, const char* key) { return config_node_enum(cfg, -1, key); }
int config_node_enum(const Config* cfg, int node, const char* key) {
    int i = field_require(key, CFG_ENUM, CFG_ENUM, "config_enum");
    const char* s = effective(cfg, node, i)->s;
    int k = choice_index(CONFIG_SCHEMA[i].choices, s, strlen(s));
    if (k < 0) sapo_die("config_enum: %s = '%s' is not one of %s", key, s, CONFIG_SCHEMA[i].choices);
    return k;
}
const char* config_node_origin(const Config* cfg, int node, const char* key) {
    int i = field_index(key);
    if (i < 0) sapo_die("config_origin: no key '%s' in the config schema", key);
    return effective(cfg, node, i)->origin;
}

int config_max_node(const Config* cfg) {
    int max = -1;
    for (int i = 0; i < cfg->n_nodes; i++) {
        if (cfg->nodes[i].node > max) max = cfg->nodes[i].node;
    }
    return max;
}

/* ---- loading INI files ------------------------------------------------------------- */

typedef struct {
    int node, field, line;
} SeenKey;

typedef struct LoadState {
    Config* cfg;
    const char* path; /* as shown in messages */
    char* real;       /* resolved path, to catch include cycles */
    const struct LoadState* parent;
    int depth;
    FILE* f;
    int lineno;
    char line[CFG_LINE_MAX + 1]; /* the line last read, for libinih's syntax errors */
    char* err;
    size_t errlen;
    int failed;
    SeenKey* seen; /* keys set by this file, to refuse duplicates */
    int n_seen, cap_seen;
    int base_line;
} LoadState;

static int load_fail(LoadState* st, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int load_fail(LoadState* st, const char* fmt, ...) {
    if (!st->failed && st->err && st->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(st->err, st->errlen, fmt, ap);
        va_end(ap);
        one_line(st->err);
    }
    st->failed = 1;
    return 0; /* what a libinih handler returns on error */
}

/* A [section] header is checked when its line is read, so an unknown or empty section is
 * reported at its own line. */
static void check_section_header(LoadState* st, const char* name, size_t len) {
    char raw[CFG_KEY_MAX], shown[CFG_SHOW_MAX + 8];
    snprintf(raw, sizeof raw, "%.*s", (int)(len < CFG_KEY_MAX - 1 ? len : CFG_KEY_MAX - 1), name);
    show_value(raw, shown, sizeof shown);
    if (len >= 4 && !strncmp(name, "node", 4) && (len == 4 || name[4] == '.')) {
        if (len > 5 && parse_node_index(name + 5, len - 5) >= 0) return;
        load_fail(st, "%s:%d: [%s]: expected [node.K] with K an integer in [0, %d]", st->path, st->lineno, shown,
                  CONFIG_MAX_NODES - 1);
        return;
    }
    if (section_known(name, len)) return;
    char near[CFG_KEY_MAX], all[512];
    if (suggest_section(shown, near, sizeof near)) {
        load_fail(st, "%s:%d: [%s]: unknown section; did you mean [%s]?", st->path, st->lineno, shown, near);
    } else {
        list_sections(all, sizeof all);
        load_fail(st, "%s:%d: [%s]: unknown section; expected one of %s or [node.K]", st->path, st->lineno, shown,
                  all);
    }
}

/* libinih's line reader: one whole line per call, so libinih's line numbers stay ours;
 * refuses lines too long for its buffer (it would split them silently) and NUL bytes. */
static char* load_reader(char* buf, int num, void* stream) {
    LoadState* st = stream;
    if (st->failed) return NULL;
    int n = 0, c = EOF;
    while ((c = getc(st->f)) != EOF) {
        if (c == '\0') {
            load_fail(st, "%s:%d: NUL byte: expected a text file", st->path, st->lineno + 1);
            return NULL;
        }
        if (n >= num - 1) {
            load_fail(st, "%s:%d: line longer than %d characters", st->path, st->lineno + 1, num - 2);
            return NULL;
        }
        buf[n++] = (char)c;
        if (c == '\n') break;
    }
    if (c == EOF && ferror(st->f)) {
        load_fail(st, "%s: cannot read: %s", st->path, strerror(errno));
        return NULL;
    }
    if (n == 0) return NULL;
    buf[n] = '\0';
    st->lineno++;
    snprintf(st->line, sizeof st->line, "%s", buf);
    st->line[strcspn(st->line, "\r\n")] = '\0';

    const char* p = buf;
    if (st->lineno == 1 && !strncmp(p, "\xEF\xBB\xBF", 3)) p += 3;
    while (isspace((unsigned char)*p)) p++;
    const char* close = *p == '[' ? strchr(p + 1, ']') : NULL;
    if (close) check_section_header(st, p + 1, (size_t)(close - p - 1));
    return st->failed ? NULL : buf;
}

static int load_path(Config* cfg, const char* path, const LoadState* parent, const char* include_what, char* err,
                     size_t errlen);

/* `base = FILE`: loads FILE (relative to this file's directory) into the same config now,
 * before any of this file's keys, so this file's values win. */
static int load_base(LoadState* st, const char* value, int lineno) {
    char shown[CFG_SHOW_MAX + 8], what[CFG_SHOW_MAX + 32];
    snprintf(what, sizeof what, "base = '%s'", show_value(value, shown, sizeof shown));
    if (st->base_line)
        return load_fail(st, "%s:%d: %s: duplicate key (first set at %s:%d): expected one base per file", st->path,
                         lineno, what, st->path, st->base_line);
    st->base_line = lineno;
    if (!*value) return load_fail(st, "%s:%d: %s: expected the path of an INI file", st->path, lineno, what);
    const char* slash = strrchr(st->path, '/');
    size_t dirlen = value[0] == '/' || !slash ? 0 : (size_t)(slash - st->path + 1);
    char* path = mallocCheck(dirlen + strlen(value) + 1);
    memcpy(path, st->path, dirlen);
    strcpy(path + dirlen, value);
    char include_what[1024 + sizeof what];
    snprintf(include_what, sizeof include_what, "%s:%d: %s", st->path, lineno, what);
    int rc = load_path(st->cfg, path, st, include_what, st->err, st->errlen);
    free(path);
    if (rc) st->failed = 1; /* the message is already in err */
    return rc ? 0 : 1;
}

static int seen_before(LoadState* st, int node, int field, int lineno) {
    for (int i = 0; i < st->n_seen; i++) {
        if (st->seen[i].node == node && st->seen[i].field == field) return st->seen[i].line;
    }
    if (st->n_seen == st->cap_seen) {
        st->cap_seen = st->cap_seen ? 2 * st->cap_seen : 32;
        SeenKey* grown = realloc(st->seen, (size_t)st->cap_seen * sizeof *grown);
        if (!grown) sapo_die("out of memory reading %s", st->path);
        st->seen = grown;
    }
    st->seen[st->n_seen++] = (SeenKey){node, field, lineno};
    return 0;
}

/* Wording shared by the file and command-line paths for a key the schema lacks. */
static void describe_unknown_key(const char* key, char* buf, size_t n) {
    const char* near = suggest_key(key);
    if (near) {
        snprintf(buf, n, "unknown key %s; did you mean %s?", key, near);
        return;
    }
    int sec = section_length(key);
    char keys[1024];
    if (key[sec] == '.' && section_known(key, (size_t)sec)) {
        list_section_keys(key, (size_t)sec, keys, sizeof keys);
        snprintf(buf, n, "unknown key %s; expected one of %s", key, keys);
    } else {
        list_sections(keys, sizeof keys);
        snprintf(buf, n, "unknown key %s; expected section.key with a section among %s", key, keys);
    }
}

static int load_handler(void* user, const char* section, const char* name, const char* value, int lineno) {
    LoadState* st = user;
    if (st->failed) return 0;
    if (!*name)
        return load_fail(st, "%s:%d: malformed line '%s': expected 'key = value' with a key", st->path, lineno,
                         show_value(st->line, (char[CFG_SHOW_MAX + 8]){0}, CFG_SHOW_MAX + 8));
    char shown[CFG_SHOW_MAX + 8], what[3 * CFG_KEY_MAX], msg[1536];
    show_value(value, shown, sizeof shown);
    if (!*section) {
        if (!strcmp(name, "base")) return load_base(st, value, lineno);
        const char* near = suggest_key(name);
        char hint[CFG_KEY_MAX + 32] = "";
        if (near) snprintf(hint, sizeof hint, " (did you mean %s?)", near);
        return load_fail(st,
                         "%s:%d: %s = '%s': key before any [section]: expected only 'base = FILE' there, or the "
                         "key inside its section%s",
                         st->path, lineno, name, shown, hint);
    }
    int node = -1;
    char key[CFG_KEY_MAX];
    if (!strncmp(section, "node.", 5)) {
        node = parse_node_index(section + 5, strlen(section + 5));
        if (node < 0) /* check_section_header refused this already; kept for safety */
            return load_fail(st, "%s:%d: [%s]: expected [node.K] with K an integer in [0, %d]", st->path, lineno,
                             section, CONFIG_MAX_NODES - 1);
        snprintf(key, sizeof key, "%s", name);
        snprintf(what, sizeof what, "[%s] %s = '%s'", section, name, shown);
    } else {
        snprintf(key, sizeof key, "%s.%s", section, name);
        snprintf(what, sizeof what, "%s = '%s'", key, shown);
    }
    int fi = field_index(key);
    if (fi < 0) {
        describe_unknown_key(key, msg, sizeof msg);
        if (node >= 0 && !strchr(key, '.'))
            return load_fail(st, "%s:%d: %s: %s (keys in [node.K] are written section.key)", st->path, lineno, what,
                             msg);
        return load_fail(st, "%s:%d: %s: %s", st->path, lineno, what, msg);
    }
    const CfgField* f = &CONFIG_SCHEMA[fi];
    if (node >= 0 && !f->per_node)
        return load_fail(st, "%s:%d: %s: %s cannot be overridden per node: expected it in [%.*s] for the whole swarm",
                         st->path, lineno, what, f->key, section_length(f->key), f->key);
    int first = seen_before(st, node, fi, lineno);
    if (first)
        return load_fail(st, "%s:%d: %s: duplicate key (first set at %s:%d): expected each key once per file",
                         st->path, lineno, what, st->path, first);
    CfgValue v = {0};
    char expect[512];
    if (value_parse(f, value, &v, expect, sizeof expect))
        return load_fail(st, "%s:%d: %s: expected %s", st->path, lineno, what, expect);
    snprintf(msg, sizeof msg, "%s:%d", st->path, lineno);
    v.origin = dup_string(msg);
    config_put(st->cfg, node, fi, &v);
    return 1;
}

/* Loads one file into cfg. parent is the including file's state (NULL at the top);
 * include_what ("FILE:LINE: base = 'x'") prefixes errors about opening an included file. */
static int load_path(Config* cfg, const char* path, const LoadState* parent, const char* include_what, char* err,
                     size_t errlen) {
    FILE* f = fopen(path, "r");
    if (!f) {
        if (parent) return set_error(err, errlen, "%s: cannot open '%s': %s", include_what, path, strerror(errno));
        return set_error(err, errlen, "cannot open config file '%s': %s", path, strerror(errno));
    }
    char* real = realpath(path, NULL);
    if (!real) real = dup_string(path);
    int depth = parent ? parent->depth + 1 : 0;
    for (const LoadState* p = parent; p; p = p->parent) {
        if (strcmp(p->real, real)) continue;
        /* Name the whole loop, outermost file first. */
        const LoadState* chain[CFG_INCLUDE_DEPTH + 1];
        int n = 0;
        for (const LoadState* q = parent; q && n <= CFG_INCLUDE_DEPTH; q = q->parent) chain[n++] = q;
        char loop[2048];
        size_t used = 0;
        loop[0] = '\0';
        for (int i = n - 1; i >= 0; i--) {
            int w = snprintf(loop + used, sizeof loop - used, "%s -> ", chain[i]->path);
            if (w > 0 && (size_t)w < sizeof loop - used) used += (size_t)w;
        }
        snprintf(loop + used, sizeof loop - used, "%s", path);
        fclose(f);
        free(real);
        return set_error(err, errlen, "%s: include cycle %s: expected a chain of base files without repeats",
                         include_what, loop);
    }
    if (depth > CFG_INCLUDE_DEPTH) {
        fclose(f);
        free(real);
        return set_error(err, errlen, "%s: more than %d nested base files: expected a shorter chain", include_what,
                         CFG_INCLUDE_DEPTH);
    }

    LoadState* st = callocCheck(1, sizeof *st);
    st->cfg = cfg;
    st->path = path;
    st->real = real;
    st->parent = parent;
    st->depth = depth;
    st->f = f;
    st->err = err;
    st->errlen = errlen;
    /* libinih's run-time settings (Debian builds them as variables): indented lines are
     * ordinary lines rather than continuations, the first error stops the parse, and lines
     * up to CFG_LINE_MAX fit its (stack) buffer. */
    ini_allow_multiline = false;
    ini_stop_on_first_error = true;
    ini_allow_no_value = false;
    ini_use_stack = true;
    ini_max_line = CFG_LINE_MAX;
    int rc = ini_parse_stream(load_reader, st, load_handler, st);
    if (!st->failed && rc > 0)
        load_fail(st, "%s:%d: malformed line '%s': expected '[section]', 'key = value' or a comment", path, rc,
                  show_value(st->line, (char[CFG_SHOW_MAX + 8]){0}, CFG_SHOW_MAX + 8));
    else if (!st->failed && rc < 0)
        load_fail(st, "%s: libinih failed (code %d)", path, rc);
    int failed = st->failed;
    fclose(f);
    free(st->seen);
    free(real);
    free(st);
    return failed ? -1 : 0;
}

int config_load_file(Config* cfg, const char* path, char* err, size_t errlen) {
    Config* work = config_copy(cfg);
    if (load_path(work, path, NULL, NULL, err, errlen)) {
        config_free(work);
        return -1;
    }
    config_take(cfg, work);
    return 0;
}

/* ---- command-line overrides ------------------------------------------------------------ */

static char* trim(char* s) {
    while (isspace((unsigned char)*s)) s++;
    char* e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    return s;
}

int config_set_override(Config* cfg, const char* assignment, char* err, size_t errlen) {
    char* copy = dup_string(assignment);
    char* text = trim(copy);
    char shown[CFG_SHOW_MAX + 8], msg[1536];
    show_value(text, shown, sizeof shown);
    char* eq = strchr(text, '=');
    int rc = -1;
    if (!eq) {
        set_error(err, errlen, "command line: '%s': expected section.key=value", shown);
        goto done;
    }
    *eq = '\0';
    char* key = trim(text);
    char* value = trim(eq + 1);
    int node = -1;
    if (!strncmp(key, "node.", 5)) {
        char* dot = strchr(key + 5, '.');
        node = dot ? parse_node_index(key + 5, (size_t)(dot - key - 5)) : -1;
        if (node < 0) {
            set_error(err, errlen, "command line: %s: expected node.K.section.key=value with K an integer in [0, %d]",
                      shown, CONFIG_MAX_NODES - 1);
            goto done;
        }
        key = dot + 1;
    }
    int fi = field_index(key);
    if (fi < 0) {
        describe_unknown_key(key, msg, sizeof msg);
        set_error(err, errlen, "command line: %s: %s", shown, msg);
        goto done;
    }
    const CfgField* f = &CONFIG_SCHEMA[fi];
    if (node >= 0 && !f->per_node) {
        set_error(err, errlen, "command line: %s: %s cannot be overridden per node: expected %s=value for the whole swarm",
                  shown, f->key, f->key);
        goto done;
    }
    CfgValue v = {0};
    if (value_parse(f, value, &v, msg, sizeof msg)) {
        set_error(err, errlen, "command line: %s: expected %s", shown, msg);
        goto done;
    }
    v.origin = dup_string("command line");
    config_put(cfg, node, fi, &v);
    rc = 0;
done:
    if (rc && err && errlen) one_line(err);
    free(copy);
    return rc;
}

/* ---- rules across keys ------------------------------------------------------------------- */

/* model.d_model must split evenly into model.n_head heads, for the swarm and each node. */
static int check_heads(const Config* cfg, int node, char* err, size_t errlen) {
    int fd = field_index("model.d_model"), fh = field_index("model.n_head");
    const CfgValue* d = effective(cfg, node, fd);
    const CfgValue* h = effective(cfg, node, fh);
    if (d->i % h->i == 0) return 0;
    /* Lead with a place the user wrote, not "default". */
    const char* lead = strcmp(d->origin, "default") ? d->origin : h->origin;
    char who[32] = "";
    if (node >= 0) snprintf(who, sizeof who, "[node.%d] ", node);
    return set_error(err, errlen,
                     "%s: %smodel.d_model = %ld (%s) is not divisible by model.n_head = %ld (%s): expected "
                     "model.d_model to be a multiple of model.n_head",
                     lead, who, d->i, d->origin, h->i, h->origin);
}

int config_validate(const Config* cfg, char* err, size_t errlen) {
    if (check_heads(cfg, -1, err, errlen)) return -1;
    int fd = field_index("model.d_model"), fh = field_index("model.n_head");
    for (int node = 0; node <= config_max_node(cfg); node++) {
        if (!node_value(cfg, node, fd) && !node_value(cfg, node, fh)) continue;
        if (check_heads(cfg, node, err, errlen)) return -1;
    }
    return 0;
}

int config_load_all(Config* cfg, const char* path, int n_overrides, char* const* overrides, char* err,
                    size_t errlen) {
    if (path && config_load_file(cfg, path, err, errlen)) return -1;
    for (int i = 0; i < n_overrides; i++) {
        if (config_set_override(cfg, overrides[i], err, errlen)) return -1;
    }
    return config_validate(cfg, err, errlen);
}

/* ---- output --------------------------------------------------------------------------------- */

static int compare_node_values(const void* a, const void* b) {
    const NodeValue* x = *(const NodeValue* const*)a;
    const NodeValue* y = *(const NodeValue* const*)b;
    if (x->node != y->node) return x->node < y->node ? -1 : 1;
    return x->field < y->field ? -1 : x->field > y->field;
}

/* "key = value", with where the value came from as a comment when it is not the default
 * (on a line of its own when the value is empty: libinih takes ';' as a comment only after
 * a space inside the value, and an empty value has none). */
static void write_line(FILE* out, const char* key, const CfgField* f, const CfgValue* v) {
    char text[CFG_LINE_MAX], line[CFG_LINE_MAX + CFG_KEY_MAX];
    format_value(f, v, text, sizeof text);
    if (!*text && !strcmp(v->origin, "default")) {
        fprintf(out, "%s =\n", key);
    } else if (!strcmp(v->origin, "default")) {
        fprintf(out, "%s = %s\n", key, text);
    } else if (!*text) {
        fprintf(out, "; %s\n%s =\n", v->origin, key);
    } else {
        snprintf(line, sizeof line, "%s = %s", key, text);
        fprintf(out, "%-32s ; %s\n", line, v->origin);
    }
}

void config_write(const Config* cfg, FILE* out) {
    fprintf(out, "# sapo configuration, every key resolved (loads back to these values)\n");
    int prev_len = -1;
    const char* prev = "";
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const CfgField* f = &CONFIG_SCHEMA[i];
        int len = section_length(f->key);
        if (len != prev_len || strncmp(prev, f->key, (size_t)len)) {
            fprintf(out, "%s[%.*s]\n", i ? "\n" : "", len, f->key);
            prev = f->key;
            prev_len = len;
        }
        write_line(out, f->key + len + 1, f, &cfg->vals[i]);
    }
    if (!cfg->n_nodes) return;
    const NodeValue** order = mallocCheck((size_t)cfg->n_nodes * sizeof *order);
    for (int i = 0; i < cfg->n_nodes; i++) order[i] = &cfg->nodes[i];
    qsort(order, (size_t)cfg->n_nodes, sizeof *order, compare_node_values);
    for (int i = 0; i < cfg->n_nodes; i++) {
        if (i == 0 || order[i]->node != order[i - 1]->node) fprintf(out, "\n[node.%d]\n", order[i]->node);
        write_line(out, CONFIG_SCHEMA[order[i]->field].key, &CONFIG_SCHEMA[order[i]->field], &order[i]->v);
    }
    free(order);
}

void config_print_schema(FILE* out) {
    int wkey = (int)strlen("# key"), wdef = (int)strlen("default"), wrange = (int)strlen("range");
    char buf[256];
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const CfgField* f = &CONFIG_SCHEMA[i];
        int n = (int)strlen(f->key);
        if (n > wkey) wkey = n;
        n = *f->def ? (int)strlen(f->def) : 2;
        if (n > wdef) wdef = n;
        format_range(f, buf, sizeof buf);
        n = (int)strlen(buf);
        if (n > wrange) wrange = n;
    }
    fprintf(out, "# config keys: [section] key = value in an INI file, section.key=value on the command line\n");
    fprintf(out, "# keys with node = yes may differ per node: [node.K] section.key = value, or node.K.section.key=value\n");
    fprintf(out, "%-*s  %-6s  %-*s  %-*s  %-4s  %s\n", wkey, "# key", "type", wdef, "default", wrange, "range", "node",
            "help");
    for (int i = 0; i < CONFIG_SCHEMA_LEN; i++) {
        const CfgField* f = &CONFIG_SCHEMA[i];
        format_range(f, buf, sizeof buf);
        fprintf(out, "%-*s  %-6s  %-*s  %-*s  %-4s  %s\n", wkey, f->key, type_name(f->type), wdef,
                *f->def ? f->def : "\"\"", wrange, buf, f->per_node ? "yes" : "-", f->help);
    }
}
