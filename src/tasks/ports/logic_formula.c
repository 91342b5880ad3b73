/* Propositional formulas of the propositional_logic task (see logic_formula.h). */
#include "tasks/ports/logic_formula.h"

#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "tasks/pyemu/pyunicode.h"

static void* lf_grow(void* p, size_t elem, int* cap, int need) {
    if (need <= *cap) return p;
    int c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void* q = realloc(p, (size_t)c * elem);
    if (!q) sapo_die("out of memory growing a formula arena to %d entries", c);
    *cap = c;
    return q;
}

void lf_init(LogicForm* f) { memset(f, 0, sizeof *f); }

void lf_free(LogicForm* f) {
    free(f->nodes);
    free(f->pool);
    free(f->name_off);
    free(f->name_len);
    free(f->hash);
    memset(f, 0, sizeof *f);
}

static uint64_t lf_hash_name(const uint32_t* cps, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= cps[i];
        h *= 1099511628211ull;
    }
    return h;
}

static int lf_name_equals(const LogicForm* f, int id, const uint32_t* cps, size_t n) {
    return f->name_len[id] == n && !memcmp(f->pool + f->name_off[id], cps, n * sizeof *cps);
}

static void lf_rehash(LogicForm* f, int cap) {
    free(f->hash);
    f->hash = mallocCheck((size_t)cap * sizeof *f->hash);
    f->hash_cap = cap;
    for (int i = 0; i < cap; i++) f->hash[i] = -1;
    for (int id = 0; id < f->n_vars; id++) {
        size_t h = (size_t)(lf_hash_name(f->pool + f->name_off[id], f->name_len[id]) & (uint64_t)(cap - 1));
        while (f->hash[h] >= 0) h = (h + 1) & (size_t)(cap - 1);
        f->hash[h] = id;
    }
}

/* Interned id of a variable name. */
static int lf_var_id(LogicForm* f, const uint32_t* cps, size_t n) {
    if (2 * (f->n_vars + 1) > f->hash_cap) lf_rehash(f, f->hash_cap ? 2 * f->hash_cap : 64);
    size_t mask = (size_t)(f->hash_cap - 1);
    size_t h = (size_t)(lf_hash_name(cps, n) & mask);
    while (f->hash[h] >= 0) {
        if (lf_name_equals(f, f->hash[h], cps, n)) return f->hash[h];
        h = (h + 1) & mask;
    }
    int id = f->n_vars;
    if (id + 1 > f->cap_vars) { /* both name arrays share one capacity */
        int cap = f->cap_vars;
        f->name_off = lf_grow(f->name_off, sizeof *f->name_off, &cap, id + 1);
        cap = f->cap_vars;
        f->name_len = lf_grow(f->name_len, sizeof *f->name_len, &cap, id + 1);
        f->cap_vars = cap;
    }
    if (f->pool_len + n > f->pool_cap) {
        size_t c = f->pool_cap ? f->pool_cap : 256;
        while (c < f->pool_len + n) c *= 2;
        uint32_t* p = realloc(f->pool, c * sizeof *p);
        if (!p) sapo_die("out of memory for formula variable names");
        f->pool = p;
        f->pool_cap = c;
    }
    if (n) memcpy(f->pool + f->pool_len, cps, n * sizeof *cps);
    f->name_off[id] = f->pool_len;
    f->name_len[id] = n;
    f->pool_len += n;
    f->n_vars++;
    f->hash[h] = id;
    return id;
}

int lf_node(LogicForm* f, int op, int a, int b) {
    f->nodes = lf_grow(f->nodes, sizeof *f->nodes, &f->cap_nodes, f->n_nodes + 1);
    LfNode* nd = &f->nodes[f->n_nodes];
    nd->op = op;
    nd->a = a;
    nd->b = op == LF_NOT ? -1 : b;
    return f->n_nodes++;
}

int lf_var(LogicForm* f, const uint32_t* cps, size_t n) { return lf_node(f, LF_VAR, lf_var_id(f, cps, n), -1); }

int lf_is_space(uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
           c == 0x3000;
}

/* ---- parsing: the package's parse_expr, step for step -------------------------------- */

/* Lowest precedence first: the package splits at the rightmost top-level ↔, else →, else
 * ∨, else ∧. */
static const uint32_t LF_SPLIT_CPS[4] = {LF_CP_IFF, LF_CP_IMPLIES, LF_CP_OR, LF_CP_AND};
static const int LF_SPLIT_OPS[4] = {LF_IFF, LF_IMPLIES, LF_OR, LF_AND};

static int lf_parse_range(LogicForm* f, const uint32_t* s, size_t lo, size_t hi, int depth, int* root) {
    if (depth > LF_MAX_PARSE_DEPTH) return LF_EDEPTH;
    while (lo < hi && lf_is_space(s[lo])) lo++;
    while (hi > lo && lf_is_space(s[hi - 1])) hi--;
    if (lo == hi) return LF_EVALUE;

    /* "(...)" around the whole expression is dropped when the inner parentheses never close
     * more than they opened and end balanced. */
    if (s[lo] == '(' && s[hi - 1] == ')') {
        long level = 0;
        int valid = 1;
        for (size_t i = lo + 1; i + 1 < hi; i++) {
            if (s[i] == '(') {
                level++;
            } else if (s[i] == ')') {
                if (--level < 0) {
                    valid = 0;
                    break;
                }
            }
        }
        if (level == 0 && valid) return lf_parse_range(f, s, lo + 1, hi - 1, depth + 1, root);
    }

    /* One right-to-left pass finds, for each operator, its rightmost occurrence at paren
     * level 0 (the level sequence is the same for every operator the package scans for). */
    size_t found[4];
    int have[4] = {0, 0, 0, 0};
    long level = 0;
    for (size_t i = hi; i-- > lo;) {
        uint32_t c = s[i];
        if (c == ')') {
            level++;
        } else if (c == '(') {
            level--;
        } else if (level == 0) {
            for (int k = 0; k < 4; k++) {
                if (!have[k] && c == LF_SPLIT_CPS[k]) {
                    have[k] = 1;
                    found[k] = i;
                }
            }
        }
    }
    for (int k = 0; k < 4; k++) {
        if (!have[k]) continue;
        int left, right, rc;
        if ((rc = lf_parse_range(f, s, lo, found[k], depth + 1, &left))) return rc;
        if ((rc = lf_parse_range(f, s, found[k] + 1, hi, depth + 1, &right))) return rc;
        *root = lf_node(f, LF_SPLIT_OPS[k], left, right);
        return LF_OK;
    }

    if (s[lo] == LF_CP_NOT) {
        int sub, rc;
        if ((rc = lf_parse_range(f, s, lo + 1, hi, depth + 1, &sub))) return rc;
        *root = lf_node(f, LF_NOT, sub, -1);
        return LF_OK;
    }
    /* Anything else is one variable, whatever it contains ("P Q", "x", "(P"). */
    *root = lf_var(f, s + lo, hi - lo);
    return LF_OK;
}

int lf_parse(LogicForm* f, const uint32_t* cps, size_t n, int* root) {
    return lf_parse_range(f, cps, 0, n, 1, root);
}

/* ---- printing, simplifying, measuring (generated formulas: shallow) ------------------ */

static const uint32_t LF_OP_CPS[5] = {LF_CP_AND, LF_CP_OR, LF_CP_NOT, LF_CP_IMPLIES, LF_CP_IFF};

void lf_format(const LogicForm* f, int root, TextBuf* out) {
    const LfNode* nd = &f->nodes[root];
    if (nd->op == LF_VAR) {
        for (size_t i = 0; i < f->name_len[nd->a]; i++) textbuf_append_codepoint(out, f->pool[f->name_off[nd->a] + i]);
    } else if (nd->op == LF_NOT) {
        textbuf_append_codepoint(out, LF_CP_NOT);
        lf_format(f, nd->a, out);
    } else {
        textbuf_append_char(out, '(');
        lf_format(f, nd->a, out);
        textbuf_append_char(out, ' ');
        textbuf_append_codepoint(out, LF_OP_CPS[nd->op]);
        textbuf_append_char(out, ' ');
        lf_format(f, nd->b, out);
        textbuf_append_char(out, ')');
    }
}

int lf_simplify(LogicForm* f, int root) {
    LfNode nd = f->nodes[root];
    if (nd.op == LF_VAR) return root;
    int left = lf_simplify(f, nd.a);
    if (nd.op == LF_NOT) {
        if (f->nodes[left].op == LF_NOT) return f->nodes[left].a;
        return lf_node(f, LF_NOT, left, -1);
    }
    int right = lf_simplify(f, nd.b);
    /* The package compares the simplified sides with ==, which for its Expression objects
     * is identity: the same node. */
    if ((nd.op == LF_AND || nd.op == LF_OR) && left == right) return left;
    if (nd.op == LF_IMPLIES) {
        int neg = lf_node(f, LF_NOT, left, -1);
        return lf_simplify(f, lf_node(f, LF_OR, neg, right));
    }
    return lf_node(f, nd.op, left, right);
}

int lf_count_nodes(const LogicForm* f, int root) {
    const LfNode* nd = &f->nodes[root];
    if (nd->op == LF_VAR) return 1;
    if (nd->op == LF_NOT) return 1 + lf_count_nodes(f, nd->a);
    return 1 + lf_count_nodes(f, nd->a) + lf_count_nodes(f, nd->b);
}

/* ---- truth tables ---------------------------------------------------------------------- */

int lf_entails(const LogicForm* f, const int* premises, int n_premises, int conclusion, int max_vars) {
    int n = f->n_nodes;
    unsigned char* used = calloc((size_t)n + 1, 1);
    int* stack = mallocCheck(((size_t)n + 1) * sizeof *stack);
    int* var_slot = mallocCheck(((size_t)f->n_vars + 1) * sizeof *var_slot);
    if (!used) sapo_die("out of memory");
    for (int i = 0; i < f->n_vars; i++) var_slot[i] = -1;

    /* Mark the nodes reachable from the formulas involved; number their variables. */
    int sp = 0, nv = 0;
    for (int i = 0; i <= n_premises; i++) {
        int r = i < n_premises ? premises[i] : conclusion;
        if (!used[r]) {
            used[r] = 1;
            stack[sp++] = r;
        }
    }
    while (sp) {
        const LfNode* nd = &f->nodes[stack[--sp]];
        if (nd->op == LF_VAR) {
            if (var_slot[nd->a] < 0) var_slot[nd->a] = nv++;
            continue;
        }
        int kids[2] = {nd->a, nd->op == LF_NOT ? -1 : nd->b};
        for (int k = 0; k < 2; k++) {
            if (kids[k] >= 0 && !used[kids[k]]) {
                used[kids[k]] = 1;
                stack[sp++] = kids[k];
            }
        }
    }
    int result = 1;
    if (nv > max_vars) {
        result = LF_ETOOBIG;
    } else {
        /* Children precede parents in the arena, so one pass in index order evaluates. */
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (used[i]) stack[m++] = i;
        }
        uint64_t* val = mallocCheck(((size_t)n + 1) * sizeof *val);
        static const uint64_t low_patterns[6] = {0xAAAAAAAAAAAAAAAAull, 0xCCCCCCCCCCCCCCCCull, 0xF0F0F0F0F0F0F0F0ull,
                                                 0xFF00FF00FF00FF00ull, 0xFFFF0000FFFF0000ull, 0xFFFFFFFF00000000ull};
        uint64_t mask = nv >= 6 ? ~0ull : ((1ull << (1u << nv)) - 1);
        uint64_t blocks = nv > 6 ? 1ull << (nv - 6) : 1;
        for (uint64_t blk = 0; blk < blocks && result == 1; blk++) {
            for (int k = 0; k < m; k++) {
                int i = stack[k];
                const LfNode* nd = &f->nodes[i];
                uint64_t v;
                switch (nd->op) {
                case LF_VAR: {
                    int j = var_slot[nd->a];
                    v = j < 6 ? low_patterns[j] : (((blk >> (j - 6)) & 1) ? ~0ull : 0);
                    break;
                }
                case LF_NOT: v = ~val[nd->a]; break;
                case LF_AND: v = val[nd->a] & val[nd->b]; break;
                case LF_OR: v = val[nd->a] | val[nd->b]; break;
                case LF_IMPLIES: v = ~val[nd->a] | val[nd->b]; break;
                default: v = ~(val[nd->a] ^ val[nd->b]); break; /* LF_IFF */
                }
                val[i] = v;
            }
            uint64_t bad = mask & ~val[conclusion];
            for (int p = 0; p < n_premises; p++) bad &= val[premises[p]];
            if (bad) result = 0;
        }
        free(val);
    }
    free(used);
    free(stack);
    free(var_slot);
    return result;
}

/* ---- text ------------------------------------------------------------------------------- */

uint32_t* lf_decode_utf8(const char* s, size_t len, size_t* n_out) {
    uint32_t* out = mallocCheck((len + 1) * sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < len;) out[n++] = pyu_next(s, len, &i);
    *n_out = n;
    return out;
}
